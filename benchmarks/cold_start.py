"""Time to the first map of the first and the second visitor of a freshly started explorer server.

    python -m benchmarks.cold_start --start launch        # started as `make app` / elmo-explorer start it
    python -m benchmarks.cold_start --start streamlit     # `streamlit run app/streamlit_app.py`, no launcher
    python -m benchmarks.cold_start --settle 20 --rounds 3

Each round starts a new server on a free local port (the environment passed through, with
ELMO_EXPLORER_DEVICE=cpu unless set), waits for its health check, then ``--settle`` seconds (the time an operator
leaves between starting the server and the class), then opens the default page as one visitor (a
``benchmarks.load.Session``: the page's GET, then Streamlit's websocket protocol; timed from the GET to the end
of the page's run, the map sent), checks that it drew the map, closes it and opens a second visitor the same way.
What a browser adds (loading the page's JavaScript, drawing): ``benchmarks/first_map.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

from benchmarks.load import ROOT, Session

COMMANDS = {
    "launch": [sys.executable, "-m", "app.launch"],
    "streamlit": [sys.executable, "-m", "streamlit", "run", "app/streamlit_app.py", "--server.headless", "true"],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float) -> float:
    """Seconds from now until the server answers its health check."""
    begin = time.monotonic()
    while time.monotonic() - begin < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.read() == b"ok":
                    return time.monotonic() - begin
        except OSError:
            time.sleep(0.2)
    raise TimeoutError("the server did not answer its health check")


async def visit(url: str, timeout: float) -> float:
    session = Session(url, timeout)
    begin = time.perf_counter()
    try:
        await session.open("")
        seconds = time.perf_counter() - begin
        problems = session.check_map()
        if problems or session.page.map_rows is None:
            raise RuntimeError(f"the first page drew no map: {problems}")
        return seconds
    finally:
        await session.close()


def one_round(start: str, settle: float, timeout: float) -> tuple[float, float, float]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "ELMO_EXPLORER_DEVICE": os.environ.get("ELMO_EXPLORER_DEVICE", "cpu")}
    command = [*COMMANDS[start], "--server.port", str(port), "--server.address", "127.0.0.1"]
    command += ["--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        healthy = wait_healthy(url, proc, timeout)
        time.sleep(settle)
        first = asyncio.run(visit(url, timeout))
        second = asyncio.run(visit(url, timeout))
        return healthy, first, second
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--start", choices=sorted(COMMANDS), default="launch")
    parser.add_argument("--settle", type=float, default=15.0, help="seconds between health and the first visitor")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args()
    rows = []
    for r in range(args.rounds):
        healthy, first, second = one_round(args.start, args.settle, args.timeout)
        load = os.getloadavg()[0]
        print(
            f"round {r + 1}: healthy after {healthy:.1f} s; first visitor {first:.2f} s, second {second:.2f} s "
            f"(load {load:.1f})",
            flush=True,
        )
        rows.append((first, second))
    firsts, seconds = [f for f, _ in rows], [s for _, s in rows]
    print(
        f"{args.start}, settle {args.settle:g} s: first visitor median {statistics.median(firsts):.2f} s, "
        f"second {statistics.median(seconds):.2f} s ({args.rounds} rounds)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

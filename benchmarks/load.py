"""Load test of the explorer's server memory: a real ``streamlit run`` server on loopback and N concurrent
websocket sessions (Streamlit's own protocol, as a browser tab speaks it) that work through M sentence sets;
prints the server process's RSS every few sets, its peak and its final value.

    python benchmarks/load.py                      # 8 sessions, 100 sets of 60 sentences, default model
    python benchmarks/load.py --sessions 8 --sets 100 --sentences 60 --seconds 600

Loopback only (127.0.0.1, a free port), nothing downloaded. Bounded in count (--sets, --sessions <= 32)
and time (--seconds: sessions stop taking new sets after it; the server is stopped at the end in any case).
Each session types one set after another into its text box (the app suggests the word), as one user who
keeps pasting new sentences; the sets are drawn from the first 3,000 sentences of the reference corpus (assets/reference/) around frequent words
(seeded, so runs are comparable). Extra environment for the server (e.g. ELMO_EXPLORER_SESSION_MB) is passed
through.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rss_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of process ``pid`` in MiB, from /proc/PID/status."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":")
                fields[key] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


def sentence_sets(count: int, size: int, seed: int = 0) -> list[str]:
    """``count`` texts of ``size`` reference sentences that contain a frequent (non-stop) word."""
    from app.explore import _STOPWORDS
    from elmo_core.reference import ReferenceCorpus
    lines = [ln.strip() for ln in ReferenceCorpus.load().sentences[:3000]
             if 5 <= len(ln.split()) <= 40]
    counts = collections.Counter(w.lower() for ln in lines for w in set(ln.split()) if w.isalpha() and len(w) > 3)
    words = [w for w, n in counts.most_common(600) if n >= size and w not in _STOPWORDS][:150]
    rng = random.Random(seed)
    out = []
    for i in range(count):
        pattern = re.compile(rf"(?<!\w){re.escape(words[i % len(words)])}(?!\w)", re.IGNORECASE)
        pool = [ln for ln in lines if pattern.search(ln)]
        out.append("\n".join(rng.sample(pool, min(size, len(pool)))))
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, log: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), ELMO_EXPLORER_UMAP_WARMUP=os.environ.get("ELMO_EXPLORER_UMAP_WARMUP", "0"),
               ELMO_EXPLORER_DEVICE=os.environ.get("ELMO_EXPLORER_DEVICE", "cpu"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app/streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.5)
    stop_server(proc)
    raise SystemExit("the server did not answer /_stcore/health within 120 s")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


class Session:
    """One browser-like session over Streamlit's websocket protocol (protobuf BackMsg / ForwardMsg)."""

    def __init__(self, url: str):
        self.url = url
        self.ws = None
        self.widget_ids: dict[str, str] = {}  # user key -> widget id, from the page's elements
        self.exceptions: list[str] = []
        self.markdown: list[str] = []  # the last run's markdown bodies

    async def __aenter__(self) -> "Session":
        import websockets
        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None,
                                           open_timeout=60, ping_interval=None)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()

    async def run(self, widgets: dict[str, str] | None = None, timeout: float = 300) -> None:
        """Rerun the page with these text widget values (by user key) and wait until the run finished."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = ""
        for key, value in (widgets or {}).items():
            w = state.widget_states.widgets.add()
            w.id = self.widget_ids[key]
            w.string_value = value
        self.markdown = []
        await self.ws.send(msg.SerializeToString())
        await self._until_finished(timeout)

    async def _until_finished(self, timeout: float) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        deadline = time.monotonic() + timeout
        while True:
            data = await asyncio.wait_for(self.ws.recv(), max(1.0, deadline - time.monotonic()))
            fwd = ForwardMsg()
            fwd.ParseFromString(data)
            kind = fwd.WhichOneof("type")
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                which = element.WhichOneof("type")
                if which == "exception":
                    self.exceptions.append(element.exception.message)
                elif which == "markdown":
                    self.markdown.append(element.markdown.body)
                widget = getattr(element, which, None)
                widget_id = getattr(widget, "id", "") if widget is not None else ""
                if isinstance(widget_id, str) and widget_id.startswith("$$ID"):
                    self.widget_ids[widget_id.rsplit("-", 1)[-1]] = widget_id
            elif kind == "script_finished":
                return


async def drive(args, url: str, sets: list[str], pid: int) -> tuple[int, list[str]]:
    queue: asyncio.Queue = asyncio.Queue()
    for item in enumerate(sets):
        queue.put_nowait(item)
    done, errors, t0 = [0], [], time.monotonic()

    async def one(index: int) -> None:
        try:
            async with Session(url) as s:
                await s.run(timeout=args.timeout)
                while time.monotonic() - t0 < args.seconds and not queue.empty():
                    number, text = queue.get_nowait()
                    await s.run({"sentences": text}, timeout=args.timeout)
                    if s.exceptions:
                        errors.append(f"session {index}, set {number}: {s.exceptions[-1][:200]}")
                        s.exceptions.clear()
                    elif not any("occurrence(s)**" in m for m in s.markdown):
                        errors.append(f"session {index}, set {number}: the page showed no occurrences")
                    done[0] += 1
                    if done[0] % 10 == 0:
                        print(f"  {done[0]:4d} sets  {time.monotonic() - t0:6.0f} s  server RSS "
                              f"{rss_mb(pid)[0]:,.0f} MiB", flush=True)
        except Exception as err:  # one broken session must not hide the others' figures
            errors.append(f"session {index}: {type(err).__name__}: {err}")

    await asyncio.gather(*(one(i) for i in range(args.sessions)))
    return done[0], errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--sets", type=int, default=100, help="sentence sets in all, shared out to the sessions")
    parser.add_argument("--sentences", type=int, default=60, help="sentences per set")
    parser.add_argument("--seconds", type=float, default=600, help="stop handing out sets after this long")
    parser.add_argument("--timeout", type=float, default=300, help="longest wait for one page run")
    args = parser.parse_args()
    if not 1 <= args.sessions <= 32 or not 1 <= args.sets <= 1000:
        parser.error("--sessions must be 1..32 and --sets 1..1000")
    sets = sentence_sets(args.sets, args.sentences)
    port = _free_port()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"elmo-load-{port}.log"
    server = start_server(port, log)
    try:
        start, _ = rss_mb(server.pid)
        print(f"{args.sessions} sessions, {len(sets)} sets of {args.sentences} sentences; server RSS after start "
              f"{start:,.0f} MiB", flush=True)
        t0 = time.monotonic()
        done, errors = asyncio.run(drive(args, f"ws://127.0.0.1:{port}/_stcore/stream", sets, server.pid))
        elapsed = time.monotonic() - t0
        time.sleep(2)  # let the last runs' garbage go
        final, peak = rss_mb(server.pid)
    finally:
        stop_server(server)
    print(f"done: {done} sets in {elapsed:.0f} s, {len(errors)} errors (server log: {log})")
    for e in errors[:5]:
        print("  error:", e)
    print(f"server RSS: start {start:,.0f} MiB, peak {peak:,.0f} MiB, final {final:,.0f} MiB (sessions closed)")
    return 1 if errors or done < len(sets) and elapsed < args.seconds else 0


if __name__ == "__main__":
    raise SystemExit(main())

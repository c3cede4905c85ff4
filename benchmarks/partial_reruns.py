"""Server time per control move in the explorer: which part of the page reruns, and how long it takes.

Usage:
    python benchmarks/partial_reruns.py [--moves 12] [--link "?ex=bank&word=bank"] [--window 1400,1000]
                                        [--fixture] [--eager-frame] [--profile] [--json out.json]

Starts its own explorer (the app's default model, or the tests' tiny fixture biLM with ``--fixture``; CPU; no
UMAP warm-up) in a server process whose Streamlit script runner is wrapped to log every run: its wall time
from the first line of the script to the last, and whether it was a whole-page run or a fragment run (the
``st.fragment`` the control sits in). Then Debian's headless Chromium opens the link and moves the controls as a
user does: the top layer's weight slider by the keyboard (one step per move, right then left), γ, the layer
norm checkbox and the 2-D projection selectbox, waiting after each move until the page is idle. Per kind of
move it prints the median and max server time of the runs the move caused, how many of them were whole-page
runs, and the browser's time from the key press to an idle page (the server's run, the websocket and the
drawing). Needs /usr/bin/chromium and /usr/bin/chromedriver (Debian's chromium, chromium-driver) and selenium.

``--eager-frame`` computes every part of the frame on every move, whatever view is open (the page before
issue 29), so that one checkout gives both arms of the A/B; ``--profile`` adds where the fragment runs spent
their time (cProfile, cumulative, the app's functions).

The server time is the script's own time (``exec_func_with_error_handling``), not the websocket or the browser;
on this shared 2-core machine, alternate the two arms and compare medians taken at similar load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
BUSY = '[data-testid="stStatusWidgetRunningIcon"], [data-stale="true"]'


# ---- the server: streamlit with its script runs logged -------------------------------------------------------
def serve(port: int, log: str) -> None:
    """Runs in the server process: wrap the script runner's one call that executes the page (whole or a
    fragment), then start Streamlit as ``streamlit run`` would. With ELMO_BENCH_PROFILE set, fragment runs are
    also profiled (cProfile) into that file, for the --profile table."""
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.web import cli

    run = script_runner.exec_func_with_error_handling
    profile_to = os.environ.get("ELMO_BENCH_PROFILE")
    profiler = None
    if profile_to:
        import cProfile

        profiler = cProfile.Profile()

    def timed(func, ctx):
        fragment = bool(getattr(ctx, "fragment_ids_this_run", None))
        start = time.perf_counter()
        try:
            if profiler is not None and fragment:
                return profiler.runcall(run, func, ctx)
            return run(func, ctx)
        finally:
            record = {"at": time.time(), "seconds": time.perf_counter() - start, "fragment": fragment}
            if profiler is not None:
                profiler.dump_stats(profile_to)
            with open(log, "a") as f:
                f.write(json.dumps(record) + "\n")

    script_runner.exec_func_with_error_handling = timed
    if os.environ.get("ELMO_BENCH_EAGER_FRAME") == "1":
        eager_frames()
    sys.argv = [
        "streamlit",
        "run",
        str(ROOT / "app" / "streamlit_app.py"),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    sys.exit(cli.main())


def eager_frames() -> None:
    """``--eager-frame``: every part of the frame computed on every move, whatever view is open (neighbours, the
    reference corpus, layer 0, the matrices, the scores, the clusters), as the page did before the frame computed
    them when a view first reads them: the other arm of an A/B on one checkout."""
    from app.explore import frame as fr

    compute = fr.compute_frame

    def every_part(*args, **kwargs):
        frame = compute(*args, **kwargs)
        for name in ("neighbours", "reference_neighbours", "layer0_neighbours", "panels", "separation", "clusters"):
            getattr(frame, name)
        return frame

    fr.compute_frame = every_part  # the page imports it from app.explore.frame on each run


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.read().decode().strip() == "ok"
    except OSError:
        return False


def start_server(
    port: int, log: Path, fixture: bool, out, profile: Path | None = None, eager: bool = False
) -> subprocess.Popen:
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        ELMO_EXPLORER_DEVICE="cpu",
        ELMO_EXPLORER_UMAP_WARMUP="0",
        ELMO_BENCH_EAGER_FRAME="1" if eager else "0",
    )
    if profile is not None:
        env["ELMO_BENCH_PROFILE"] = str(profile)
    if fixture:
        env.update(
            ELMO_EXPLORER_OPTIONS=str(FIXTURE / "options.json"), ELMO_EXPLORER_WEIGHTS=str(FIXTURE / "lm_weights.hdf5")
        )
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), str(log)],
        cwd=ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not _healthy(f"http://127.0.0.1:{port}"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the server did not start (exit {proc.poll()}); its log: {out.name}")
        time.sleep(0.3)
    return proc


# ---- the browser ----------------------------------------------------------------------------------------------
def chromium(window: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--window-size={window}", f"--user-data-dir={tempfile.mkdtemp(prefix='elmo-bench-')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(120)
    return driver


def runs(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def settle(driver, log: Path, before: int, timeout: float = 120.0) -> list[dict]:
    """Wait until the move's runs are logged and the page is idle with no new run for 0.5 s; return the runs."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    quiet_since, seen = None, before
    while time.monotonic() < deadline:
        count = len(runs(log))
        idle = not driver.find_elements(By.CSS_SELECTOR, BUSY)
        if count > before and idle:
            if count != seen:
                quiet_since, seen = time.monotonic(), count
            elif time.monotonic() - quiet_since >= 0.5:
                return runs(log)[before:]
        time.sleep(0.05)
    raise SystemExit("a move did not finish within its timeout")


def measure(driver, log: Path, what: str, act, results: dict) -> None:
    before = len(runs(log))
    start = time.perf_counter()
    act()
    new = settle(driver, log, before)
    browser = time.perf_counter() - start - 0.5  # less settle()'s quiet wait
    results.setdefault(what, []).append(
        {
            "server": sum(r["seconds"] for r in new),
            "runs": len(new),
            "full": sum(not r["fragment"] for r in new),
            "browser": browser,
        }
    )


def wait_for(driver, css: str, timeout: float = 180.0):
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        if found and not driver.find_elements(By.CSS_SELECTOR, BUSY):
            return found[0]
        time.sleep(0.2)
    raise SystemExit(f"{css} did not appear")


def drive(driver, url: str, log: Path, moves: int) -> dict:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.get(url)
    wait_for(driver, ".st-key-explorer_map_chart")
    settle(driver, log, 0)
    results: dict[str, list] = {}

    def keys(css: str, key):
        def act():
            element = driver.find_element(By.CSS_SELECTOR, css)
            driver.execute_script("arguments[0].focus();", element)
            element.send_keys(key)

        return act

    for i in range(moves):  # right, then back left: the same weights again and again
        measure(
            driver,
            log,
            "weight slider",
            keys(".st-key-explorer_w_2 input[type=range]", Keys.ARROW_RIGHT if i < moves // 2 else Keys.ARROW_LEFT),
            results,
        )
    for i in range(max(2, moves // 3)):
        measure(
            driver,
            log,
            "gamma",
            keys(".st-key-explorer_gamma input[type=range]", Keys.ARROW_RIGHT if i % 2 == 0 else Keys.ARROW_LEFT),
            results,
        )
    for _ in range(max(2, moves // 3)):
        measure(
            driver,
            log,
            "layer norm",
            lambda: driver.find_element(By.CSS_SELECTOR, ".st-key-explorer_layer_norm label").click(),
            results,
        )
    for target in ["PCA", "auto"] * max(1, moves // 6):

        def pick(target=target):
            box = driver.find_element(By.CSS_SELECTOR, ".st-key-explorer_projection input[role=combobox]")
            box.click()
            box.send_keys(target)
            option = next(
                o for o in driver.find_elements(By.CSS_SELECTOR, "[role=option]") if o.text.startswith(target)
            )
            option.click()

        measure(driver, log, "projection", pick, results)
    return results


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=12, help="slider moves (γ, layer norm: a third each)")
    parser.add_argument("--link", default="?ex=bank&word=bank", help="the page's query string")
    parser.add_argument("--window", default="1400,1000")
    parser.add_argument("--fixture", action="store_true", help="the tests' tiny biLM instead of the default model")
    parser.add_argument("--json", help="also write the raw timings here")
    parser.add_argument(
        "--eager-frame",
        action="store_true",
        help="compute every part of the frame on every move (the page before issue 29): an A/B",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print where the fragment runs spent their time (cProfile, cumulative)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="elmo-partial-"))
    log, port = work / "runs.jsonl", _free_port()
    with open(work / "server.log", "wb") as out:
        profile = work / "fragments.prof" if args.profile else None
        server = start_server(port, log, args.fixture, out, profile, args.eager_frame)
        try:
            driver = chromium(args.window)
            try:
                results = drive(driver, f"http://127.0.0.1:{port}/{args.link}", log, args.moves)
            finally:
                driver.quit()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
    print(
        f"{args.link} · {'fixture biLM' if args.fixture else 'default model'} · window {args.window} · "
        f"{'every part of the frame on every move · ' if args.eager_frame else ''}"
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'move':<14} {'n':>3} {'server median':>14} {'server max':>11} {'whole-page runs':>16} {'browser median':>15}"
    )
    for what, rows in results.items():
        server = [r["server"] * 1000 for r in rows]
        print(
            f"{what:<14} {len(rows):>3} {statistics.median(server):>11.0f} ms {max(server):>8.0f} ms "
            f"{sum(r['full'] for r in rows):>8} of {sum(r['runs'] for r in rows):<5} "
            f"{statistics.median(r['browser'] for r in rows) * 1000:>12.0f} ms"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.profile and profile.exists():
        import pstats

        pstats.Stats(str(profile)).sort_stats("cumulative").print_stats(r"app[/\\]", 40)


if __name__ == "__main__":
    main()

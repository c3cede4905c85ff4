"""Time from navigation to the first drawn map in a real browser: a fresh session on a running explorer, against
the pages that hold nothing but one chart (plotly, or Vega-Lite as the explorer's contexts map).

Usage:
    python benchmarks/first_map.py --compare [--trials 8]        # starts its own three servers, alternates them
    python benchmarks/first_map.py [[NAME=]URL ...] [--trials 4]  # servers already running (e.g. `make app`)

``--compare`` starts three Streamlit servers on free local ports, with the environment passed through (and
ELMO_EXPLORER_UMAP_WARMUP=0 unless set, so no background compile competes with the trials):
  explorer          app/streamlit_app.py at ``?ex=bank&word=bank`` (12 points; its contexts map is Vega-Lite)
  one chart plotly  benchmarks/one_chart_page.py: one 12-point plotly scatter and nothing else
  one chart altair  the same page with ELMO_BENCH_CHART=altair: one 12-point Vega-Lite scatter (Altair)
(docs/performance.md, "The contexts map's renderer", has the run that chose Vega-Lite over plotly for the contexts
map: this script then also started the explorer with its map drawn by plotly). Each server gets one
untimed visit first (the model loaded, the page compiled: a warm server, as for a class after the teacher tried
the link). Then ``--trials`` rounds; each round visits every target once, in an order that rotates from round to
round, each visit in a fresh Chromium (Debian's, headless, a new empty profile): the first load is a new
visitor's (empty browser cache: the page's JavaScript and the chart library come over the network), then the
same browser loads the page again (a second session with the browser cache filled). The machine is shared, so
the targets alternate trial by trial and every trial prints the load average.

A trial polls until the page shows map points (plotly's scatter points; Vega's SVG marks, or a drawn Vega canvas)
and reads ``performance.now()``, the seconds since navigation started, script run and rendering included (the
moment the first point entered the page when a mutation observer saw it). Where the time goes, per trial, from a
script the page runs before Streamlit's own: the page's JavaScript loaded (DOMContentLoaded), the websocket's
first message (the session exists), the last message before the map is drawn (the server has sent the map),
the chart library loaded (Streamlit fetches plotly.js, 4.7 MB (1.4 MB compressed), or its Vega-Lite chunks,
0.8 MB (0.27 MB), when the first chart arrives), the first map point. Also the CPU seconds the server process (less its nice-19 background
threads) and the browser spent on the trial. Needs /usr/bin/chromium and /usr/bin/chromedriver.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The map's points as drawn: plotly's scatter points, Vega's SVG marks (the contexts map and the one-chart page
# draw circles: "mark-symbol"), or a Vega canvas with something drawn on it (a chart of more than 2,000 points).
POINTS_JS = """
const plotly = document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length;
const vega = document.querySelectorAll('.stVegaLiteChart svg .mark-symbol.role-mark path').length;
let drawn = 0;
for (const c of document.querySelectorAll('.stVegaLiteChart canvas')) {
  if (!c.width || !c.height) continue;
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < px.length; i += 4) { if (px[i]) { drawn = 1; break; } }
}
return plotly + vega + drawn;
"""
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--window-size=1400,1000",
]

# Runs before the page's scripts: time stamps (performance.now(), ms) of the stages above.
TIMELINE_JS = """
window.__fm = {messages: 0};
const mark = (k) => { if (!(k in window.__fm)) window.__fm[k] = performance.now(); };
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Native(...args);
  ws.addEventListener('message', () => {
    window.__fm.messages += 1; mark('first message');
    if (!('first map' in window.__fm)) window.__fm['last message'] = performance.now();
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
document.addEventListener('DOMContentLoaded', () => mark('page loaded'));
new MutationObserver(() => {
  if (!('first map' in window.__fm) && document.querySelector(
      '.js-plotly-plot .scatterlayer .point, .stVegaLiteChart svg .mark-symbol.role-mark path')) {
    mark('first map');
    const chunks = performance.getEntriesByType('resource').filter(
      e => /PlotlyChart|ArrowVegaLiteChart|\\/embed\\.[^/]*\\.js/.test(e.name));
    if (chunks.length) window.__fm['chart JS loaded'] = Math.max(...chunks.map(e => e.responseEnd));
  }
}).observe(document, {subtree: true, childList: true});
"""
STAGES = ("page loaded", "first message", "last message", "chart JS loaded", "first map")
EXPLORER_QUERY = "?ex=bank&word=bank"


@dataclass
class Target:
    name: str
    url: str
    server: int | None = None  # the local server's pid, for its CPU time
    cold: list[float] = field(default_factory=list)  # a fresh browser's first load (empty cache)
    warm: list[float] = field(default_factory=list)  # the same browser's second load


# ---- CPU time of processes -----------------------------------------------------------------------------------
def _ticks(pid: int, skip_nice: int | None = None) -> int:
    """CPU ticks of a process (its exited threads included), less those of its threads at nice >= skip_nice."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    total = int(fields[11]) + int(fields[12])
    if skip_nice is not None:
        for path in glob.glob(f"/proc/{pid}/task/*/stat"):
            try:
                t = open(path).read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(t[16]) >= skip_nice:
                total -= int(t[11]) + int(t[12])
    return total


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for path in glob.glob("/proc/[0-9]*/stat"):
        try:
            parent = int(open(path).read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(path.split("/")[2]))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def _server_pid(port: str) -> int | None:
    """The streamlit process serving ``port`` on this machine, if it is one."""
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            args = open(path, "rb").read().split(b"\0")
        except OSError:
            continue
        if any(b"streamlit" in a or b"elmo-explorer" in a for a in args) and port.encode() in args:
            return int(path.split("/")[2])
    return None


# ---- servers -------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Servers:
    """Streamlit servers started here (each in its own process group, logs in a temporary folder)."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []
        self.logs = Path(tempfile.mkdtemp(prefix="elmo-first-map-"))

    def start(self, script: str, **env: str) -> tuple[str, int]:
        port = _free_port()
        env = dict(os.environ, ELMO_EXPLORER_UMAP_WARMUP=os.environ.get("ELMO_EXPLORER_UMAP_WARMUP", "0"), **env)
        log = open(self.logs / f"{Path(script).stem}-{port}.log", "w")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                script,
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return f"http://127.0.0.1:{port}", proc.pid

    def wait(self, url: str, timeout: float) -> None:
        end = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > end:
                raise SystemExit(f"{url} did not start in {timeout:.0f} s (logs: {self.logs})")
            time.sleep(0.5)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        shutil.rmtree(self.logs, ignore_errors=True)


# ---- one browser -----------------------------------------------------------------------------------------------
def _browser():
    """A fresh headless Chromium with a new empty profile (and that profile's folder, to remove after)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="elmo-bench-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TIMELINE_JS})
    return driver, profile


def _remove(profile: str) -> None:
    """Remove a browser profile; Chromium's last processes may still write into it just after ``quit``."""
    for _ in range(10):
        shutil.rmtree(profile, ignore_errors=True)
        time.sleep(0.3)
        if not os.path.exists(profile):
            return


def first_map(driver, url: str, server: int | None, timeout: float) -> tuple[float, str]:
    """Load ``url`` and wait for map points; the seconds from navigation to the first point, and a report line."""
    driver.get("about:blank")
    load = open("/proc/loadavg").read().split()[0]
    hz = os.sysconf("SC_CLK_TCK")
    server_0 = _ticks(server, skip_nice=19) if server else 0
    browser_0 = sum(_ticks(p) for p in _tree(driver.service.process.pid))
    driver.get(url)
    start = time.monotonic()
    while not driver.execute_script(POINTS_JS):
        if time.monotonic() - start > timeout:
            raise SystemExit(f"no map at {url} after {timeout:.0f} s")
        time.sleep(0.05)
    polled = driver.execute_script("return performance.now()") / 1000
    marks = driver.execute_script("return window.__fm") or {}
    seconds = marks["first map"] / 1000 if "first map" in marks else polled
    server_cpu = (_ticks(server, skip_nice=19) - server_0) / hz if server else float("nan")
    browser_cpu = (sum(_ticks(p) for p in _tree(driver.service.process.pid)) - browser_0) / hz
    stages = ", ".join(f"{k} {marks[k] / 1000:.2f}" for k in STAGES if k in marks)
    return seconds, (
        f"first map {seconds:.2f} s (load average {load}; CPU: server {server_cpu:.2f} s, browser "
        f"{browser_cpu:.2f} s)\n        s after navigation: {stages}; {marks.get('messages', 0)} "
        "websocket messages"
    )


def visit(target: Target, timeout: float, record: bool = True) -> list[str]:
    """A fresh browser loads the target twice: empty cache, then filled. Returns the two report lines."""
    driver, profile = _browser()
    driver.set_script_timeout(timeout)  # a starved browser answers slowly
    try:
        cold, cold_line = first_map(driver, target.url, target.server, timeout)
        time.sleep(0.5)
        warm, warm_line = first_map(driver, target.url, target.server, timeout)
    finally:
        driver.quit()
        _remove(profile)
    if record:
        target.cold.append(cold)
        target.warm.append(warm)
    return [f"empty cache:  {cold_line}", f"cache filled: {warm_line}"]


# ---- summary ---------------------------------------------------------------------------------------------------
def p95(values: list[float]) -> float:
    """The 95th percentile by nearest rank (with fewer than 20 trials: the largest or next to largest)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-95 * len(ordered) // 100) - 1))]


def table(targets: list[Target]) -> str:
    rows = ["| target | browser cache | n | median | p95 | min-max |", "|---|---|---|---|---|---|"]
    for t in targets:
        for what, values in (("empty", t.cold), ("filled", t.warm)):
            if values:
                rows.append(
                    f"| {t.name} | {what} | {len(values)} | {statistics.median(values):.2f} s | "
                    f"{p95(values):.2f} s | {min(values):.2f}-{max(values):.2f} s |"
                )
    return "\n".join(rows)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "urls",
        nargs="*",
        help="running servers, each URL or NAME=URL (default: the explorer at "
        f"http://localhost:8501/{EXPLORER_QUERY}); not with --compare",
    )
    p.add_argument(
        "--compare", action="store_true", help="start the explorer and the one-chart pages here and alternate them"
    )
    p.add_argument("--trials", type=int, default=4, help="rounds; each visits every target once")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one map")
    args = p.parse_args(argv)
    if args.compare and args.urls:
        p.error("--compare starts its own servers: give no URL")
    servers = Servers() if args.compare else None
    targets: list[Target] = []
    try:
        if servers is not None:
            url, pid = servers.start("app/streamlit_app.py")
            targets.append(Target("explorer", f"{url}/{EXPLORER_QUERY}", pid))
            for chart in ("plotly", "altair"):
                url, pid = servers.start("benchmarks/one_chart_page.py", ELMO_BENCH_CHART=chart)
                targets.append(Target(f"one chart {chart}", f"{url}/", pid))
            for t in targets:
                servers.wait(t.url.split("/?")[0].rstrip("/"), 180)
        else:
            for spec in args.urls or [f"http://localhost:8501/{EXPLORER_QUERY}"]:
                name, _, url = spec.partition("=") if "=" in spec.split("?")[0] else ("", "", spec)
                port = urllib.parse.urlsplit(url).port or 80
                targets.append(Target(name or url, url, _server_pid(str(port))))
        print(
            f"{len(targets)} targets, {args.trials} rounds; machine: {os.cpu_count()} CPUs, load average now "
            f"{' '.join(open('/proc/loadavg').read().split()[:3])}",
            flush=True,
        )
        for t in targets:  # the model loaded, the page compiled, the server's caches warm
            visit(t, args.timeout, record=False)
        for r in range(args.trials):
            for t in targets[r % len(targets) :] + targets[: r % len(targets)]:
                lines = visit(t, args.timeout)
                print(f"round {r + 1}, {t.name}:\n    " + "\n    ".join(lines), flush=True)
                time.sleep(1)
    finally:
        if servers is not None:
            servers.stop()
    print(f"\nload average at the end {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print(table(targets))


if __name__ == "__main__":
    main()

"""Time from navigation to the first drawn map in a real browser: a fresh session on a running explorer.

Usage (the explorer already running, e.g. `make app`):
    python benchmarks/first_map.py [URL] [--trials 4]

Each trial loads URL in Debian's headless Chromium (a new page load is a new Streamlit session; the browser
cache is kept after the first, as for a second visitor) and polls until the contexts map shows points, then
reads ``performance.now()``: the seconds since navigation started, script run and rendering included. The
first trial also loads Streamlit's JavaScript into an empty cache. Needs /usr/bin/chromium and chromedriver.

Where the time goes (every trial, from a script the page runs before Streamlit's own): the page's
JavaScript loaded (DOMContentLoaded), the websocket's first message (the session exists), the last message
before the map is drawn (the server has sent the map), plotly.js loaded (Streamlit fetches plotly.js, 4.7 MB, when
the first chart arrives), the first map point. The gap between the last message and the map is the time the
browser spends on the page after the server is done (the grey skeletons). Also the CPU seconds the server
process (less its nice-19 background threads) and the browser spent on the trial, and the load average,
because on a shared machine the wall time says as much about the other jobs as about the app.
"""
from __future__ import annotations

import argparse
import glob
import os
import statistics
import tempfile
import time
import urllib.parse

POINTS_JS = "return document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--disable-quic", "--window-size=1400,1000"]


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
  if (document.querySelector('.js-plotly-plot .scatterlayer .point')) {
    mark('first map');
    const plotly = performance.getEntriesByType('resource').find(e => e.name.includes('PlotlyChart'));
    if (plotly && !('plotly.js loaded' in window.__fm)) window.__fm['plotly.js loaded'] = plotly.responseEnd;
  }
}).observe(document, {subtree: true, childList: true});
"""
STAGES = ("page loaded", "first message", "last message", "plotly.js loaded", "first map")


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


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url", nargs="?", default="http://localhost:8501/?ex=bank&word=bank")
    p.add_argument("--trials", type=int, default=4)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one map")
    args = p.parse_args(argv)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in FLAGS + [f"--user-data-dir={tempfile.mkdtemp(prefix='elmo-bench-')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(args.timeout)  # a starved browser answers slowly
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TIMELINE_JS})
    port = urllib.parse.urlsplit(args.url).port or 80
    server = _server_pid(str(port))
    hz = os.sysconf("SC_CLK_TCK")
    times = []
    try:
        for trial in range(args.trials):
            driver.get("about:blank")
            load = open("/proc/loadavg").read().split()[0]
            server_0 = _ticks(server, skip_nice=19) if server else 0
            browser_0 = sum(_ticks(p) for p in _tree(driver.service.process.pid))
            driver.get(args.url)
            start = time.monotonic()
            while not driver.execute_script(POINTS_JS):
                if time.monotonic() - start > args.timeout:
                    raise SystemExit(f"no map after {args.timeout:.0f} s")
                time.sleep(0.05)
            seconds = driver.execute_script("return performance.now()") / 1000
            marks = driver.execute_script("return window.__fm") or {}
            server_cpu = (_ticks(server, skip_nice=19) - server_0) / hz if server else float("nan")
            browser_cpu = (sum(_ticks(p) for p in _tree(driver.service.process.pid)) - browser_0) / hz
            times.append(seconds)
            stages = ", ".join(f"{k} {marks[k] / 1000:.2f}" for k in STAGES if k in marks)
            print(f"trial {trial + 1}{' (empty browser cache)' if trial == 0 else ''}: first map {seconds:.2f} s "
                  f"(load average {load}; CPU: server {server_cpu:.2f} s, browser {browser_cpu:.2f} s)\n"
                  f"    s after navigation: {stages}; {marks.get('messages', 0)} websocket messages")
            time.sleep(1)
    finally:
        driver.quit()
    later = times[1:] or times
    print(f"median of the trials after the first: {statistics.median(later):.2f} s (target 2 s)")


if __name__ == "__main__":
    main()

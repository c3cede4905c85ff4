"""Time from navigation to the first drawn map in a real browser: a fresh session on a running explorer.

Usage (the explorer already running, e.g. `make app`):
    python benchmarks/first_map.py [URL] [--trials 4]

Each trial loads URL in Debian's headless Chromium (a new page load is a new Streamlit session; the browser
cache is kept after the first, as for a second visitor) and polls until the contexts map shows points, then
reads ``performance.now()``: the seconds since navigation started, script run and rendering included. The
first trial also loads Streamlit's JavaScript into an empty cache. Needs /usr/bin/chromium and chromedriver.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time

POINTS_JS = "return document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--disable-quic", "--window-size=1400,1000"]


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
    times = []
    try:
        for trial in range(args.trials):
            driver.get(args.url)
            start = time.monotonic()
            while not driver.execute_script(POINTS_JS):
                if time.monotonic() - start > args.timeout:
                    raise SystemExit(f"no map after {args.timeout:.0f} s")
                time.sleep(0.05)
            seconds = driver.execute_script("return performance.now()") / 1000
            times.append(seconds)
            print(f"trial {trial + 1}{' (empty browser cache)' if trial == 0 else ''}: first map {seconds:.2f} s")
    finally:
        driver.quit()
    later = times[1:] or times
    print(f"median of the trials after the first: {statistics.median(later):.2f} s (target 2 s)")


if __name__ == "__main__":
    main()

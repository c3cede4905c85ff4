"""Where the browser's main thread spends a fresh session's first map: a JavaScript CPU profile.

Usage (the explorer already running, e.g. `make app`):
    python -m benchmarks.first_map_profile [URL] [--top 15]

Loads the explorer once to fill the browser cache (as `first_map.py`'s trials after the first), then records a
sampling CPU profile of the page (Chrome DevTools `Profiler` domain through Selenium, 200 us interval) from
navigation to the first drawn map point, and prints the sampled milliseconds grouped by script file and by
function. "(program)" is the browser's native work (layout, style, paint, parsing), "(idle)" the main thread
waiting (for the server, the network). Needs /usr/bin/chromium and chromedriver, like `first_map.py`.
"""

from __future__ import annotations

import argparse
import collections
import time

from benchmarks.first_map import FLAGS, POINTS_JS


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url", nargs="?", default="http://localhost:8501/?ex=bank&word=bank")
    p.add_argument("--top", type=int, default=15, help="rows per table")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the map")
    args = p.parse_args()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(args.url)  # fills the cache: the profiled load is a second visitor's
        wait_for_map(driver, args.timeout)
        driver.get("about:blank")
        driver.execute_cdp_cmd("Profiler.enable", {})
        driver.execute_cdp_cmd("Profiler.setSamplingInterval", {"interval": 200})
        driver.execute_cdp_cmd("Profiler.start", {})
        driver.get(args.url)
        wait_for_map(driver, args.timeout)
        shown_at = driver.execute_script("return performance.now()") / 1000
        profile = driver.execute_cdp_cmd("Profiler.stop", {})["profile"]
    finally:
        driver.quit()
    by_file, by_function = self_times(profile)
    print(f"first map drawn {shown_at:.2f} s after navigation; sampled main-thread time, ms:")
    for title, table in (("by script file", by_file), ("by function", by_function)):
        print(f"\n{title}:")
        for name, micros in table.most_common(args.top):
            print(f"  {micros / 1000:8.1f}  {name}")


def wait_for_map(driver, timeout: float) -> None:
    end = time.time() + timeout
    while not driver.execute_script(POINTS_JS):
        if time.time() > end:
            raise SystemExit(f"no map after {timeout:.0f} s")
        time.sleep(0.02)


def self_times(profile: dict) -> tuple[collections.Counter, collections.Counter]:
    """Self time (us) of each sampled node, summed by script file name and by function name + file."""
    nodes = {n["id"]: n["callFrame"] for n in profile["nodes"]}
    by_file: collections.Counter = collections.Counter()
    by_function: collections.Counter = collections.Counter()
    for node, micros in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[node]
        file = frame["url"].rsplit("/", 1)[-1]
        by_file[file or frame["functionName"]] += micros
        by_function[f"{frame['functionName'] or '(anonymous)'} {file}".strip()] += micros
    return by_file, by_function


if __name__ == "__main__":
    main()

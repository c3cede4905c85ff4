"""The live map in a real browser (headless Chromium, the tiny fixture biLM): while the mouse holds a weight slider and
moves, the map's marks move and no websocket message goes to the server; on release one does, and the released map is
what the drag showed; γ scales the fixed-axes map; a link draws the released map exactly. The server and the browser
are those of tests/app/test_browser.py; this browser also records its websocket frames (Chrome's performance log)."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time

import pytest

from tests.app.test_browser import (  # noqa: F401  (app_url is a fixture)
    CHROME_FLAGS,
    CHROMEDRIVER,
    CHROMIUM,
    FIRST_PAGE_TIMEOUT,
    MAP_DATA_JS,
    _browser_missing,
    _find,
    _map_points,
    _page_errors,
    _screen,
    _skip_or_fail,
    _wait,
    app_url,
)

pytestmark = [pytest.mark.browser, pytest.mark.multiprocess]


@contextlib.contextmanager
def _logging_chromium():
    """A fresh headless Chromium that keeps a performance log (the websocket frames it sends and receives)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument("--window-size=1400,1200")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    profile = tempfile.mkdtemp(prefix="elmo-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def logging_browser():
    reason = _browser_missing()
    if reason:
        _skip_or_fail(reason)
    with _logging_chromium() as driver:
        yield driver


def _frames_sent(driver) -> int:
    """Websocket frames the page sent since the last call (the log is drained by reading it)."""
    return sum(
        json.loads(entry["message"])["message"]["method"] == "Network.webSocketFrameSent"
        for entry in driver.get_log("performance")
    )


def _marks(driver) -> list:
    """The map's marks as drawn right now: [legend name, xs, ys] per entry (no waiting for the page to be idle:
    during a drag the page is busy only in the browser)."""
    return driver.execute_script(MAP_DATA_JS)


def _spread(traces) -> float:
    xs = [x for name, xs, _ in traces if name != "neighbours query" for x in xs]
    return max(xs) - min(xs)


def test_a_drag_moves_the_map_in_the_browser_and_tells_the_server_once(logging_browser, app_url):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    d = logging_browser
    _screen(d, 1400, 1000)
    d.get(app_url + "/?ex=bank&word=bank")
    released = _map_points(d, FIRST_PAGE_TIMEOUT)
    time.sleep(1.0)  # the page's own messages after its first run (component mounts) are not the drag's
    slider = _find(d, ".st-key-explorer_w_2 input[type=range]")
    _frames_sent(d)

    # w_2 from 0 upwards with the mouse held down: the marks move at every step, and nothing is sent
    ActionChains(d).move_to_element(slider).click_and_hold().perform()
    seen, values = [], []
    for _ in range(4):
        ActionChains(d).move_by_offset(18, 0).perform()
        time.sleep(0.25)
        values.append(float(slider.get_attribute("value")))
        seen.append(_marks(d))
    sent_during = _frames_sent(d)
    assert sent_during == 0, f"{sent_during} websocket frames sent while the mouse was held down"
    assert values[-1] > 0 and values == sorted(values), values
    # the first step may not cross a slider step on a busy machine; by the last the marks must have moved
    assert seen[-1] != released and len({str(s) for s in seen}) > 1, "the map did not move during the drag"
    assert "w=" not in d.current_url  # the server has not heard of the drag

    ActionChains(d).release().perform()
    _wait(d, "the released weight in the URL", lambda d: f"w=0%2C0%2C{values[-1]:g}" in d.current_url)
    assert _frames_sent(d) >= 1  # the release: one rerun
    after = _map_points(d)
    # the server's map for the released weights is the one the drag ended on (float32 columns: 1e-4)
    for (name, xs, ys), (name2, xs2, ys2) in zip(after, seen[-1], strict=True):
        assert name == name2 and xs == pytest.approx(xs2, abs=1e-4) and ys == pytest.approx(ys2, abs=1e-4)

    # γ: the fixed axes do not rescale, so a larger γ spreads the points on the screen
    gamma = _find(d, ".st-key-explorer_gamma input[type=range]")
    before = _spread(_marks(d))
    ActionChains(d).move_to_element(gamma).click_and_hold().move_by_offset(40, 0).perform()
    time.sleep(0.3)
    g = float(gamma.get_attribute("value"))
    during = _spread(_marks(d))
    assert _frames_sent(d) == 0
    assert g > 1.0 and during > before * 1.2, (g, before, during)
    ActionChains(d).release().perform()
    _wait(d, "γ in the URL", lambda d: f"g={g:g}" in d.current_url)

    # a keyboard arrow moves the map as a drag does
    moved = _map_points(d)
    d.execute_script("arguments[0].focus()", _find(d, ".st-key-explorer_w_1 input[type=range]"))
    ActionChains(d).send_keys(Keys.ARROW_RIGHT).perform()
    _wait(d, "the map moved by the arrow key", lambda d: (lambda m: m and m != moved)(_marks(d)))
    _wait(d, "the arrow's weight in the URL", lambda d: "w=0%2C0.1%2C" in d.current_url)
    assert not _page_errors(d)

    # the link draws exactly the released map in a fresh browser (a new session)
    link, final = d.current_url, _map_points(d)
    with _logging_chromium() as fresh:
        _screen(fresh, 1400, 1000)
        fresh.get(link)
        assert _map_points(fresh, FIRST_PAGE_TIMEOUT) == final

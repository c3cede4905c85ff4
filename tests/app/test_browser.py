"""Real-browser tests: the running Streamlit app driven by headless Chromium (Debian's, never a download).

Each starts ``streamlit run app/streamlit_app.py`` on a free port with the tiny fixture biLM. The first types
sentences into the text area, picks a word, moves a layer-weight slider with the keyboard and checks that the
shown s_j and the map's point coordinates changed. The second opens the bank example, compares the fixture
model with the bundled lm-only model in the Compare tab and checks both maps and both models' scores. Each
saves a screenshot (pytest's tmp path, and ``$ELMO_SCREENSHOT_DIR`` when set).

Needs /usr/bin/chromium and /usr/bin/chromedriver (Debian packages ``chromium`` and ``chromium-driver``).
Without them the test is skipped, unless ``ELMO_REQUIRE_BROWSER=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from deploy.replicas import free_port, healthy

pytestmark = [pytest.mark.browser, pytest.mark.multiprocess]

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
STARTUP_TIMEOUT = 60  # server start (imports torch, streamlit) on a busy 2-core machine
STEP_TIMEOUT = 30  # one rerun of the page in the browser
FIRST_PAGE_TIMEOUT = 150  # a browser's first page: a new session (and on the first one, the model's first use)

# "bank" occurs most often, so the app suggests it; the test then picks "light" by hand.
SENTENCES = """[money] The bank raised its rates.
[money] I paid the cheque into the bank.
[money] The bank closed my account.
[river] We sat on the bank of the river in the light of the moon.
[river] The river bank was muddy.
[river] Willows grow along the bank.
[lamp] Turn on the light please.
[lamp] The light in the kitchen is broken.
[weight] This bag is light enough to carry.
[weight] She packed a light suitcase."""


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -r requirements-test.txt)"
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not (os.path.isfile(p) and os.access(p, os.X_OK))]
    if missing:
        return (
            f"{' and '.join(missing)} not found: install Debian's chromium and chromium-driver "
            "(apt-get install chromium chromium-driver)"
        )
    return None


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("ELMO_REQUIRE_BROWSER") == "1":
        pytest.fail(f"ELMO_REQUIRE_BROWSER=1 but the browser test cannot run: {reason}")
    pytest.skip(reason)


@pytest.fixture
def app_url(tmp_path):
    """The explorer on a free port with the tiny fixture model; stopped (whole process group) afterwards."""
    port = free_port()
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),  # this checkout's app and elmo_core, whichever copy is installed
        ELMO_EXPLORER_OPTIONS=str(FIXTURE / "options.json"),
        ELMO_EXPLORER_WEIGHTS=str(FIXTURE / "lm_weights.hdf5"),
        ELMO_EXPLORER_DEVICE="cpu",
        ELMO_EXPLORER_UMAP_WARMUP="0",  # 5 points: the map is PCA anyway; no numba compile
        ELMO_EXPLORER_REFERENCE=str(tmp_path / "no-reference.txt"),
    )
    for key in ("ELMO_EXPLORER_CHECKPOINT", "ELMO_EXPLORER_ALLOW_SERVER_PATHS"):
        env.pop(key, None)
    log = open(tmp_path / "streamlit.log", "wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app/streamlit_app.py",
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
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{(tmp_path / 'streamlit.log').read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"no 'ok' from {url}/_stcore/health after {STARTUP_TIMEOUT} s:\n"
                    f"{(tmp_path / 'streamlit.log').read_text()}"
                )
            time.sleep(0.3)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


@contextlib.contextmanager
def _chromium(window: str = "1400,2600"):
    """A fresh headless Chromium (its own empty profile: no cookies, no storage, a new Streamlit session)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={window}")
    profile = tempfile.mkdtemp(prefix="elmo-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    # An explicit driver path means Selenium Manager is never run (it would try to download a driver).
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(120)  # a page script on a busy 2-core machine can take longer than the 30 s default
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def browser():
    reason = _browser_missing()
    if reason:
        _skip_or_fail(reason)
    with _chromium() as driver:
        yield driver


# ---- page helpers -------------------------------------------------------------------------------------------
# The contexts map (a Vega-Lite chart drawn as SVG) as [legend name, xs, ys] per legend entry, in drawing order (the
# grey other words, the occurrences by legend entry, the query's ring), read from each drawn mark's description
# (its aria-label, app.render.map_chart: "series · ... · x = X, y = Y"): only what the browser drew. arguments[0]: the
# chart's container (default: the map tab's map).
MAP_DATA_JS = """
const root = document.querySelector(arguments[0] || '.st-key-explorer_map_chart');
if (!root) return null;
const traces = [];
for (const p of root.querySelectorAll('svg .mark-symbol.role-mark path')) {
  const m = /^(.*?) · .* · x = (\\S+), y = (\\S+)$/.exec(p.getAttribute('aria-label') || '');
  if (!m) continue;
  let t = traces.find(t => t[0] === m[1]);
  if (!t) { t = [m[1], [], []]; traces.push(t); }
  t[1].push(parseFloat(m[2])); t[2].push(parseFloat(m[3]));
}
return traces.length ? traces : null;
"""


def _wait(driver, what: str, condition, timeout: float = STEP_TIMEOUT):
    """Poll ``condition(driver)`` until it returns something truthy; fail with the page's errors if not."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException

    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition(driver) if _idle(driver) else None
        except StaleElementReferenceException:  # a rerun replaced the element: look again
            value = None
        except TimeoutException:  # a script that a starved browser did not finish in time: ask again
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; page errors: {_page_errors(driver)}")
        time.sleep(0.25)


def _page_errors(driver) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text[:500] for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')]


def _body_text(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "body").text


def _s_values(driver) -> list[str]:
    """The displayed s_j values under the sliders, in order (the formula's "s_j · h_j" does not match)."""
    return [m.group(1) for m in re.finditer(r"\bs_\d+ = ([0-9.]+)", _body_text(driver))]


def _idle(driver) -> bool:
    """No script run in progress and no element left over (stale) from the previous run."""
    from selenium.webdriver.common.by import By

    return not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidgetRunningIcon"], [data-stale="true"]')


def _find(driver, css: str):
    from selenium.webdriver.common.by import By

    return _wait(
        driver, css, lambda d: (lambda found: found[0] if found else None)(d.find_elements(By.CSS_SELECTOR, css))
    )


def test_type_pick_slide_and_screenshot(browser, app_url, tmp_path):  # browser first: skip before starting the app
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    d = browser
    d.get(app_url + "/")
    _wait(d, "the text area", lambda d: d.find_elements(By.CSS_SELECTOR, ".st-key-explorer_sentences textarea"), 120)

    # 1. open the sentences box (closed: the first visit shows an example set), type the sentences (Ctrl+Enter
    # submits a text area)
    _find(d, ".st-key-explorer_sentences_open summary").click()
    area = _wait(
        d,
        "the open text area",
        lambda d: next(
            (a for a in d.find_elements(By.CSS_SELECTOR, ".st-key-explorer_sentences textarea") if a.is_displayed()),
            None,
        ),
    )
    area.send_keys(Keys.CONTROL, "a")
    area.send_keys(Keys.DELETE)
    area.send_keys(SENTENCES)
    area.send_keys(Keys.CONTROL, Keys.ENTER)
    _wait(d, "the suggested word 'bank'", lambda d: "6 occurrences of “bank”" in _body_text(d))

    # 2. pick "light" in the word box (a combobox: type to filter, click the option)
    box = _find(d, ".st-key-explorer_word input")
    box.click()
    box.send_keys("light")
    option = _wait(
        d,
        "the option 'light'",
        lambda d: next(
            (o for o in d.find_elements(By.CSS_SELECTOR, "[role=option]") if o.text.startswith("light")), None
        ),
    )
    option.click()
    _wait(d, "the occurrences of 'light'", lambda d: "5 occurrences of “light”" in _body_text(d))
    before = _wait(
        d,
        "the map of 'light'",
        lambda d: (lambda data: data if data and any(t[0] == "lamp" for t in data) else None)(
            d.execute_script(MAP_DATA_JS)
        ),
    )
    s_before = _s_values(d)
    assert s_before == ["0.333", "0.333", "0.333"], s_before
    points_before = sum(len(t[1]) for t in before if t[0] != "neighbours query")
    assert points_before == 5, before

    # 3. move the top layer's slider with the keyboard: w_2 from 0.0 to 0.5
    slider = _find(d, ".st-key-explorer_w_2 input[type=range]")
    d.execute_script("arguments[0].focus();", slider)
    for _ in range(5):
        slider.send_keys(Keys.ARROW_RIGHT)
    # Streamlit may rerun between key presses (s shows 0.4 first): wait for all five to arrive.
    expected = ["0.274", "0.274", "0.452"]  # softmax(0, 0, 0.5)
    _wait(d, f"s_j = {expected} after the slider move", lambda d: _s_values(d) == expected or None)
    s_after = _s_values(d)
    assert s_after == expected, s_after
    after = _wait(
        d,
        "the map to change",
        lambda d: (lambda data: data if data and data != before else None)(d.execute_script(MAP_DATA_JS)),
    )

    # 4. the figure changed: same traces and points, moved coordinates
    assert [t[0] for t in after] == [t[0] for t in before]
    moved = max(abs(a - b) for ta, tb in zip(after, before) for a, b in zip(ta[1] + ta[2], tb[1] + tb[2]))
    assert moved > 1e-6, (before, after)
    assert not _page_errors(d)
    _wait(d, "the new weights in the URL", lambda d: "w=0%2C0%2C0.5" in d.current_url)  # shareable view

    # 5. screenshot of the page with the map
    d.execute_script("document.querySelector('.st-key-explorer_map_chart').scrollIntoView({block: 'center'});")
    time.sleep(0.5)  # let the scroll settle before the capture
    shot = tmp_path / "explorer_browser.png"
    assert d.save_screenshot(str(shot)), "the screenshot could not be saved"
    assert shot.stat().st_size > 10_000
    if os.environ.get("ELMO_SCREENSHOT_DIR"):
        out = Path(os.environ["ELMO_SCREENSHOT_DIR"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, out / shot.name)


CHART_DATA_JS = """  // a plotly chart's traces as [name, xs, ys]
const g = document.querySelector(arguments[0] + ' .js-plotly-plot');
if (!g || !g._fullData) return null;
return g._fullData.map(t => [t.name, Array.from(t.x || []), Array.from(t.y || [])]);
"""


def _pick(driver, key: str, option_start: str) -> None:
    """Choose an option of the selectbox with ``key`` (a combobox: type to filter, click the option)."""
    from selenium.webdriver.common.by import By

    box = _wait(
        driver,
        f"the {key} box",
        lambda d: next(
            (b for b in d.find_elements(By.CSS_SELECTOR, f".st-key-{key} input[role=combobox]") if b.is_displayed()),
            None,
        ),
    )
    box.click()
    box.send_keys(option_start)
    _wait(
        driver,
        f"the option {option_start!r}",
        lambda d: next(
            (o for o in d.find_elements(By.CSS_SELECTOR, "[role=option]") if o.text.startswith(option_start)), None
        ),
    ).click()


def test_compare_two_models_side_by_side(browser, app_url, tmp_path):
    """The Compare tab: the startup (fixture) model against the bundled lm-only model on the bank example."""
    from selenium.webdriver.common.by import By

    from elmo_core.paths import BUNDLED_MODELS

    if not (BUNDLED_MODELS["lm-only"] / "model.safetensors").is_file():
        pytest.skip("the bundled lm-only model is not in this checkout")
    d = browser
    d.get(app_url + "/?ex=bank&word=bank")
    _wait(d, "the map of 'bank'", lambda d: d.execute_script(MAP_DATA_JS), 120)  # a busy machine: a slow first page
    tab = _wait(
        d,
        "the Compare models tab",
        lambda d: next(
            (t for t in d.find_elements(By.CSS_SELECTOR, "[role=tab]") if t.text.startswith("Compare")), None
        ),
    )
    tab.click()
    _pick(d, "explorer_compare_a", "lm_weights.hdf5")
    _pick(d, "explorer_compare_b", "lm-only")
    left = _wait(d, "the left map", lambda d: d.execute_script(MAP_DATA_JS, ".st-key-explorer_compare_map_0"), 60)
    right = _wait(d, "the right map", lambda d: d.execute_script(MAP_DATA_JS, ".st-key-explorer_compare_map_1"), 60)
    # the same 12 occurrences on both sides, as river / money groups, in other places (other models)
    for side in (left, right):
        counts = {name: len(x) for name, x, _ in side}
        assert counts == {"river": 6, "money": 6, "neighbours query": 1}, counts
    moved = max(abs(a - b) for tl, tr in zip(left, right) for a, b in zip(tl[1] + tl[2], tr[1] + tr[2]))
    assert moved > 1e-3, (left, right)
    scores = [d.execute_script(CHART_DATA_JS, f".st-key-explorer_compare_sep_{j}") for j in (0, 1)]
    assert all(s and s[0][0].startswith("1-NN") and len(s[0][2]) == 4 for s in scores), scores
    assert scores[0][0][2] != scores[1][0][2]  # each model's own 1-NN accuracy per layer and the mix
    assert "aligned to the left map" in _body_text(d)
    assert not _page_errors(d)
    shot = tmp_path / "explorer_compare.png"
    d.execute_script("document.querySelector('.st-key-explorer_compare_map_0').scrollIntoView({block: 'start'});")
    time.sleep(0.5)
    assert d.save_screenshot(str(shot))
    if os.environ.get("ELMO_SCREENSHOT_DIR"):
        out = Path(os.environ["ELMO_SCREENSHOT_DIR"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, out / shot.name)


SCROLL_TO_MAP_JS = """
const chart = document.querySelector('.st-key-explorer_map_chart');
if (chart) chart.scrollIntoView({block: 'center'});  // a chart outside the window may not be drawn yet
"""


def _map_points(driver, timeout: float = STEP_TIMEOUT) -> list | None:
    """The contexts map's traces as [name, xs, ys], once the map is drawn."""
    return _wait(driver, "the map", lambda d: d.execute_script(SCROLL_TO_MAP_JS + MAP_DATA_JS), timeout)


def _truncated(driver, css: str) -> list[str]:
    """Texts of the elements matching ``css`` that are cut (wider than their box, or an ellipsis); a closed
    sidebar's are not shown, so not cut."""
    return driver.execute_script(
        """
        return Array.from(document.querySelectorAll(arguments[0]))
            .filter(e => e.offsetParent !== null && !e.closest('[data-testid="stSidebar"][data-collapsed="true"]'))
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText);
    """,
        css,
    )


LABELS = (
    '[data-testid="stWidgetLabel"] p, [data-testid="stCheckbox"] label p, '
    '[data-testid="stMarkdownContainer"] p, [role="tab"] p'
)


def test_a_link_redraws_the_same_map_in_a_fresh_browser_and_presentation_mode(browser, app_url):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    d = browser
    d.get(app_url + "/?ex=bank&word=bank")
    first = _map_points(d, FIRST_PAGE_TIMEOUT)
    # change controls: w_1 by keyboard, layer norm, colour by sentence, the query occurrence, the tab
    slider = _find(d, ".st-key-explorer_w_1 input[type=range]")
    d.execute_script("arguments[0].focus();", slider)
    for _ in range(3):
        slider.send_keys(Keys.ARROW_RIGHT)
    _wait(d, "w_1 = 0.3 in the URL", lambda d: "w=0%2C0.3%2C0" in d.current_url)
    _find(d, ".st-key-explorer_layer_norm label").click()
    _wait(d, "layer norm in the URL", lambda d: "ln=1" in d.current_url)
    sentence = _wait(
        d,
        "the colour-by radio",
        lambda d: next(
            (e for e in d.find_elements(By.CSS_SELECTOR, ".st-key-explorer_color_by label") if e.text == "sentence"),
            None,
        ),
    )
    sentence.click()
    _wait(d, "colour by sentence in the URL", lambda d: "color=sentence" in d.current_url)
    _map_points(d)  # the map redrawn with one colour per sentence
    point = _wait(
        d,
        "occurrence #5 on the map",
        lambda d: next(  # click it: the neighbours query
            (
                p
                for p in d.find_elements(By.CSS_SELECTOR, ".st-key-explorer_map_chart svg .mark-symbol.role-mark path")
                if (p.get_attribute("aria-label") or "").startswith("sentence 5 · #5 ")
            ),
            None,
        ),
    )
    ActionChains(d).move_to_element(point).click().perform()
    _wait(d, "the clicked query #5 in the URL", lambda d: "q=5" in d.current_url)
    link = d.current_url
    shown = _map_points(d)
    assert shown != first  # the controls changed the picture
    assert "sentence 5" in [t[0] for t in shown]

    # the same link in a fresh browser: the same picture, point for point
    with _chromium() as fresh:
        fresh.get(link)
        again = _wait(
            fresh,
            "the same map",
            lambda f: (lambda data: data if data and any(t[0] == "sentence 5" for t in data) else None)(
                f.execute_script(SCROLL_TO_MAP_JS + MAP_DATA_JS)
            ),
            FIRST_PAGE_TIMEOUT,
        )
        assert [t[0] for t in again] == [t[0] for t in shown]
        for a, b in zip(again, shown):
            assert a[1] == pytest.approx(b[1], abs=1e-9) and a[2] == pytest.approx(b[2], abs=1e-9), (a, b)
        ring = next(t for t in again if t[0] == "neighbours query")
        five = next(t for t in again if t[0] == "sentence 5")
        assert (ring[1], ring[2]) == (five[1], five[2])  # the query occurrence travelled too
        # the map can be drawn before the rest of the run's widgets reach the page: wait for them
        assert _find(fresh, ".st-key-explorer_layer_norm input").is_selected()
        total = 2 + math.exp(0.3)
        _wait(fresh, "the s values", _s_values)
        assert _s_values(fresh) == [f"{v:.3f}" for v in (1 / total, math.exp(0.3) / total, 1 / total)]
        assert not _page_errors(fresh)

    # presentation mode at projector width: larger type, fewer controls, nothing cut
    with _chromium("1024,900") as small:
        small.get(link + "&present=1")
        _map_points(small, FIRST_PAGE_TIMEOUT)
        assert small.execute_script("return getComputedStyle(document.documentElement).fontSize") == "19px"
        assert not small.find_elements(By.CSS_SELECTOR, ".st-key-explorer_layer_norm")  # fewer controls
        assert "ELMo gives every word a vector" not in _body_text(small)  # no intro
        width = small.execute_script("return document.documentElement.clientWidth")
        right = small.execute_script(
            "return document.querySelector('.st-key-explorer_map_chart').getBoundingClientRect().right"
        )
        assert right <= width, (right, width)
        assert _truncated(small, LABELS) == []
        # the weights rail stands beside the map, and the four sliders and the whole map fit one 1,024 x 768
        # screen below the page's header (a projector in full-screen mode)
        box = small.execute_script("""
            const r = s => document.querySelector(s).getBoundingClientRect();
            const tabs = [...document.querySelectorAll('[role="tab"]')].map(t => t.getBoundingClientRect().right);
            return {w0: r('.st-key-explorer_w_0').top, gamma: r('.st-key-explorer_gamma').right,
                    plot: r('.st-key-explorer_map_chart'), header: r('header').height, tabs: Math.max(...tabs),
                    tab_list: r('[role="tablist"]').right};""")
        assert box["gamma"] < box["plot"]["left"], box
        assert box["plot"]["bottom"] - box["w0"] <= 768 - box["header"], box
        assert box["tabs"] <= box["tab_list"] + 1, box  # every tab in view, Export too (no scroll arrow)
        assert not _page_errors(small)
        # and the normal mode at the same width cuts no label either, and its rail holds the whole formula (wrapped
        # beside the map, not under it)
        small.get(link)
        _map_points(small)
        assert small.execute_script("return getComputedStyle(document.documentElement).fontSize") != "19px"
        assert _truncated(small, LABELS) == []
        formula = next(
            e
            for e in small.find_elements(By.CSS_SELECTOR, '[data-testid="stMarkdownContainer"] p')
            if e.text.startswith("ELMo = γ")
        )
        edges = small.execute_script(
            """return [arguments[0].getBoundingClientRect().right, arguments[0].scrollWidth,
            arguments[0].clientWidth, document.querySelector('.st-key-explorer_map_chart').getBoundingClientRect().left];""",
            formula,
        )
        assert edges[0] < edges[3] and edges[1] <= edges[2], edges


# Every weight slider, γ, the projection selector and the contexts map (title, points, legend: the chart's whole
# box; its drawn svg and its legend), or the layers side by side in its place, as viewport boxes; the page's top
# bar, which covers what lies under it; the tabs' right edges and the tab list's.
LIVE_BOXES_JS = """
const box = e => { if (!e) return null; const r = e.getBoundingClientRect();
                   return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
const sliders = [...document.querySelectorAll('[class*="st-key-explorer_w_"], .st-key-explorer_gamma')];
const tabs = [...document.querySelectorAll('[role="tab"]')];
const list = document.querySelector('[role="tablist"]');
const chart = document.querySelector('.st-key-explorer_map_chart');
const legends = chart ? [...chart.querySelectorAll('svg.marks g.role-legend')].map(box) : [];
return {sliders: sliders.map(box), map: box(chart), svg: box(chart && chart.querySelector('svg.marks')),
        legend: legends.length ? {top: Math.min(...legends.map(b => b.top)),
                                  bottom: Math.max(...legends.map(b => b.bottom))} : null,
        projection: box(document.querySelector('.st-key-explorer_projection')),
        layers: box(document.querySelector('.st-key-explorer_layer_maps_chart .main-svg')),
        header: document.querySelector('header')?.getBoundingClientRect().height, height: window.innerHeight,
        width: document.documentElement.clientWidth, tabs: tabs.map(box), tab_list: box(list),
        tab_overflow: list ? list.scrollWidth - list.clientWidth : 0};
"""


def _screen(driver, width: int, height: int) -> None:
    """Make the page's viewport exactly ``width`` x ``height`` CSS pixels (a full-screen browser on such a screen:
    a headless window of that size loses its height to the browser's own bars)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


def _live_boxes(driver, layers: bool = False) -> dict:
    """The boxes of LIVE_BOXES_JS once every slider (the fixture biLM: w_0, w_1, w_2, γ), the projection selector
    and the map with its legend (``layers``: the layers side by side) are drawn."""

    def drawn(b: dict) -> bool:
        if len(b["sliders"]) != 4 or not b["projection"]:
            return False
        if layers:
            return bool(b["layers"]) and b["layers"]["bottom"] > b["layers"]["top"]
        return bool(b["svg"] and b["legend"]) and b["map"]["bottom"] > b["map"]["top"]

    return _wait(
        driver,
        "the sliders, the projection and the map",
        lambda d: (lambda b: b if drawn(b) else None)(d.execute_script(f"return (() => {{{LIVE_BOXES_JS}}})()")),
    )


def _controls_and_map(boxes: dict) -> list[dict]:
    """The boxes that must be seen together: the four sliders, the projection, the map's chart, its svg, legend."""
    return boxes["sliders"] + [boxes["projection"], boxes["map"], boxes["svg"], boxes["legend"]]


# Scroll the page (Streamlit scrolls an element, not the window) by arguments[0] pixels; 0 goes back to the top.
SCROLL_PAGE_JS = """
let e = document.querySelector('.st-key-explorer_map_chart, .st-key-explorer_w_0');
while (e && !(e.scrollHeight > e.clientHeight && /auto|scroll/.test(getComputedStyle(e).overflowY))) e = e.parentElement;
e = e || document.scrollingElement;
if (arguments[0] === 0) e.scrollTop = 0; else e.scrollTop += arguments[0];
"""


def _one_screen(driver) -> tuple[float, float, dict]:
    """Scroll so that the highest of the sliders, the projection and the map stands just under the top bar, as one
    scroll of the page would; return the top and bottom of all of them then (viewport pixels), and the boxes."""
    boxes = _live_boxes(driver)
    top = min(b["top"] for b in _controls_and_map(boxes))
    driver.execute_script(SCROLL_PAGE_JS, top - boxes["header"] - 4)
    time.sleep(0.3)
    boxes = _live_boxes(driver)
    every = _controls_and_map(boxes)
    return min(b["top"] for b in every), max(b["bottom"] for b in every), boxes


def _first_screen(driver, what: str, layers: bool = False) -> dict:
    """The boxes with the page scrolled to its top; asserts that the sliders, the projection and the whole map
    with its legend (``layers``: the layers' chart's top) lie below the top bar and above the window's bottom."""
    driver.execute_script(SCROLL_PAGE_JS, 0)
    time.sleep(0.2)
    boxes = _live_boxes(driver, layers)
    seen = boxes["sliders"] + [boxes["projection"]]
    seen += (
        [{"top": boxes["layers"]["top"], "bottom": boxes["layers"]["top"] + 1}]
        if layers
        else _controls_and_map(boxes)[5:]
    )
    for b in seen:
        assert boxes["header"] <= b["top"] and b["bottom"] <= boxes["height"], (what, b, boxes)
    return boxes


# A typed set whose word needs a note: "Spring" and "spring" split at layer 0 (the rail says so).
CASE_SET = """[season] Spring came early this year.
[season] We always plant the garden in spring.
[water] The spring in the valley never runs dry.
[water] Spring water bubbled up between the stones.
[coil] The spring in the old clock broke.
[coil] A small spring keeps the lid shut."""


def _every_set_fits(d, app_url: str, width: int, height: int) -> None:
    """For every example set and a typed set with a note: presentation mode shows the sliders, the projection and
    the whole map (legend included) on the first screen; the normal page too at 1,400 x 1,000, and within one
    window height at 1,024 x 768. "Layers side by side" draws its chart in the map's place."""
    from urllib.parse import quote

    from app.explore.examples import EXAMPLE_SETS

    _screen(d, width, height)
    links = [f"ex={name}&word={quote(e.word)}" for name, e in EXAMPLE_SETS.items()]
    links.append(f"s={quote(CASE_SET)}&word=spring")
    for present in ("&present=1", ""):
        for link in links:
            what = f"{width}x{height} {link[:20]} {present or 'normal'}"
            d.get(f"{app_url}/?{link}{present}")
            _map_points(d, FIRST_PAGE_TIMEOUT)
            if present or width >= 1400:  # no scrolling at all
                _first_screen(d, what)
            else:  # one window height: a scroll brings them all into view together
                top, bottom, boxes = _one_screen(d)
                assert boxes["header"] <= top and bottom <= height, (what, top, bottom, boxes)
            assert not _page_errors(d), what
            if "s=" in link:  # the typed set's note stands in the rail, not above it
                assert "split by capitalisation" in _body_text(d), what
        d.get(f"{app_url}/?{links[0]}&show=layers{present}")
        boxes = _live_boxes(d, layers=True)
        assert boxes["map"] is None, boxes  # the layers instead of the mix's map, in its place
        if present or width >= 1400:
            _first_screen(d, f"{width}x{height} layers {present or 'normal'}", layers=True)
        else:
            assert boxes["layers"]["top"] - min(b["top"] for b in boxes["sliders"]) < height - boxes["header"], boxes
        assert not _page_errors(d)


def _fits_one_screen(d, app_url: str, width: int, height: int) -> None:
    from selenium.webdriver.common.by import By

    _screen(d, width, height)
    d.get(app_url + "/?ex=bank&word=bank")
    _map_points(d, FIRST_PAGE_TIMEOUT)
    d.execute_script(SCROLL_PAGE_JS, 0)
    time.sleep(0.3)
    boxes = _live_boxes(d)
    assert boxes["height"] == height and boxes["width"] <= width, boxes
    if width >= 1400:  # map-first: no scrolling at all to reach the sliders, the projection and the map
        _first_screen(d, "normal, bank")
    top, bottom, boxes = _one_screen(d)
    assert boxes["header"] <= top and bottom <= height, (top, bottom, boxes)
    assert max(b["right"] for b in boxes["sliders"]) < boxes["map"]["left"], boxes  # a rail beside the map
    assert boxes["map"]["right"] <= boxes["width"], boxes
    assert boxes["tab_overflow"] <= 0, boxes
    assert max(t["right"] for t in boxes["tabs"]) <= boxes["tab_list"]["right"] + 1, boxes
    assert _truncated(d, LABELS) == []
    assert not _page_errors(d)

    # presentation mode, switched on in the sidebar while the sidebar is open
    d.execute_script(SCROLL_PAGE_JS, 0)
    _find(d, '[data-testid="stExpandSidebarButton"]').click()
    _wait(
        d,
        "the open sidebar",
        lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"][data-collapsed="false"]'),
    )
    _find(d, ".st-key-app_present label").click()
    _wait(
        d,
        "presentation mode's type",
        lambda d: d.execute_script("return getComputedStyle(document.documentElement).fontSize") == "19px",
    )
    _wait(
        d,
        "the sidebar closed by presentation mode",
        lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"][data-collapsed="true"]'),
    )
    _wait(d, "present=1 in the URL", lambda d: "present=1" in d.current_url)
    _map_points(d)
    boxes = _first_screen(d, "presentation, bank")  # no scrolling, at both sizes
    assert max(b["right"] for b in boxes["sliders"]) < boxes["map"]["left"], boxes
    # every tab in view: none past the tab list's right edge or the window's, and no scrolling inside the list
    assert boxes["tab_overflow"] <= 0, boxes
    assert max(t["right"] for t in boxes["tabs"]) <= min(boxes["tab_list"]["right"] + 1, boxes["width"]), boxes
    assert _truncated(d, LABELS) == []
    assert not _page_errors(d)


def test_the_sliders_and_the_whole_map_fit_one_screen_and_no_tab_is_hidden(browser, app_url):
    """The map-first page (issues 29 and 34): every weight slider, γ, the projection selector and the whole
    contexts map with its legend are on the first screen without scrolling, for every example set and a typed
    set whose word needs a note: in presentation mode at 1,024 x 768 and 1,400 x 1,000, in the normal page at
    1,400 x 1,000; the normal page at 1,024 x 768 shows them within one window height. "Layers side by side"
    draws its chart in the map's place. No tab hides behind the tab bar's scroll, and presentation mode closes
    an open sidebar when it is switched on."""
    with _chromium("1024,968") as small:
        _fits_one_screen(small, app_url, 1024, 768)
        _every_set_fits(small, app_url, 1024, 768)
    _fits_one_screen(browser, app_url, 1400, 1000)
    _every_set_fits(browser, app_url, 1400, 1000)

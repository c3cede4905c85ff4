"""The Corpus page in a real browser (headless Chromium, the tiny fixture biLM): a server started with an atlas built
here (``ELMO_EXPLORER_ATLAS``) and the bundled reference corpus opens the atlas's "bank" with every occurrence on the
map, a drag on the page's own w_2 slider moves the marks while the mouse is held, a click on a mark gives its
nearest contexts (the same word, and any word from the atlas), and the reference corpus's "bank" shows all its
311 occurrences (297 sentences, embedded on demand). Screenshots go to ``$ELMO_SCREENSHOT_DIR`` when set. The
browser and helpers are tests/app/test_browser.py's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from deploy.replicas import free_port, healthy
from elmo_core import REFERENCE_DIR
from tests.app.test_browser import (  # noqa: F401  (browser is a fixture)
    FIRST_PAGE_TIMEOUT,
    FIXTURE,
    MAP_DATA_JS,
    ROOT,
    STARTUP_TIMEOUT,
    _body_text,
    _find,
    _page_errors,
    _pick,
    _screen,
    _wait,
    browser,
)
from tests.app.test_corpus_page import build_fixture_atlas

pytestmark = [pytest.mark.browser, pytest.mark.multiprocess]
MAP = ".st-key-corpus_map"


@pytest.fixture
def corpus_url(tmp_path):
    """The explorer with the fixture biLM, the reference corpus and a folder holding one atlas ("news", built here
    with the same biLM); stopped (whole process group) afterwards. Yields (url, atlas folder)."""
    atlas = build_fixture_atlas(tmp_path / "atlases")
    port = free_port()
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        ELMO_EXPLORER_OPTIONS=str(FIXTURE / "options.json"),
        ELMO_EXPLORER_WEIGHTS=str(FIXTURE / "lm_weights.hdf5"),
        ELMO_EXPLORER_DEVICE="cpu",
        ELMO_EXPLORER_UMAP_WARMUP="0",
        ELMO_EXPLORER_REFERENCE=str(REFERENCE_DIR),
        ELMO_EXPLORER_ATLAS=str(atlas.parent),
    )
    for key in ("ELMO_EXPLORER_CHECKPOINT", "ELMO_EXPLORER_ALLOW_SERVER_PATHS", "ELMO_EXPLORER_MODEL"):
        env.pop(key, None)
    log = open(tmp_path / "streamlit.log", "wb")
    command = [sys.executable, "-m", "streamlit", "run", "app/streamlit_app.py", "--server.headless", "true"]
    command += ["--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    command += ["--server.fileWatcherType", "none"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server did not start:\n{(tmp_path / 'streamlit.log').read_text()}")
            time.sleep(0.3)
        yield url, atlas
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


def _marks(driver) -> list | None:
    return driver.execute_script(MAP_DATA_JS, MAP)


def _points(traces) -> int:
    return sum(len(t[1]) for t in traces if t[0] != "neighbours query")


def _shot(driver, name: str, tmp_path) -> None:
    driver.execute_script(f"document.querySelector('{MAP}').scrollIntoView({{block: 'start'}});")
    time.sleep(0.5)
    path = tmp_path / f"{name}.png"
    assert driver.save_screenshot(str(path))
    if os.environ.get("ELMO_SCREENSHOT_DIR"):
        driver.save_screenshot(os.path.join(os.environ["ELMO_SCREENSHOT_DIR"], f"{name}.png"))


def test_corpus_mode_opens_an_atlas_and_the_reference_corpus(browser, corpus_url, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    from elmo_core import Atlas

    url, atlas = corpus_url
    count = Atlas.open(atlas).count("bank")
    d = browser
    _screen(d, 1400, 1100)
    d.get(url + "/corpus")

    # 1. the atlas (the default source when one is set): every occurrence of "bank" on the map
    released = _wait(
        d,
        "the atlas's map",
        lambda d: (lambda m: m if m and _points(m) == count else None)(_marks(d)),
        FIRST_PAGE_TIMEOUT,
    )
    assert f"{count} occurrences of “bank” in the atlas “news”" in _body_text(d)
    assert str(atlas) not in _body_text(d)

    # 2. a drag on the page's own w_2 slider: the marks move while the mouse is held
    slider = _find(d, ".st-key-corpus_w_2 input[type=range]")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", slider)
    time.sleep(0.5)
    released = _marks(d)
    ActionChains(d).move_to_element(slider).click_and_hold().perform()
    seen = []
    for _ in range(3):
        ActionChains(d).move_by_offset(20, 0).perform()
        time.sleep(0.3)
        seen.append(_marks(d))
    assert seen[-1] != released, "the map did not move during the drag"
    ActionChains(d).release().perform()
    _wait(
        d,
        "the released weight",
        lambda d: float(slider.get_attribute("value")) > 0 and "s = softmax(w)" in _body_text(d),
    )
    _wait(d, "the map after the release", lambda d: (lambda m: m if m and _points(m) == count else None)(_marks(d)))
    assert not _page_errors(d)

    # 3. a click on a mark: its nearest contexts, the same word and any word (the atlas)
    mark = _wait(d, "a mark", lambda d: d.find_elements(By.CSS_SELECTOR, f"{MAP} svg .mark-symbol.role-mark path"))[0]
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", mark)
    time.sleep(0.3)
    ActionChains(d).move_to_element(mark).click().perform()
    _wait(d, "the nearest contexts", lambda d: "among all" in _body_text(d) and "Words found:" in _body_text(d))
    assert not _page_errors(d)
    _shot(d, "corpus_atlas", tmp_path)

    # 4. the reference corpus: bank's 297 sentences embedded on demand, its 311 occurrences all drawn
    d.execute_script("document.querySelector('.st-key-corpus_source').scrollIntoView({block: 'center'});")
    _pick(d, "corpus_source", "the reference corpus")
    _wait(
        d,
        "the reference corpus's map",
        lambda d: (lambda m: m if m and _points(m) == 311 else None)(_marks(d)),
        FIRST_PAGE_TIMEOUT,
    )
    assert "311 occurrences of “bank” in the reference corpus" in _body_text(d)
    assert "needs an atlas" in _body_text(d)
    assert not _page_errors(d)
    _shot(d, "corpus_reference", tmp_path)

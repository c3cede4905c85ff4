"""A real browser opens crafted links (issue 10, finding 4): the page's DOM holds no link, image, styled text
or KaTeX that came from the link, and the text the user wrote is shown as written.

Uses the same server and Chromium fixtures as tests/app/test_browser.py (skipped without the browser, unless
ELMO_REQUIRE_BROWSER=1).
"""

from __future__ import annotations

import urllib.parse

import pytest

from tests.app.test_browser import _body_text, _idle, _page_errors, _wait, app_url, browser  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.multiprocess]


def _text(driver) -> str:
    return _body_text(driver).replace("\u2060", "")  # app.render.safe.md's invisible autolink breakers


CRAFTED = [
    ("bank", "[click me](https://example.org/login)"),
    ("bank", "![x](http://host/pixel.png)"),
    ("bank", ":red[**ALERT**] $x^2$ www.example.org <b>bold</b>"),
    ("bank", "mail me@example.org or https://example.org/x"),
    ("[evil](https://example.org)", "bank"),
]
# Elements that only the user's text could have made (the app itself shows no links or images in the main
# area, and none of these in the sidebar except Streamlit's own).
FORBIDDEN_JS = """
const main = document.querySelector('[data-testid="stMain"]') || document.body;
const side = document.querySelector('[data-testid="stSidebar"]');
const found = [];
for (const root of [main, side]) {
  if (!root) continue;
  for (const a of root.querySelectorAll('a[href]')) {
    if ((a.getAttribute('href') || '').includes('example.org') || /click me|evil/.test(a.textContent)) found.push('a: ' + a.outerHTML);
  }
  for (const img of root.querySelectorAll('img')) {
    if ((img.getAttribute('src') || '').includes('host')) found.push('img: ' + img.outerHTML);
  }
  for (const el of root.querySelectorAll('.katex')) found.push('katex: ' + el.outerHTML.slice(0, 200));
  // the app's own bold may hold user text; an element holding only the user's marked-up word came from them
  for (const el of root.querySelectorAll('[style*="color"], b, strong, em')) {
    if (/^(ALERT|bold|big)$/.test(el.textContent.trim())) found.push('styled: ' + el.outerHTML.slice(0, 200));
  }
}
return found;
"""


def test_crafted_links_render_no_element_from_the_link(browser, app_url):  # noqa: F811
    from selenium.webdriver.common.by import By

    d = browser
    for example, word in CRAFTED:
        query = urllib.parse.urlencode({"ex": example, "word": word})
        d.get(f"{app_url}/?{query}")
        visible = word if example == "bank" else example
        _wait(
            d,
            f"the warning that shows {visible!r}",
            lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stAlert"]') and visible in _text(d),
            150,
        )
        _wait(d, "the page to settle", lambda d: _idle(d))
        assert d.execute_script(FORBIDDEN_JS) == [], (example, word)
        assert not _page_errors(d)


def test_uploaded_model_name_is_literal_and_a_bad_file_keeps_the_model(browser, app_url, tmp_path):  # noqa: F811
    """Upload the fixture model under a markdown file name, then an HDF5 file with external storage."""
    import shutil

    import h5py
    from selenium.webdriver.common.by import By

    from tests.app.test_browser import FIXTURE

    name = "[pwn](https:example.org) **big** me@example.org.hdf5"  # no "/" in a file name
    good = tmp_path / name
    shutil.copy(FIXTURE / "lm_weights.hdf5", good)
    bad = tmp_path / "external.hdf5"
    shutil.copy(FIXTURE / "lm_weights.hdf5", bad)
    (tmp_path / "secret.bin").write_bytes(b"s" * 64)
    with h5py.File(bad, "a") as f:
        del f["CNN_proj/b_proj"]
        f.create_dataset(
            "CNN_proj/b_proj", shape=(16,), dtype="float32", external=[(str(tmp_path / "secret.bin"), 0, 64)]
        )

    def open_sidebar(d) -> None:
        if d.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"][data-collapsed="true"]'):
            _wait(
                d,
                "the sidebar's open button",
                lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, '[data-testid="stExpandSidebarButton"]')), None),
            ).click()
            _wait(
                d,
                "the open sidebar",
                lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"][data-collapsed="false"]'),
            )

    d = browser
    d.get(app_url + "/")
    _wait(d, "the sidebar", lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"]'), 60)
    open_sidebar(d)  # the page starts with it closed
    side = lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]')  # noqa: E731

    def open_expander() -> None:
        # The page reruns after a load and draws the expander closed again: open it before every upload.
        summary = _wait(
            d,
            "the upload expander",
            lambda d: next(
                (e for e in side(d).find_elements(By.CSS_SELECTOR, "summary") if "Load your own ELMo" in e.text), None
            ),
        )
        if summary.find_element(By.XPATH, "..").get_attribute("open") is None:
            summary.click()

    def upload(weights) -> None:
        open_expander()
        inputs = _wait(
            d,
            "the two uploaders",
            lambda d: (lambda found: found if len(found) == 2 else None)(
                side(d).find_elements(By.CSS_SELECTOR, 'input[type="file"]')
            ),
        )
        inputs[0].send_keys(str(FIXTURE / "options.json"))
        inputs[1].send_keys(str(weights))
        _wait(
            d,
            "both files uploaded",
            lambda d: len(side(d).find_elements(By.CSS_SELECTOR, '[data-testid="stFileChip"]')) == 2,
            60,
        )
        button = _wait(
            d,
            "the load button",
            lambda d: next(
                (b for b in side(d).find_elements(By.TAG_NAME, "button") if b.text == "Load uploaded model"), None
            ),
        )
        button.click()

    upload(good)
    _wait(d, "the success message", lambda d: "Loaded " + name in side(d).text.replace("\u2060", ""), 60)
    assert d.execute_script(FORBIDDEN_JS.replace("click me|evil", "pwn")) == []
    # A fresh page (a new session, so a new upload widget): the bad file is refused and the model stays.
    d.get(app_url + "/")
    _wait(d, "the sidebar", lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"]'), 60)
    open_sidebar(d)  # the page starts with it closed
    upload(bad)
    _wait(d, "the refusal", lambda d: "uses external storage" in side(d).text, 60)
    text = side(d).text.replace("\u2060", "")
    assert "Still using " in text and "s" * 64 not in text
    assert not _page_errors(d)


def test_the_contexts_map_shows_hostile_labels_as_text(browser, app_url):  # noqa: F811
    """The contexts map is a Vega-Lite chart: its legend draws labels as SVG text and its hover text (Vega's
    tooltip) escapes them, so a label or sentence that is HTML shows as written and makes no element."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    from tests.app.test_browser import _map_points

    img = '<img src=x onerror="window.pwned=1">'
    link = '<a href="https://example.org">link</a>'
    text = "\n".join(
        [
            f"[{link}] We sat on the bank of the river.",
            f"[{link}] The river bank was muddy.",
            f"[{img}] The bank raised its rates.",
            f"[{img}] I paid the cheque into the {img} bank.",
        ]
    )
    d = browser
    d.get(f"{app_url}/?{urllib.parse.urlencode({'s': text, 'word': 'bank'})}")
    names = {t[0] for t in _map_points(d, 150)}
    assert names == {link, img, "neighbours query"}, names
    legend = d.execute_script(
        "return Array.from(document.querySelectorAll('.st-key-explorer_map_chart svg text')).map(t => t.textContent)"
    )
    assert link in legend and img in legend
    hovered = []
    for mark in d.find_elements(By.CSS_SELECTOR, ".st-key-explorer_map_chart svg .mark-symbol.role-mark path")[:4]:
        ActionChains(d).move_to_element(mark).perform()
        hovered.append(
            _wait(
                d,
                "the hover text",
                lambda d: d.execute_script(
                    "const t = document.querySelector('#vg-tooltip-element.visible');"
                    "return t ? [t.innerText, t.querySelectorAll('a, img, span[style]').length] : null"
                ),
            )
        )
    assert any(link in shown and "«bank»" in shown for shown, _ in hovered), hovered
    assert any(img in shown for shown, _ in hovered), hovered
    assert all(elements == 0 for _, elements in hovered), hovered
    assert not d.execute_script("return window.pwned") and not _page_errors(d)

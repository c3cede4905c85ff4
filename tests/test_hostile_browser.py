"""A real browser opens crafted links (issue 10, finding 4): the page's DOM holds no link, image, styled text
or KaTeX that came from the link, and the text the user wrote is shown as written.

Uses the same server and Chromium fixtures as tests/test_browser.py (skipped without the browser, unless
ELMO_REQUIRE_BROWSER=1).
"""
from __future__ import annotations

import urllib.parse

from tests.test_browser import _body_text, _idle, _page_errors, _wait, app_url, browser  # noqa: F401


def _text(driver) -> str:
    return _body_text(driver).replace("\u2060", "")  # app.safe.md's invisible autolink breakers

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
  for (const el of root.querySelectorAll('.katex, [style*="color"], b, strong')) {
    if (/ALERT|bold|x\\^?2/.test(el.textContent)) found.push('styled: ' + el.outerHTML.slice(0, 200));
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
        _wait(d, f"the warning that shows {visible!r}", lambda d: d.find_elements(
            By.CSS_SELECTOR, '[data-testid="stAlert"]') and visible in _text(d), 60)
        _wait(d, "the page to settle", lambda d: _idle(d))
        assert d.execute_script(FORBIDDEN_JS) == [], (example, word)
        assert not _page_errors(d)

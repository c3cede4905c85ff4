"""app/render/safe.py: user text reaches markdown and plotly as exactly its characters."""

from __future__ import annotations

import re

import pytest

from app.render.safe import md, md_with_code, plot, shown
from tests.conftest import IMAGE, LABEL_BIG, LABEL_LINK, LINK, STYLED, render_markdown


@pytest.mark.parametrize(
    "text",
    [
        LINK,
        IMAGE,
        STYLED,
        LABEL_LINK,
        "see www.example.org or me@example.org",
        "# head\n- item\n1. x",
        "<https://a.b>",
        "a\u2028b\x0cc",
        "`code` *em* _u_ ~~s~~ | t |",
    ],
)
def test_md_renders_exactly_the_characters(text):
    html = render_markdown(md(text))
    assert "<a" not in html and "<img" not in html and "<em" not in html and "<code" not in html
    assert "<h1" not in html and "<li" not in html and "<del" not in html and "<b>" not in html
    import html as html_lib

    inner = re.sub(r"^<p>|</p>\n$", "", html)
    from elmo_core.data.text import clean_line

    assert html_lib.unescape(inner).replace("\u2060", "") == clean_line(text)
    assert shown(md(text)) == clean_line(text)
    assert not re.search(r"(?<!\\)[:$\[\]<&]", md(text))  # Streamlit's :color[]/:icon:, KaTeX, links, HTML


def test_md_with_code_shows_our_commands_as_code_and_the_rest_literally():
    html = render_markdown(md_with_code("install it with `apt-get install -y wordnet-base` in /data/*x*"))
    assert html == "<p>install it with <code>apt-get install -y wordnet-base</code> in /data/*x*</p>\n"
    assert md_with_code("an `odd one") == md("an `odd one")  # unpaired: all literal


def test_plot_escapes_pseudo_html():
    assert plot(LABEL_LINK) == '&lt;a href="https://example.org"&gt;link&lt;/a&gt;'
    assert "<" not in plot(LABEL_BIG) and plot("a & b") == "a &amp; b"

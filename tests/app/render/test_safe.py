"""app/render/safe.py: user text reaches markdown and plotly as exactly its characters (issue 10)."""
from __future__ import annotations

import re

import pytest

from app.render.safe import md, md_with_code, plot, shown, visible
from tests.conftest import IMAGE, LABEL_BIG, LABEL_LINK, LINK, STYLED, render_markdown


@pytest.mark.parametrize("text", [LINK, IMAGE, STYLED, LABEL_LINK, "see www.example.org or me@example.org", "# head\n- item\n1. x", "<https://a.b>",
                                  "a\u2028b\x0cc", "`code` *em* _u_ ~~s~~ | t |"])
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


def test_visible_writes_invisible_characters_as_escapes():
    assert visible("bank") == "bank" and visible("naïve café") == "naïve café"
    assert visible("ba\u200bnk") == "ba\\u200bnk" and visible("\ufeffa\u200db") == "\\ufeffa\\u200db"
    assert visible("a\tb\x85c\u2028d\xa0e") == "a\\tb\\x85c\\u2028d\\xa0e"  # as repr writes them
    assert shown(md(visible("ba\u200bnk"))) == "ba\\u200bnk"  # and md keeps the escape on the page


def test_hide_paths_keeps_what_is_missing_and_how_to_fix_it_but_not_where_the_server_looked():
    from app.render.safe import hide_paths
    message = ("WordNet not found (looked in /usr/share/wordnet, /srv/app/data/probes/wordnet): install it with "
               "`apt-get install -y wordnet-base`, or run `python -m elmo_core probe --prepare` (into data/probes/)")
    assert hide_paths(message) == ("WordNet not found on this server: install it with `apt-get install -y "
                                   "wordnet-base`, or run `python -m elmo_core probe --prepare` (into data/probes/)")
    assert hide_paths("no reference corpus at /home/teacher/ref") == "no reference corpus at …"
    assert hide_paths("the sense probe '/opt/x/probe.tsv' is missing; see C:\\data\\x, ~/y or https://e.org/a") == (
        "the sense probe '…' is missing; see …, … or https://e.org/a")  # a URL and and/or are no paths
    assert hide_paths("read/write and/or") == "read/write and/or"

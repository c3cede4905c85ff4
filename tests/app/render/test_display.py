"""app.render.display: concordance (keyword-in-context) lines as an HTML table and list."""

from __future__ import annotations

import re

from app.explore.text import Kwic, kwic
from app.render.display import kwic_table

TOKENS = "On a warm afternoon we sat on the grassy bank of the slow river and watched the boats go by .".split()


def test_the_table_aligns_left_context_right_and_escapes_everything():
    lines = [kwic(TOKENS, 9, 30, 30), Kwic("<script>alert(1)</script>", "<b>bank</b>", "& more")]
    html = kwic_table(lines, [("cos", "c", ["0.912", "0.5"]), ("label", "lab", ["river", "<i>x</i>"])])
    rows = re.findall(r"<tr>(.*?)</tr>", html)[1:]  # after the header
    assert len(rows) == 2
    for row, _line in zip(rows, lines):
        cells = re.findall(r'<td class="(\w*)">(.*?)</td>', row)
        assert [c for c, _ in cells] == ["c", "lab", "l", "t", "r"]  # left context | target | right context
    assert "<mark>bank</mark>" in rows[0]
    assert "<script>" not in html and "<b>bank" not in html and "<i>x" not in html
    assert "&lt;script&gt;" in html and "&lt;b&gt;bank&lt;/b&gt;" in html and "&amp; more" in html
    # the left context is right-aligned and clipped on its left, the right context clipped on its right
    assert re.search(r"td\.l\{direction:rtl;text-align:right;text-overflow:ellipsis\}", html)
    assert re.search(r"td\.l>span\{direction:ltr", html) and re.search(r"td\.r\{text-align:left", html)


def test_the_table_has_no_fixed_background_behind_text_so_it_reads_in_dark_and_light_themes():
    lines = [kwic(TOKENS, 9, 30, 30)] * 20
    for html in (kwic_table(lines), kwic_table(lines, max_height_px=230)):
        css = html[: html.index("</style>")]
        # only the highlighted target and the label chips have a colour of their own, each with its own text colour
        backgrounds = re.findall(r"([^{}]+)\{[^}]*background:(#[0-9a-f]+|white|var\([^)]*\))", css)
        assert sorted(sel.strip() for sel, _ in backgrounds) == ["table.kwic td.lab span", "table.kwic td.t mark"]
    scrolling = kwic_table(lines, max_height_px=230)
    # the header stays above the scrolling body in a table of its own, with the same columns
    head, body = re.search(
        r'<div class="kwic-head">(.*?)</div><div class="kwic-body" style="max-height:230px">(.*)', scrolling
    ).groups()
    assert "<thead>" in head and "<tbody>" not in head and body.count("<tr>") == 20 and "<thead>" not in body
    assert re.search(r"<colgroup>.*?</colgroup>", head).group() == re.search(r"<colgroup>.*?</colgroup>", body).group()


def test_kwic_list_wraps_short_contexts_around_the_marked_target_and_escapes_everything():
    from app.render.display import kwic_list

    line = Kwic("we sat by the <b>old</b> muddy edge of the", "bank", "of the river & watched the boats go by")
    out = kwic_list([line], [("cos", "c", ["0.877"]), ("label", "lab", ["<river>"])], chars=20)
    assert "<b>" not in out and "&lt;b&gt;old&lt;/b&gt;" not in out  # cut: the 20 characters nearest the target
    assert "…muddy edge of the <mark>bank</mark> of the river &amp;…" in out
    assert '<span class="c">0.877</span><span class="lab">&lt;river&gt;</span>' in out
    whole = kwic_list([Kwic("the", "bank", "closed")])
    assert "the <mark>bank</mark> closed" in whole and "…" not in whole

"""Hostile text (``tests.conftest.HOSTILE``) through every export and every text-producing render function: the
exported HTML runs no script of the user's, CSV and TSV cells start no formula, markdown holds no active link,
Vega and plotly text holds no tag, and the text still shows as typed."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from html.parser import HTMLParser

import numpy as np
import pytest

from app.explore import inputs
from app.explore.controls import Controls
from app.render import display, exports, hover, map_chart, map_texts, safe, words
from elmo_core import clean_line
from tests.conftest import HOSTILE, SCRIPT_LABEL, render_markdown

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _lines(texts):
    """One labelled sentence per text, read as a pasted (or linked) text box is: "[label] the bank <text>"."""
    box = "\n".join(f"[{t}] the bank {t}" if len(t) <= inputs.MAX_LABEL_CHARS else f"the bank {t}" for t in texts)
    return inputs.parse_input(box, tokenizer=str.split, max_lines=len(texts)).lines


def _chart(texts, title="t"):
    lines = _lines(texts)
    occ = inputs.find_occurrences(lines, "bank")
    coords = np.arange(2 * len(occ), dtype=np.float64).reshape(-1, 2)
    return map_chart.contexts_chart(coords, occ, lines, "label", title=title), lines, occ


class _Page(HTMLParser):
    """The tags of an HTML page, the text of each script element and the text outside them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self.text, self._in_script = [], [], [], False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)

    def handle_comment(self, data):
        self.tags.append("<!--")


def _page(data: bytes) -> _Page:
    page = _Page()
    page.feed(data.decode("utf-8"))
    page.close()
    return page


def _embedded_spec(script: str) -> dict:
    """The Vega-Lite spec written into the page's last script (a JSON object that starts with "$schema")."""
    return json.JSONDecoder().raw_decode(script, script.index('{"$schema"'))[0]


@pytest.fixture(scope="module")
def html_pages():
    """(benign page, hostile page, hostile chart): the HTML map export of a harmless chart and of one whose labels,
    sentences and title are the hostile corpus."""
    benign, _, _ = _chart(["river", "money"])
    hostile, _, _ = _chart(HOSTILE, title=" · ".join(h[:40] for h in HOSTILE))
    return map_chart.chart_html(benign), map_chart.chart_html(hostile), hostile


def test_a_script_label_runs_nothing_in_the_html_map(html_pages):
    """The reported case: the label ``</script><script>alert(1)</script>`` (a shared link can carry it) must not
    end the page's script and start one of its own."""
    benign, hostile, chart = html_pages
    assert SCRIPT_LABEL in chart.names  # it did arrive as a label, as typed
    page, template = _page(hostile), _page(benign)
    assert page.tags == template.tags  # exactly the template's elements: no script, img or comment of the user's
    assert len(page.scripts) == len(template.scripts)
    for script in page.scripts:
        assert "alert(" not in _JSON_STRING.sub('""', script[-200_000:])  # alert( only inside JSON strings
    assert not re.search(r"</script|<!--|<script", page.scripts[-1], re.IGNORECASE)
    assert "\u2028" not in page.scripts[-1] and "\u2029" not in page.scripts[-1]
    assert "alert(" not in "".join(page.text)
    assert _embedded_spec(page.scripts[-1]) == json.loads(json.dumps(chart.to_dict()))  # shown as typed


def test_script_json_keeps_the_value_and_cannot_end_a_script():
    value = {"a": HOSTILE, "b": ["</script>", "<!--", "&amp;", "\u2028\u2029"]}
    text = safe.script_json(value)
    assert json.loads(text) == value
    assert not re.search(r"[<>&\u2028\u2029]", text)


def test_every_csv_and_tsv_cell_starts_no_formula_and_holds_one_line():
    lines = _lines(HOSTILE)
    occ = inputs.find_occurrences(lines, "bank")
    x = np.ones((len(occ), 3))
    settings = exports.Settings(Controls(model="=evil()", word="bank"), (0.3, 0.3, 0.4), "pca")
    for data in (
        exports.vectors_csv(lines, occ, x, settings),
        exports.coords_csv(lines, occ, x[:, :2], settings),
    ):
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
        assert len(rows) == len(occ) + 1
        for cell in (c for row in rows for c in row):
            assert not cell.lstrip().startswith(exports.FORMULA_PREFIXES) or re.fullmatch(r"-?[\d.e+-]+", cell)
    with zipfile.ZipFile(io.BytesIO(exports.projector_zip(lines, occ, x, settings))) as z:
        meta = z.read("metadata.tsv").decode("utf-8").splitlines()
        assert json.loads(z.read("settings.json"))["sentences"][0]["label"] == HOSTILE[0]
    assert len(meta) == len(occ) + 1
    for cell in (c for row in meta[1:] for c in row.split("\t")):
        assert not cell.lstrip().startswith(exports.FORMULA_PREFIXES)
    doc = json.loads(exports.settings_json(settings, lines, occ))
    assert [s["label"] for s in doc["sentences"]] == [ln.label or "" for ln in lines]  # JSON keeps text as typed
    npz = np.load(io.BytesIO(exports.npz_bytes({"x": x}, settings, lines, occ)), allow_pickle=False)
    assert json.loads(str(npz["settings"])) == doc


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_shows_the_text_and_holds_no_link_html_or_math(text):
    out = safe.md(text)
    assert "\n" not in out
    rendered = render_markdown(out)
    assert not re.search(r"<(a|img|script|span|b|strong|em)\b", rendered), rendered
    assert safe.shown(out) == clean_line(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_html_and_plotly_text_hold_no_tag(text):
    for out in (safe.html_text(text), safe.plot(text)):
        assert "<" not in out and ">" not in out and "\u202e" not in out and "\x00" not in out
    assert '"' not in safe.html_text(text) and "'" not in safe.html_text(text)  # safe in an attribute too


_LATEX_LITERAL = re.compile(r"\\textbackslash\{\}|\\textasciitilde\{\}|\\textasciicircum\{\}|\\[{}$&#%_]")


@pytest.mark.parametrize("text", HOSTILE)
def test_latex_text_holds_no_command_or_math_of_the_user(text):
    """Apart from the literal-character commands ``latex`` writes, no backslash, brace, ``$`` or other special
    character is left: no ``\\href``, ``\\url``, group or math; and the literals spell the text as typed."""
    out = safe.latex(text)
    assert not re.search(r"[\\{}$&#%_~^]", _LATEX_LITERAL.sub("", out))
    literal = {r"\textbackslash{}": "\\", r"\textasciitilde{}": "~", r"\textasciicircum{}": "^"}
    assert _LATEX_LITERAL.sub(lambda m: literal.get(m.group(0), m.group(0)[1:]), out) == clean_line(text)


def test_render_functions_escape_every_hostile_text():
    lines = _lines(HOSTILE)
    occ = inputs.find_occurrences(lines, "bank")
    # concordance HTML: only the template's tags
    for out in (
        display.kwic_table(*words.occurrence_lines(occ, lines)),
        display.kwic_list(*words.occurrence_lines(occ, lines)),
    ):
        tags = set(re.findall(r"<\s*([a-zA-Z!/]+)", out))
        assert tags <= {
            "style",
            "/style",
            "div",
            "/div",
            "table",
            "/table",
            "thead",
            "/thead",
            "tbody",
            "/tbody",
            "colgroup",
            "/colgroup",
            "col",
            "tr",
            "/tr",
            "th",
            "/th",
            "td",
            "/td",
            "span",
            "/span",
            "mark",
            "/mark",
            "caption",
            "/caption",
        }, tags
        assert "alert(" not in re.sub(r"<[^>]*>", "", out) or "&lt;" in out
    # plotly hover: only <br> and <b>
    for o in occ:
        text = hover.hover_text(lines[o.line].tokens, o.position, escaping="plotly")
        assert set(re.findall(r"</?\w+", text)) <= {"<br", "<b", "</b"}
    # Vega text: no control or format characters (a tooltip and a legend show them as typed)
    texts = map_texts.map_texts(occ, lines)
    for value in texts.occ_text:
        assert value == clean_line(value)

"""Hostile text (``tests.conftest.HOSTILE``) through every view of the app in AppTest: sentences, sense labels, an
uploaded file's name and a link's parameters drawn from the corpus, shown on every tab of the Explorer (the map in
the mix and layers side by side, Neighbours, Similarity, Senses, Compare, Export), on the Layer probes page and in
the model panel. Every element of each page is read: no view raises, markdown shows the user's text only
escaped, HTML holds only the page's own tags, and the Vega-Lite charts carry the labels only as data values."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Table

from app.explore import inputs
from app.render import safe
from app.session import keys
from elmo_core import clean_line
from tests.conftest import (
    ALLENNLP,
    APP,
    APP_TIMEOUT,
    HOSTILE,
    LABEL_LINK,
    LINK,
    SCRIPT_LABEL,
    fake_task,
    misspelt_options,
    render_markdown,
    set_app_env,
)

pytestmark = pytest.mark.usefixtures("fresh_caches_per_module")

LONG_WORD = max(HOSTILE, key=len)


def _box(texts) -> str:
    """One sentence per text, "[label] the bank <text>" where the text can be a label (at most
    ``MAX_LABEL_CHARS`` characters, no bracket), "the bank <text>" otherwise."""
    return "\n".join(
        f"[{t}] the bank {t}" if len(t) <= inputs.MAX_LABEL_CHARS and not re.search(r"[\[\]]", t) else f"the bank {t}"
        for t in texts
    )


# The link's sentences: the corpus with the very long word cut to 60 characters, so that the whole text fits in the
# link (and so in the page's "Copy link" button); the uploaded file holds the corpus as it is.
LINK_BOX = _box([t if t is not LONG_WORD else t[:60] for t in HOSTILE])
FILE_BOX = _box(HOSTILE)
LABELS = sorted({ln.label for ln in inputs.parse_input(LINK_BOX).lines if ln.label})
# what the user typed, as the page would hold it: none of these may reach markdown or HTML unescaped
PAYLOADS = sorted({clean_line(t) for t in [*HOSTILE, *LABELS] if re.search(r"[<>\[\]()&$\\:*`]", t)})
HTML_PAYLOADS = [t for t in PAYLOADS if re.search("[<>&\"']", t)]  # the ones HTML reads as markup
PLOT_PAYLOADS = [t for t in PAYLOADS if re.search("[<>&]", t)]  # the ones plotly's pseudo-HTML reads as markup
# a link's parameters this explorer does not know, named in its notes
UNKNOWN_PARAMS = {LINK: SCRIPT_LABEL, HOSTILE[1]: HOSTILE[12], SCRIPT_LABEL: LINK}
OPTIONS_NAME = f"{HOSTILE[1]}{LINK}.json"
WEIGHTS_NAME = f"{HOSTILE[12]}.hdf5"
SENTENCES_NAME = f"{SCRIPT_LABEL}{LINK}.txt"

STEPS = (
    "map",
    "map: layers side by side",
    "neighbours",
    "similarity",
    "senses",
    "compare",
    "export",
    "upload",
    "model panel",
    "layer probes",
    "word from the corpus",
)


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


@pytest.fixture(scope="module")
def pages(tmp_path_factory, embedder):
    """{step: every node of the element tree that step's run drew}: one AppTest session per entry point (a link
    with hostile sentences; a link with hostile parameters that opens the Layer probes page), each step one run."""
    from elmo_core import probes

    folder = tmp_path_factory.mktemp("hostile-views")
    report = probes.new_report(embedder).to_json()
    report["tasks"] = {task: fake_task(task, s) for task, s in (("wsd", [0.2, 0.3, 0.5]), ("loo_sense", None))}
    (folder / "probes.json").write_text(json.dumps(report))
    shot: dict[str, list] = {}
    with pytest.MonkeyPatch.context() as mp:
        set_app_env(mp, folder)
        mp.setenv("ELMO_EXPLORER_PROBES", str(folder / "probes.json"))

        at = AppTest.from_file(APP, default_timeout=APP_TIMEOUT)
        for name, value in {"s": LINK_BOX, "word": "bank", "clusters": "3", "compare": "default,lm-only"}.items():
            at.query_params[name] = value
        shot["map"] = list(_walk(at.run()._tree))
        at.session_state[keys.MAP_VIEW] = keys.MAP_VIEWS["layers"]
        shot["map: layers side by side"] = list(_walk(at.run()._tree))
        for tab in ("neighbours", "similarity", "senses", "compare", "export"):
            at.session_state[keys.TAB] = keys.TABS[tab]
            shot[tab] = list(_walk(at.run()._tree))
        at.session_state[keys.TAB] = keys.TABS["map"]
        at.file_uploader(key=keys.UPLOAD).set_value((SENTENCES_NAME, FILE_BOX.encode(), "text/plain"))
        shot["upload"] = list(_walk(at.run()._tree))
        at.sidebar.file_uploader(key="upload_options_0").set_value((OPTIONS_NAME, misspelt_options(), "text/json"))
        weights = (ALLENNLP / "lm_weights.hdf5").read_bytes()
        at.sidebar.file_uploader(key="upload_weights_0").set_value((WEIGHTS_NAME, weights, "application/x-hdf5"))
        shot["model panel"] = list(_walk(at.sidebar.button(key="load_uploaded").click().run()._tree))

        at = AppTest.from_file(APP, default_timeout=APP_TIMEOUT)
        for name, value in {"s": LINK_BOX, "word": "alert", **UNKNOWN_PARAMS}.items():
            at.query_params[name] = value
        shot["layer probes"] = list(_walk(at.switch_page("views/layers.py").run()._tree))
        shot["word from the corpus"] = list(_walk(at.switch_page("views/explorer.py").run()._tree))
    return shot


# ---- reading the elements ------------------------------------------------------------------------------------------
MARKDOWN_FIELDS = {"body", "label", "help", "placeholder", "caption"}  # what Streamlit renders as markdown
PLAIN_TYPES = {"code", "text", "text_area", "text_input", "dataframe", "arrow_data_frame", "json"}


def _strings(message, name=""):
    """(field name, value) of every string in a protobuf message, nested ones included."""
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        for v in values:
            if isinstance(v, str):
                yield field.name, v
            elif hasattr(v, "ListFields"):
                yield from _strings(v, field.name)


def _texts(nodes, kind: str) -> list[str]:
    """The texts of one kind ("markdown", "html", "latex", "vega", "plotly") in the nodes of a run."""
    out = []
    for node in nodes:
        proto = getattr(node, "proto", None)
        if isinstance(node, Table):
            frame = node.value
            if kind == "markdown":
                out += [str(v) for v in [*frame.index, *frame.columns, *frame.to_numpy().ravel()]]
            continue
        if proto is None or not hasattr(proto, "ListFields"):
            continue
        fields = list(_strings(proto))
        if node.type == "html":
            out += [v for f, v in fields if f == "body"] if kind == "html" else []
        elif node.type == "iframe":
            out += [v for f, v in fields if f == "srcdoc"] if kind == "html" else []
        elif node.type == "latex":
            out += [v for f, v in fields if f == "body"] if kind == "latex" else []
        elif node.type in ("vega_lite_chart", "arrow_vega_lite_chart"):
            out += [proto.spec] if kind == "vega" else []
        elif node.type == "plotly_chart":
            out += [proto.spec] if kind == "plotly" else []
        elif kind == "markdown":
            plain = node.type in PLAIN_TYPES
            out += [v for f, v in fields if f in MARKDOWN_FIELDS and not (plain and f == "body")]
    return out


class _Tags(HTMLParser):
    """The tags and attributes of an HTML text, and the text of its script elements."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.scripts, self._script = [], [], [], False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs
        self._script = tag == "script"
        if self._script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._script = False

    def handle_data(self, data):
        if self._script:
            self.scripts[-1] += data

    def handle_comment(self, data):
        self.tags.append("!--")


# "<script", "<img", "<a ", a link's "](" or KaTeX's "\href" / "\url" that no odd number of backslashes escapes
_ACTIVE_MARKDOWN = re.compile(r"(?<!\\)(?:\\\\)*(<\s*/?\s*(?:script|img|a\b)|\]\(|\\(?:href|url)\b)", re.IGNORECASE)
_PAGE_TAGS = {"style", "div", "span", "b", "mark", "table", "thead", "tbody", "colgroup", "col", "tr", "th", "td"}
_EXPRESSION_KEYS = {"expr", "test", "calculate", "filter", "signal", "update"}
_PLOTLY_IDS = {"legendgroup", "ids", "uid"}  # plotly matches these, it never draws them


def _expressions(node):
    """Every string of a Vega-Lite spec that Vega reads as an expression: an ``expr``, ``test``, ``calculate``,
    ``filter``, ``signal`` or ``update`` value and any ``...Expr`` property (``labelExpr``)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and (key in _EXPRESSION_KEYS or key.endswith("Expr")):
                yield value
            else:
                yield from _expressions(value)
    elif isinstance(node, list):
        for value in node:
            yield from _expressions(value)


def _spec_strings(node, key=""):
    """(the key of the object or list it is in, the string) for every string of a chart spec."""
    if isinstance(node, str):
        yield key, node
    elif isinstance(node, dict):
        for k, value in node.items():
            yield from _spec_strings(value, k)
    elif isinstance(node, list):
        for value in node:
            yield from _spec_strings(value, key)


def _vega_rows(nodes) -> list[dict]:
    """The data rows every Vega-Lite chart of a run sends (Arrow IPC streams)."""
    import pyarrow as pa

    rows = []
    for node in nodes:
        if node.type in ("vega_lite_chart", "arrow_vega_lite_chart"):
            blobs = [d.data.data for d in node.proto.datasets] + (
                [node.proto.data.data] if node.proto.data.data else []
            )
            rows += [row for blob in blobs for row in pa.ipc.open_stream(blob).read_all().to_pylist()]
    return rows


# ---- the tests ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("step", STEPS)
def test_no_view_raises(pages, step):
    exceptions = [n for n in pages[step] if n.type == "exception"]
    assert not exceptions, [n.proto.message for n in exceptions]
    assert any(n.type in ("markdown", "title") for n in pages[step])  # the page was drawn


@pytest.mark.parametrize("step", STEPS)
def test_markdown_shows_the_users_text_only_escaped(pages, step):
    """Markdown bodies, captions, alerts, headings, widget labels and help, tab and expander labels and table cells:
    no unescaped tag, link or KaTeX command, no ``javascript:``, and no hostile string as typed."""
    for text in _texts(pages[step], "markdown"):
        assert not _ACTIVE_MARKDOWN.search(text), text
        assert "javascript:" not in text.lower(), text
        rendered = render_markdown(text)
        assert not re.search(r"<(a|img|script)\b", rendered), (text, rendered)
        for payload in PAYLOADS:
            assert payload not in text, (payload, text)


@pytest.mark.parametrize("step", STEPS)
def test_html_holds_only_the_pages_tags(pages, step):
    """``st.html`` bodies hold the page's own tags, no event handler or ``javascript:`` URL and the user's text only
    as entities; the "Copy link" frame holds one script of ours, with the link as a JSON string that opens no tag."""
    for text in _texts(pages[step], "html"):
        page = _Tags(text)
        assert not any(name.startswith("on") for name, _ in page.attrs), text[:300]
        assert not any("javascript:" in (value or "").lower() for _, value in page.attrs), text[:300]
        for payload in HTML_PAYLOADS:
            assert payload not in text, payload
        if page.scripts:  # the copy-link frame
            assert set(page.tags) == {"style", "button", "span", "script"} and len(page.scripts) == 1, page.tags
            script = page.scripts[0]
            assert "<" not in script, script  # nothing can end the script or open a comment
            start = script.index("const link = ") + len("const link = ")
            literal = script[start : json.JSONDecoder().raw_decode(script, start)[1]]
            assert not re.search(r"[<>&\u2028\u2029]", literal), literal  # written as safe.script_json writes it
        else:
            assert set(page.tags) <= _PAGE_TAGS, set(page.tags) - _PAGE_TAGS


@pytest.mark.parametrize("step", STEPS)
def test_charts_carry_the_labels_only_as_data(pages, step):
    """Vega-Lite specs hold no user text in an expression (the labels are data values, sent as Arrow); plotly's
    pseudo-HTML holds no tag of the user's; KaTeX gets the page's own formula only."""
    for spec in map(json.loads, _texts(pages[step], "vega")):
        for expression in _expressions(spec):
            assert "alert(" not in expression, expression
            assert not any(label in expression for label in LABELS), expression
        for key, text in _spec_strings(spec):  # elsewhere in the spec a label is a value of a scale's domain
            if "alert(" in text or text in LABELS:
                assert key == "domain", (key, text)
    for spec in map(json.loads, _texts(pages[step], "plotly")):
        for key, text in _spec_strings([spec.get("data"), spec.get("layout")]):
            if key in _PLOTLY_IDS:
                continue
            assert not re.search(r"<\s*/?\s*(a|img|script|iframe)\b", text, re.IGNORECASE), (key, text)
            assert not any(payload in text for payload in PLOT_PAYLOADS), (key, text)
    for text in _texts(pages[step], "latex"):
        assert not _ACTIVE_MARKDOWN.search(text) and "javascript" not in text, text


def test_the_corpus_reached_every_view(pages):
    """The checks above saw the hostile text: the labels as the map's data, the sentences and labels in the
    concordances (escaped), a heatmap, three clusters, two models side by side, the file's and the model files'
    names and the link's parameters in their notes, the corpus's word on the map."""
    assert {row["series"] for row in _vega_rows(pages["map"])} >= set(LABELS)
    html = "\n".join(_texts(pages["map"], "html"))
    assert safe.html_text(SCRIPT_LABEL) in html and safe.html_text(LABEL_LINK) in html and "click me" in html
    assert len([n for n in pages["map: layers side by side"] if n.type == "vega_lite_chart"]) == 0  # in its place
    assert _texts(pages["similarity"], "plotly")
    assert "<b>cluster 3</b>" in "\n".join(_texts(pages["senses"], "html"))
    assert len(_texts(pages["compare"], "vega")) == 2
    assert any("Mix vectors (CSV)" in t for t in _texts(pages["export"], "markdown"))
    assert safe.html_text(LONG_WORD[:40]) in "\n".join(_texts(pages["upload"], "html"))
    shown = {step: "\n".join(map(safe.shown, _texts(pages[step], "markdown"))) for step in STEPS}
    assert clean_line(SENTENCES_NAME)[:20] in shown["upload"]
    assert clean_line(OPTIONS_NAME)[:20] in shown["model panel"]
    assert all(clean_line(name)[:10] in shown["layer probes"] for name in UNKNOWN_PARAMS)
    assert "alert" in shown["word from the corpus"]

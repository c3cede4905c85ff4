"""Hostile input to the explorer (issue 10, findings 3, 4, 5 and 8): crafted links, labels and file names are
shown literally everywhere; uploads never touch the disk and have their own limits; a session's model is its
own; per-session memory is bounded; all-zero vectors are flagged; control and zero-width characters."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

from streamlit.testing.v1 import AppTest  # noqa: E402

from app import explore as ex  # noqa: E402
from app import figures  # noqa: E402
from app.safe import md, plot, shown  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"
APP = str(ROOT / "app" / "streamlit_app.py")
TIMEOUT = 90

LINK = "[click me](https://example.org/login)"
IMAGE = "![x](http://host/pixel.png)"
STYLED = ":red[**ALERT**] $x^2$ <b>bold</b> &amp; :material/home:"
LABEL_LINK = '<a href="https://example.org">link</a>'  # 37 characters: fits a [label]
LABEL_BIG = '<span style="font-size:80px">big'


@pytest.fixture(autouse=True)
def app_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ELMO_EXPLORER_OPTIONS", str(FIXTURE / "options.json"))
    monkeypatch.setenv("ELMO_EXPLORER_WEIGHTS", str(FIXTURE / "lm_weights.hdf5"))
    monkeypatch.setenv("ELMO_EXPLORER_DEVICE", "cpu")
    monkeypatch.setenv("ELMO_EXPLORER_UMAP_WARMUP", "0")
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(tmp_path / "no-reference.txt"))
    monkeypatch.delenv("ELMO_EXPLORER_ALLOW_SERVER_PATHS", raising=False)
    monkeypatch.delenv("ELMO_EXPLORER_CHECKPOINT", raising=False)
    monkeypatch.delenv("ELMO_EXPLORER_SESSION_MB", raising=False)


@pytest.fixture(autouse=True)
def fresh_caches():
    import streamlit as st
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


def start(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


# ---- the escaping helper --------------------------------------------------------------------------------------
def _html(markdown: str) -> str:
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown)


@pytest.mark.parametrize("text", [LINK, IMAGE, STYLED, LABEL_LINK, "see www.example.org or me@example.org", "# head\n- item\n1. x", "<https://a.b>",
                                  "a\u2028b\x0cc", "`code` *em* _u_ ~~s~~ | t |"])
def test_md_renders_exactly_the_characters(text):
    html = _html(md(text))
    assert "<a" not in html and "<img" not in html and "<em" not in html and "<code" not in html
    assert "<h1" not in html and "<li" not in html and "<del" not in html and "<b>" not in html
    import html as html_lib
    inner = re.sub(r"^<p>|</p>\n$", "", html)
    from elmo_core.text import clean_line
    assert html_lib.unescape(inner).replace("\u2060", "") == clean_line(text)
    assert shown(md(text)) == clean_line(text)
    assert not re.search(r"(?<!\\)[:$\[\]<&]", md(text))  # Streamlit's :color[]/:icon:, KaTeX, links, HTML


def test_plot_escapes_pseudo_html():
    assert plot(LABEL_LINK) == '&lt;a href="https://example.org"&gt;link&lt;/a&gt;'
    assert "<" not in plot(LABEL_BIG) and plot("a & b") == "a &amp; b"


# ---- crafted links and labels on the page ---------------------------------------------------------------------
MARKDOWN_ELEMENTS = ("markdown", "caption", "warning", "info", "error", "success")


def _markdown_sources(at: AppTest) -> list[str]:
    out = []
    for kind in MARKDOWN_ELEMENTS:
        out += [str(e.value) for e in getattr(at, kind)]
        out += [str(e.value) for e in getattr(at.sidebar, kind)]
    for kind in ("selectbox", "checkbox", "radio", "slider", "text_area", "button"):
        out += [str(w.label) for w in getattr(at, kind)]
    return out


def _assert_literal(at: AppTest, *payloads: str) -> None:
    sources = _markdown_sources(at)
    text = "\n".join(shown(s) for s in sources)
    for payload in payloads:
        assert payload in text  # the user's characters are shown ...
    for source in sources:  # ... and nothing they wrote is markup
        html = _html(source)
        assert "<a " not in html and "<img" not in html, source
        for payload in payloads:
            assert payload not in source, source  # only escaped copies reach markdown


def test_crafted_word_in_link_is_shown_literally():
    for word in (LINK, IMAGE, STYLED):
        at = start(ex="bank", word=word)
        assert not at.exception
        assert any(word in shown(w.value) for w in at.info)  # "The link's word ... does not occur"
        _assert_literal(at, word)


def test_crafted_example_name_in_link_is_shown_literally():
    at = start(ex=LINK[:40], word="bank")
    assert not at.exception
    assert any("unknown example set" in shown(w.value) for w in at.warning)
    _assert_literal(at, LINK[:40])


def test_labels_reach_plotly_escaped():
    text = "\n".join([f"[{LABEL_LINK}] We sat on the bank of the river.", f"[{LABEL_LINK}] The river bank was muddy.",
                      f"[{LABEL_BIG}] The bank raised its rates.", f"[{LABEL_BIG}] I paid the cheque into the bank."])
    at = start(s=text, word="bank")
    assert not at.exception and not at.error
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    strings = []

    def walk(node):
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    for spec in specs:
        walk(spec["data"])
        walk(spec["layout"])
    joined = "\n".join(strings)
    assert "<a href" not in joined and "<span" not in joined
    assert plot(LABEL_LINK) in joined and plot(LABEL_BIG) in joined  # legend, hover and heatmap ticks
    names = {t.get("name") for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"]}
    assert plot(LABEL_LINK) in names


def test_figures_escape_names_ticks_and_titles():
    lines = [ex.Line("a bank", "<b>x</b>", ("a", "bank")), ex.Line("the bank", "<i>y</i>", ("the", "bank"))]
    occ = ex.find_occurrences(lines, "bank")
    fig = figures.contexts_map(np.zeros((2, 2)), occ, lines)
    assert {t.name for t in fig.data if t.name != "neighbours query"} == {"&lt;b&gt;x&lt;/b&gt;", "&lt;i&gt;y&lt;/i&gt;"}
    heat = figures.similarity_heatmaps([("<b>t</b>", np.eye(2))], ["<b>x</b> #1", "<i>y</i> #2"])
    assert list(heat.data[0].x) == ["&lt;b&gt;x&lt;/b&gt; #1", "&lt;i&gt;y&lt;/i&gt; #2"]
    assert heat.layout.annotations[0].text == "&lt;b&gt;t&lt;/b&gt;"


# ---- uploads: in memory only, own limits ----------------------------------------------------------------------
def test_uploads_never_touch_the_disk(monkeypatch):
    import tempfile

    from app import resources

    def no_disk(*a, **k):
        raise AssertionError("an upload was written to disk")
    monkeypatch.setattr(Path, "write_bytes", no_disk)
    monkeypatch.setattr(tempfile, "mkdtemp", no_disk)
    options = (FIXTURE / "options.json").read_bytes()
    with pytest.raises(ValueError, match="not a readable HDF5"):
        resources.load_uploaded_model(options, b"not an hdf5 file", "weights.hdf5", session="s1")
    model = resources.load_uploaded_model(options, (FIXTURE / "lm_weights.hdf5").read_bytes(), "w.hdf5", session="s1")
    assert model.embedder.dim == 32


def test_each_uploader_has_its_own_limit():
    from app import resources
    resources.check_upload_size("weights", 60 * 2**20, "w.hdf5")  # fine for weights
    with pytest.raises(ValueError, match=r"big.txt is 60.0 MB; the limit for this upload is 2 MB"):
        resources.check_upload_size("sentences", 60 * 2**20, "big.txt")
    with pytest.raises(ValueError, match="limit for this upload is 1 MB"):
        resources.load_uploaded_model(b" " * (2 * 2**20), b"", "w.hdf5", session="s1")


def test_uploaded_text_is_cut_to_what_is_used():
    text = "\n".join(f"sentence {i} " + "x" * (2000 if i == 3 else 5) for i in range(5000))
    box, note = ex.text_for_box(text, "big.txt")
    assert len(box.split("\n")) == ex.MAX_LINES and len(box) <= ex.MAX_TEXT_CHARS
    assert note == ("From big.txt: only the first 500 of its 5,000 lines were read; 1 line(s) longer than "
                    "1000 characters were cut.")
    assert ex.parse_input(box, str.split).lines == ex.parse_input(text, str.split).lines[:3] + \
        ex.parse_input(box, str.split).lines[3:4] + ex.parse_input(text, str.split).lines[4:500]


# ---- a session's model is its own ------------------------------------------------------------------------------
class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _model(key: str, mb: int):
    import torch

    from app.resources import LoadedModel

    class _E:
        name = key
        bilm = torch.nn.Linear(mb * 2**18, 1, bias=False)  # mb MB of float32
    return LoadedModel(key, _E(), "uploaded")


def test_registry_never_evicts_a_model_in_use_and_tells_idle_owners():
    from app.resources import ModelBudgetError, ModelRegistry
    clock, active = _Clock(), {"a", "b", "c"}
    reg = ModelRegistry(max_bytes=20 * 2**20, idle_seconds=600, clock=clock, is_active=lambda s: s in active)
    for session, key in (("a", "m1"), ("b", "m2")):
        reg.make_room(session, 8 * 2**20)
        reg.claim(session, _model(key, 8), f"{session}.hdf5", "uploaded")
    clock.now = 300
    with pytest.raises(ModelBudgetError, match=r"in use by other sessions \(16 of 20 MB; this model needs 8 MB\)"):
        reg.make_room("c", 8 * 2**20)
    assert reg.for_session("a")[0].display_name == "a.hdf5" and reg.for_session("b")[0] is not None
    clock.now = 1000  # a and b idle for 700 s; b comes back first
    assert reg.for_session("b")[0] is not None
    reg.make_room("c", 8 * 2**20)  # a's model (idle) makes room, b's (just used) stays
    reg.claim("c", _model("m3", 8), "c.hdf5", "uploaded")
    model, notice = reg.for_session("a")
    assert model is None and "Your model “a.hdf5” was unloaded to make room" in notice
    assert reg.for_session("a") == (None, "")  # told once
    assert reg.for_session("b")[0].key == "m2" and reg.for_session("c")[0].key == "m3"
    active.discard("b")  # b closed the tab: its model may go at once
    reg.make_room("a", 8 * 2**20)
    assert reg.for_session("b")[0] is None
    with pytest.raises(ModelBudgetError, match="needs 30 MB, more than this server allows"):
        reg.make_room("a", 30 * 2**20)


def test_same_upload_from_two_sessions_shares_memory_but_not_names():
    from app import resources
    options = (FIXTURE / "options.json").read_bytes()
    weights = (FIXTURE / "lm_weights.hdf5").read_bytes()
    alice = resources.load_uploaded_model(options, weights, "alice.hdf5", session="alice")
    bob = resources.load_uploaded_model(options, weights, "bob.hdf5", session="bob")
    assert alice.embedder is bob.embedder
    assert resources.current_model(session="alice")[0].display_name == "alice.hdf5"
    assert resources.current_model(session="bob")[0].display_name == "bob.hdf5"
    assert resources.current_model(session="bob")[0].source == "uploaded: bob.hdf5"
    resources.release_model("alice")
    assert resources.current_model(session="alice")[0].key == resources.startup_model().key
    assert resources.current_model(session="bob")[0].display_name == "bob.hdf5"  # bob still owns it
    # one copy for both sessions: 105,120 parameters + the 4-value padding row of the char table, float32,
    # plus the model's buffers
    one_copy = resources.model_bytes(alice.embedder.bilm)
    assert one_copy >= 105_124 * 4
    assert resources.model_registry().used_bytes == one_copy


# ---- per-session memory ----------------------------------------------------------------------------------------
def test_session_keeps_at_most_its_budget_of_activations(monkeypatch):
    monkeypatch.setenv("ELMO_EXPLORER_SESSION_MB", "1")
    text = "\n".join(f"The bank {i} was by the river ." for i in range(400))  # 8 tokens each
    at = start(s=text, word="bank")
    assert not at.exception and not at.error
    per_token = 3 * 32 * 4 * 2
    kept = 2**20 // per_token // 8
    assert any(f"Only the first {kept} of 400 sentences are used" in shown(w.value) for w in at.warning)
    table = at.session_state["_explorer_table"][1]
    assert table.acts.nbytes * 2 <= 2**20 and len(table.lines) == kept


# ---- zero vectors, control and zero-width characters -----------------------------------------------------------
def test_all_zero_vectors_are_left_out_of_separation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 4))
    labels = ["a", "a", "a", "b", "b", "b"]
    with_zero = np.concatenate([x, np.zeros((2, 4))])
    got = ex.separation(with_zero, labels + ["a", "b"])
    want = ex.separation(x, labels)
    assert got.silhouette == pytest.approx(want.silhouette) and got.knn_accuracy == pytest.approx(want.knn_accuracy)
    assert "2 all-zero vector(s) left out" in got.note
    assert list(ex.zero_rows(with_zero)) == [False] * 6 + [True, True]


def test_control_and_zero_width_characters_do_not_make_sentences_or_tokens():
    parsed = ex.parse_input("[river] We sat on the ba\u200bnk\x0cof the river.\u2028Then\u200b we left.\n"
                            "\ufeff[money] The bank\x85raised rates.", str.split)
    assert [ln.label for ln in parsed.lines] == ["river", "money"]
    assert parsed.lines[0].tokens == ("We", "sat", "on", "the", "bank", "of", "the", "river.", "Then", "we", "left.")
    assert parsed.lines[1].tokens == ("The", "bank", "raised", "rates.")

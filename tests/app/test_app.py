"""Page-flow tests of the Streamlit explorer with streamlit.testing.v1.AppTest and the tiny fixture biLM.

AppTest runs the script in this process; charts come back as unknown elements, so the tests read the figure JSON
(``proto.spec``; the contexts map, a Vega-Lite chart, carries its points as Arrow data: ``map_rows``) and the Frame the page computed (``app.explore.frame.compute_frame``, kept as ``st.session_state["explorer_frame"]``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

from streamlit.testing.v1 import AppTest  # noqa: E402

from app.explore import inputs, mixing  # noqa: E402
from app.explore.examples import EXAMPLE_SETS  # noqa: E402
from app.render.safe import plot, shown  # noqa: E402
from app.serving.warm_up import UmapWarmUp  # noqa: E402
from tests.conftest import (  # noqa: E402
    APP,
    IMAGE,
    LABEL_BIG,
    LABEL_LINK,
    LINK,
    STYLED,
    frame_of,
    no_errors,
    render_markdown,
    start_app,
)

FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"
TIMEOUT = 90  # generous: the CI machine may be busy

BANK4 = """[river] We sat on the bank of the river.
[river] The river bank was muddy.
[money] The bank raised its rates.
[money] I paid the cheque into the bank."""


pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches_per_module")


def start(**query) -> AppTest:
    return start_app(APP, TIMEOUT, **query)


def warnings(at: AppTest) -> str:
    return "\n".join(shown(w.value) for w in at.warning)


def map_spec(at: AppTest) -> dict:
    """The contexts map's Vega-Lite spec (its data apart: ``map_rows``)."""
    return json.loads(at.get("vega_lite_chart")[0].proto.spec)


def map_rows(at: AppTest) -> list[dict]:
    """The contexts map's points as the page sends them: one dict per drawn point (x, y, role, series, idx, ...)."""
    import pyarrow as pa

    proto = at.get("vega_lite_chart")[0].proto
    blobs = [d.data.data for d in proto.datasets] + ([proto.data.data] if proto.data.data else [])
    return [row for blob in blobs for row in pa.ipc.open_stream(blob).read_all().to_pylist()]


def map_points(at: AppTest) -> dict[str, int]:
    """Points per legend entry of the contexts map ("neighbours query": the ring, "other words": grey)."""
    import collections

    return dict(collections.Counter(row["series"] for row in map_rows(at)))


def values(v) -> list:
    """A plotly JSON array: a plain list, or a typed array {"dtype": ..., "bdata": base64, "shape": ...}."""
    if isinstance(v, dict) and "bdata" in v:
        import base64

        arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        if "shape" in v:
            arr = arr.reshape([int(d) for d in str(v["shape"]).split(",")])
        return arr.tolist()
    return list(v)


def expected_mix(embedder, text: str, word: str, w, gamma=1.0) -> np.ndarray:
    """The target word's ELMo vectors computed directly with the biLM, for comparison with the page."""
    parsed = inputs.parse_input(text)
    occ = inputs.find_occurrences(parsed.lines, word)
    vecs = []
    for o in occ:
        acts = embedder.embed_sentence(list(parsed.lines[o.line].tokens))
        vecs.append(mixing.scalar_mix(acts[:, o.position], w, gamma))
    return np.stack(vecs)


# ---- normal flow -------------------------------------------------------------------------------------------
def test_first_visit_shows_the_play_example():
    at = start()
    no_errors(at)
    assert at.title[0].value == "ELMo Explorer"
    assert at.text_area(key="explorer_sentences").value == EXAMPLE_SETS["play"].text
    assert at.selectbox(key="explorer_word").value == "play"
    data = frame_of(at)
    assert len(data.rows) == 15 and data.coords.shape == (15, 2)
    assert data.projection.method == "live"  # the fixed axes, redrawn in the browser while a slider moves
    np.testing.assert_allclose(data.coords, data.live.coords(data.s, 1.0))
    assert not data.same_vector
    assert map_points(at) == {"baseball": 6, "theatre": 6, "verb": 3, "neighbours query": 1}
    assert not at.get("plotly_chart")  # the first map needs no plotly.js
    assert at.query_params["ex"] == "play" and at.query_params["word"] == "play"
    sidebar = " ".join(shown(m.value) for m in at.sidebar.markdown)
    assert "lm_weights.hdf5" in sidebar
    # short enough for the half-width metric at 1,024 px; the exact count on hover
    assert any(m.value == "105 k" and m.proto.help == "105,120 parameters" for m in at.sidebar.metric)


def test_typed_sentences_give_the_models_vectors(embedder):
    at = start()
    at.text_area(key="explorer_sentences").input(BANK4).run()
    at.selectbox(key="explorer_word").set_value("bank").run()
    no_errors(at)
    data = frame_of(at)
    np.testing.assert_allclose(data.vectors, expected_mix(embedder, BANK4, "bank", [0, 0, 0]), rtol=1e-5, atol=1e-6)
    assert data.coords.shape == (4, 2) and data.projection.method == "live"

    at.slider(key="explorer_w_2").set_value(2.0).run()
    at.slider(key="explorer_gamma").set_value(0.5).run()
    no_errors(at)
    data = frame_of(at)
    np.testing.assert_allclose(data.s, mixing.softmax([0, 0, 2.0]))
    np.testing.assert_allclose(
        data.vectors, expected_mix(embedder, BANK4, "bank", [0, 0, 2.0], 0.5), rtol=1e-5, atol=1e-6
    )
    assert at.query_params["w"] == "0,0,2" and at.query_params["g"] == "0.5"
    # each weight's s_j in its slider's label (no line of its own between two sliders)
    assert at.slider(key="explorer_w_2").label.endswith(f"s_2 = **{mixing.softmax([0, 0, 2.0])[2]:.3f}**")


def test_presets_and_reset():
    at = start(ex="bank", word="bank")
    at.button(key="explorer_preset_bottom").click().run()
    data = frame_of(at)
    assert data.s[0] > 0.9999
    # layer 0 is context-free: one vector for all occurrences, drawn at one spot with a note (no noise map); on
    # the fixed axes the residue of layers 1 and 2 (s_j = 4.5e-5) stays under 0.1 % of the axes
    half = data.live.half_extent(data.s)
    assert data.same_vector and np.ptp(data.coords, axis=0).max() < 1e-2 * half.max()
    assert any("have the same vector here" in str(i.value) and "context-free" in str(i.value) for i in at.info)
    at.button(key="explorer_preset_top").click().run()
    assert frame_of(at).s[2] > 0.9999
    at.checkbox(key="explorer_layer_norm").check().run()
    at.button(key="explorer_reset").click().run()
    no_errors(at)
    np.testing.assert_allclose(frame_of(at).s, [1 / 3] * 3)
    assert frame_of(at).controls.gamma == 1.0 and not at.checkbox(key="explorer_layer_norm").value


def test_unknown_example_set_in_link_is_reported():
    at = start(ex="nope", word="nope")
    no_errors(at)
    from app.explore.examples import DEFAULT_EXAMPLE

    assert "unknown example set 'nope'" in warnings(at) and f"opens on the “{DEFAULT_EXAMPLE}” set" in warnings(at)
    default = EXAMPLE_SETS[DEFAULT_EXAMPLE]
    assert at.text_area(key="explorer_sentences").value == default.text  # as "/" opens, not an empty page
    assert frame_of(at).word == default.word


def test_shared_link_restores_the_view():
    at = start(ex="bank", word="bank", w="0,1,2", g="2", proj="tsne", ln="1")
    no_errors(at)
    assert at.text_area(key="explorer_sentences").value == EXAMPLE_SETS["bank"].text
    assert [at.slider(key=f"explorer_w_{j}").value for j in range(3)] == [0.0, 1.0, 2.0]
    assert at.slider(key="explorer_gamma").value == 2.0 and at.checkbox(key="explorer_layer_norm").value
    assert frame_of(at).projection.method == "tsne"
    assert frame_of(at).coords.shape == (12, 2)


def test_layers_tab_scores_layer0_at_chance():
    at = start(ex="bank", word="bank", tab="similarity")
    no_errors(at)
    scores = frame_of(at).separation
    assert len(scores) == 4  # layers 0, 1, 2 and the mix
    # Layer 0 is context-free: all 12 "bank" vectors are equal, so 1-NN accuracy is the share of same-label
    # points among the 11 tied neighbours, (6 - 1) / 11, which is also the chance level.
    assert scores[0].knn_accuracy == pytest.approx(5 / 11)
    assert scores[0].chance == pytest.approx(5 / 11)
    heatmaps = json.loads(at.get("plotly_chart")[0].proto.spec)  # only the open tab is drawn
    layer0 = np.array(values(heatmaps["data"][0]["z"]))
    np.testing.assert_allclose(layer0, np.ones((12, 12)), atol=1e-6)


def test_neighbours_follow_the_query_occurrence():
    at = start(ex="bank", word="bank", tab="neighbours")
    first = frame_of(at).neighbours  # by default among the word's other occurrences (11 here)
    assert len(first) == 10 and {n[0].lower() for n in first} == {"bank"} and all(0 <= n[2] <= 1.0001 for n in first)
    at.selectbox(key="explorer_query").set_value(7).run()
    no_errors(at)
    assert frame_of(at).query == 7
    assert frame_of(at).neighbours != first
    at.checkbox(key="explorer_same_word").uncheck().run()  # every token of the sentences
    assert len(frame_of(at).neighbours) == 10 and {n[0].lower() for n in frame_of(at).neighbours} != {"bank"}
    from app.session import keys

    at.session_state[keys.TAB] = keys.TABS["map"]  # the map tab, as a click on it does
    at.run()
    assert frame_of(at).query == 7
    ring = [row for row in map_rows(at) if row["role"] == "neighbours query"]
    assert [row["idx"] for row in ring] == [7]


def test_context_words_in_grey():
    at = start(ex="bank", word="bank")
    at.checkbox(key="explorer_context").check().run()
    no_errors(at)
    grey = [row for row in map_rows(at) if row["role"] == "other words"]
    table_tokens = sum(len(ln.tokens) for ln in inputs.parse_input(EXAMPLE_SETS["bank"].text).lines)
    wordlike = sum(
        inputs.is_wordlike(t) for ln in inputs.parse_input(EXAMPLE_SETS["bank"].text).lines for t in ln.tokens
    )
    assert len(grey) == wordlike - 12 < table_tokens and {row["idx"] for row in grey} == {-1}
    assert frame_of(at).coords.shape == (wordlike, 2)


def test_reference_corpus_neighbours(monkeypatch, tmp_path):
    from elmo_core.data.reference import write_reference

    write_reference(
        tmp_path / "ref",
        ["The bank of the river flooded .", "She works at a bank .", "Nothing here .", "Banks lend money ."],
        [("the", 9), ("bank", 5), ("river", 2), ("money", 1)],
        {},
    )
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(tmp_path / "ref"))
    at = start(ex="bank", word="bank", tab="neighbours")
    no_errors(at)
    found = frame_of(at).reference_neighbours
    assert len(found) == 2 and all(k.target == "bank" for _, k in found)
    assert {k.plain() for _, k in found} == {"The «bank» of the river flooded .", "She works at a «bank» ."}
    assert any("Among 2 occurrences in 2 reference sentences." == c.value for c in at.caption)
    # the layer-0 column: the input's types while the vocabulary's vectors compute, then the vocabulary's
    from app.serving import jobs, startup

    types = jobs.type_vectors(startup.startup_model())
    assert types is not None and types.words == ["the", "bank", "river", "money"]
    assert types.wait(60)
    at.run()
    no_errors(at)
    frame = frame_of(at)
    assert "4 most frequent word types" in frame.layer0_note
    assert [w for w, _ in frame.layer0_neighbours] and {w for w, _ in frame.layer0_neighbours} <= {
        "the",
        "river",
        "money",
    }


def test_no_reference_corpus_is_said_not_hidden():
    at = start(ex="bank", word="bank", tab="neighbours")  # app_env points ELMO_EXPLORER_REFERENCE at a missing folder
    no_errors(at)
    assert any("No reference corpus" in str(i.value) for i in at.info)
    assert "among your sentences' words" in frame_of(at).layer0_note


# ---- bad input ---------------------------------------------------------------------------------------------
def test_empty_box():
    at = start()
    at.text_area(key="explorer_sentences").input("   \n\n").run()
    no_errors(at)
    assert "Type or paste some sentences" in " ".join(str(i.value) for i in at.info)
    assert len(at.get("plotly_chart")) == 0 and len(at.get("vega_lite_chart")) == 0


def test_word_not_there():
    at = start(s="[a] the bank is here\n[b] a bank", word="zebra")
    no_errors(at)
    infos = " ".join(shown(i.value) for i in at.info)
    assert "The link's word “zebra” does not occur in these sentences; showing “bank”" in infos
    assert "zebra" not in warnings(at)  # a calm note, not a warning
    assert at.selectbox(key="explorer_word").value == "bank"
    at.text_area(key="explorer_sentences").input("The bat flew .\nA bat hung there .").run()
    no_errors(at)  # a new text: its own word, without a note
    assert at.selectbox(key="explorer_word").value == "bat"
    assert "does not occur" not in " ".join(shown(i.value) for i in at.info) + warnings(at)


def test_word_with_a_zero_width_space_in_link():
    at = start(ex="bank", word="ba\u200bnk")  # ?ex=bank&word=ba%E2%80%8Bnk
    no_errors(at)
    assert (
        "The link's word 'ba\\u200bnk' contains invisible characters (U+200B), which the explorer also removes "
        "from sentences; looking for 'bank'."
    ) in warnings(at)
    assert at.selectbox(key="explorer_word").value == "bank"


@pytest.mark.parametrize("text, n", [("The bank closed.\nWe walked home.", 1), ("One bank.\nTwo banks and a bank.", 2)])
def test_one_or_two_occurrences(text, n):
    at = start()
    at.text_area(key="explorer_sentences").input(text).run()
    at.selectbox(key="explorer_word").set_value("bank").run()
    no_errors(at)
    assert f"occurs {n} time{'s' if n > 1 else ''}: a 2-D map needs at least 3 points" in warnings(at)
    assert frame_of(at).coords is None
    assert len(frame_of(at).rows) == n
    assert len(frame_of(at).neighbours) == n - 1  # the word's other occurrences (same word only, the default)
    from app.session import keys

    at.session_state[keys.TAB] = keys.TABS["neighbours"]
    at.run()
    assert any("occurs once in your sentences" in shown(i.value) for i in at.info) == (n == 1)
    at.checkbox(key="explorer_same_word").uncheck().run()
    assert len(frame_of(at).neighbours) > 0  # every word of the sentences
    at.session_state[keys.TAB] = keys.TABS["senses"]
    at.run()
    split = ("The 1 occurrence" if n == 1 else "The 2 occurrences") + " cannot be split into clusters here"
    assert any(split in shown(i.value) for i in at.info)
    if n == 2:  # unlabelled sentences: the heatmaps' heading does not claim a sort by label
        at.session_state[keys.TAB] = keys.TABS["similarity"]
        at.run()
        heading = [m.value for m in at.markdown if "Cosine similarity between the occurrences" in m.value]
        assert heading == ["**Cosine similarity between the occurrences** (one colour scale for all panels)"]
    at.session_state[keys.TAB] = keys.TABS["export"]
    at.run()  # no map files without a map, and the empty column says why
    assert [c.value for c in at.caption if c.value.startswith("No map files")] == [
        "No map files: a 2-D map needs at least 3 points (Map tab)."
    ]
    assert not [b for b in at.get("download_button") if "map" in b.proto.label.lower()]


def test_emoji_and_non_latin_text():
    text = "Я сидел на берегу реки 😀.\nНа берегу реки тихо.\n我们 在 河 岸 上 😀\nΗ τράπεζα έκλεισε 😀 .\nThe bank 😀 is closed 🏦."
    at = start()
    at.text_area(key="explorer_sentences").input(text).run()
    no_errors(at)
    options = at.selectbox(key="explorer_word").options
    assert not any(o.startswith("😀") for o in options)  # emoji are not word-like, so not offered as targets
    at.selectbox(key="explorer_word").set_value("реки").run()
    no_errors(at)
    assert len(frame_of(at).rows) == 2
    at.selectbox(key="explorer_word").set_value("τράπεζα").run()
    no_errors(at)
    assert len(frame_of(at).rows) == 1


def test_sixty_character_token():
    long = "x" * 60
    at = start()
    at.text_area(key="explorer_sentences").input(f"a {long} b\nc {long}\n{long} d").run()
    at.selectbox(key="explorer_word").set_value(long).run()
    no_errors(at)
    assert "longer than 48 UTF-8 bytes" in warnings(at)
    assert frame_of(at).coords.shape == (3, 2)


def test_thousands_of_lines_are_capped():
    text = "\n".join(f"[s{i % 2}] Line {i} is about the bank ." for i in range(2000))
    at = start()
    at.text_area(key="explorer_sentences").input(text).run()
    no_errors(at)
    assert f"first {inputs.MAX_LINES} of 2000 lines" in warnings(at)
    assert len(frame_of(at).rows) == inputs.MAX_LINES
    assert any("too long to keep in the link" in c.value for c in at.caption) and "s" not in at.query_params


def test_only_punctuation():
    at = start()
    at.text_area(key="explorer_sentences").input("... !!!\n???").run()
    no_errors(at)
    assert "no words" in warnings(at)


def test_server_paths_are_off_by_default():
    at = start()
    captions = " ".join(str(c.value) for c in at.sidebar.caption)
    assert "Loading from paths on the server is disabled" in captions
    assert not any(t.key == "server_weights" for t in at.sidebar.text_input)


# ---- hostile input (issue 10, findings 3, 4, 5 and 8) -----------------------------------------------------------
# Crafted links, labels and file names are shown literally everywhere; per-session memory is bounded. These
# tests empty Streamlit's caches first (they count what one session holds). The unit-level findings are tested
# with their modules: test_safe, test_figures, test_uploads, test_inputs, test_projections, test_neighbours.

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
        html = render_markdown(source)
        assert "<a " not in html and "<img" not in html, source
        for payload in payloads:
            assert payload not in source, source  # only escaped copies reach markdown


@pytest.mark.usefixtures("fresh_caches")
def test_crafted_word_in_link_is_shown_literally():
    for word in (LINK, IMAGE, STYLED):
        at = start(ex="bank", word=word)
        assert not at.exception
        assert any(word in shown(w.value) for w in at.info)  # "The link's word ... does not occur"
        _assert_literal(at, word)


@pytest.mark.usefixtures("fresh_caches")
def test_crafted_example_name_in_link_is_shown_literally():
    at = start(ex=LINK[:40], word="bank")
    assert not at.exception
    assert any("unknown example set" in shown(w.value) for w in at.warning)
    _assert_literal(at, LINK[:40])


@pytest.mark.usefixtures("fresh_caches")
def test_labels_reach_the_map_literally_and_plotly_escaped():
    text = "\n".join(
        [
            f"[{LABEL_LINK}] We sat on the bank of the river.",
            f"[{LABEL_LINK}] The river bank was muddy.",
            f"[{LABEL_BIG}] The bank raised its rates.",
            f"[{LABEL_BIG}] I paid the cheque into the bank.",
        ]
    )
    at = start(s=text, word="bank")
    assert not at.exception and not at.error
    # the contexts map (Vega-Lite) draws text as text and escapes its tooltip: the labels as written, in the
    # legend and the hover text
    rows = map_rows(at)
    assert {row["series"] for row in rows} == {LABEL_LINK, LABEL_BIG, "neighbours query"}
    assert any(LABEL_LINK in row["head"] for row in rows)
    # plotly renders its pseudo-HTML: the heatmaps' ticks carry the labels escaped
    from app.session import keys

    at.session_state[keys.TAB] = keys.TABS["similarity"]
    at.run()
    assert not at.exception and not at.error
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert specs
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
    assert plot(LABEL_LINK) in joined and plot(LABEL_BIG) in joined  # heatmap ticks and hover


# ---- per-session memory ----------------------------------------------------------------------------------------
@pytest.mark.usefixtures("fresh_caches")
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


def test_only_the_open_tab_is_drawn_and_a_link_can_open_any():
    from app.session import keys

    at = start(ex="bank", word="bank")  # the map tab: one chart, no neighbour controls
    assert len(at.get("vega_lite_chart")) == 1 and not at.get("plotly_chart") and not at.get("download_button")
    assert not [s for s in at.selectbox if s.key == keys.QUERY]
    at = start(ex="bank", word="bank", tab="export", w="0,0,3")  # straight to Export: the map's HTML is offered
    no_errors(at)
    assert not at.get("plotly_chart") and not at.get("vega_lite_chart")
    assert [b.proto.label for b in at.get("download_button")] == [
        "Mix vectors (CSV)",
        "Mix vectors (.npz)",
        "All layers (.npz)",
        "Projector files (.zip)",
        "2-D coordinates (CSV)",
        "Map (HTML, offline)",
        "Map (PNG)",
    ]


def test_a_link_opens_layers_side_by_side_clusters_and_a_comparison():
    from app.session import keys, link

    asked = dict(ex="bank", word="bank", show="layers", clusters="3", compare="default,lm-only")
    at = start(**asked)  # the map tab: the four layers side by side
    no_errors(at)
    maps = at.session_state[keys.private("layer_maps")]
    assert len(maps.coords) == 4 and all(c.shape == (12, 2) for c in maps.coords)
    at = start(**asked, tab="compare")
    no_errors(at)
    frame = frame_of(at)
    assert frame.clusters.k == 3 and frame.clusters.chosen_by == "manual"
    sides = at.session_state[keys.private("compare_sides")]
    assert [s.key for s in sides] == ["bundled:default", "bundled:lm-only"]  # the startup model is the fixture
    assert all(s.frame.vectors.shape[0] == 12 for s in sides) and sides[1].aligned
    assert not np.allclose(sides[0].frame.vectors, sides[1].frame.vectors)  # two models, two sets of vectors
    # the controls stay in the link
    params = link.to_query(at.session_state[keys.LAST])
    assert (params["show"], params["clusters"], params["compare"]) == ("layers", "3", "default,lm-only")
    # without a comparison in the link the tab opens on the page's model and the next one, not on empty boxes
    at = start(ex="bank", word="bank", tab="compare")
    no_errors(at)
    sides = at.session_state[keys.private("compare_sides")]
    assert (at.session_state[keys.COMPARE_A], at.session_state[keys.COMPARE_B]) == ("startup", "bundled:default")
    assert len(sides) == 2 and sides[0].key.startswith("startup:") and sides[1].key == "bundled:default"
    at = start(**asked, tab="compare")
    params = link.to_query(at.session_state[keys.LAST])
    assert (params["show"], params["clusters"], params["compare"]) == ("layers", "3", "default,lm-only")
    # the Senses tab lists every occurrence once, in its cluster
    # (one element for all clusters: a heading and a concordance table each, 12 target marks in all)
    at = start(**asked, tab="senses")
    no_errors(at)
    (senses,) = [str(h.proto.body) for h in at.get("html") if "<b>cluster 1</b>" in str(h.proto.body)]
    assert all(f"<b>cluster {c}</b>" in senses for c in (1, 2, 3)) and "<b>cluster 4</b>" not in senses
    assert senses.count("<mark>") == 12


def test_umap_status_shows_only_while_it_is_true(monkeypatch):
    from app.serving import jobs

    warm = UmapWarmUp()
    warm.state = "warming"
    monkeypatch.setattr(jobs, "umap_warm_up", lambda: warm)
    at = start(ex="bank", word="bank")
    no_errors(at)
    assert any("UMAP is loading" in str(c.value) for c in at.sidebar.caption)
    warm.state = "ready"
    at.run()
    no_errors(at)
    assert not any("UMAP" in str(c.value) for c in at.sidebar.caption)


def test_presentation_mode_and_the_case_note():
    at = start(ex="spring", word="spring", present="1", color="spelling")
    no_errors(at)
    assert at.toggle(key="app_present").value
    assert not any(c.key == "explorer_layer_norm" for c in at.checkbox)  # fewer controls
    assert not any("ELMo gives every word a vector" in m.value for m in at.markdown)
    assert any("Layer 0 (the character CNN) reads each spelling as written" in shown(c.value) for c in at.caption)
    assert set(map_points(at)) == {"spring", "Spring", "neighbours query"}  # coloured by spelling
    from app.render.figures import (  # larger type for a projector, the title larger still
        PROJECTOR_FONT,
        PROJECTOR_MAP_HEIGHT,
    )

    spec = map_spec(at)
    assert spec["config"]["legend"]["labelFontSize"] == PROJECTOR_FONT and spec["title"]["fontSize"] > PROJECTOR_FONT
    assert spec["height"] == PROJECTOR_MAP_HEIGHT
    at.toggle(key="app_present").set_value(False).run()
    spec = map_spec(at)
    assert spec["config"]["legend"]["labelFontSize"] == 14 and spec["title"]["fontSize"] == 16
    at.toggle(key="app_present").set_value(True).run()
    at.checkbox(key="explorer_fold_case").uncheck().run()
    no_errors(at)
    tokens = [t for ln in inputs.parse_input(EXAMPLE_SETS["spring"].text).lines for t in ln.tokens]
    exact, folded = tokens.count("spring"), sum(t.casefold() == "spring" for t in tokens)
    assert exact < folded and len(frame_of(at).rows) == exact  # "Spring" is no longer an occurrence
    assert at.query_params["case"] == "exact" and at.query_params["present"] == "1"


def test_the_bundled_model_radio_runs_the_page_on_the_chosen_model_and_the_link_names_it(monkeypatch, fresh_caches):
    """On the shipped default (no model set by the environment) the sidebar offers the bundled models: picking
    lm-only draws the same view with lm-only's vectors and puts model=lm-only in the link, which opens on it."""
    from app.session import keys, link

    monkeypatch.delenv("ELMO_EXPLORER_OPTIONS")
    monkeypatch.delenv("ELMO_EXPLORER_WEIGHTS")
    at = start(ex="bank", word="bank")
    no_errors(at)
    radio = at.radio(key="bundled_model")
    assert list(radio.options) == ["default", "lm-only"] and radio.value == "default"
    before = frame_of(at)
    assert before.model_key == "default" and "model" not in link.to_query(at.session_state[keys.LAST])
    radio.set_value("lm-only").run()
    no_errors(at)
    after = frame_of(at)
    assert after.model_key == "bundled:lm-only" and after.vectors.shape == before.vectors.shape
    assert not np.allclose(after.vectors, before.vectors)  # another model, other vectors of the same occurrences
    assert link.to_query(at.session_state[keys.LAST])["model"] == "lm-only"
    assert any(shown(m.value).startswith("**lm-only**") for m in at.sidebar.markdown)  # the panel names it
    again = start(ex="bank", word="bank", model="lm-only")  # the link, in a new session
    no_errors(again)
    assert again.radio(key="bundled_model").value == "lm-only" and frame_of(again).model_key == "bundled:lm-only"
    np.testing.assert_allclose(frame_of(again).vectors, after.vectors, rtol=1e-5, atol=1e-6)


# ---- hostile input (issue 26): line ends, model uploads, link parameters ----------------------------------------
CR_LINES = [f"[{'river' if i % 2 else 'money'}] Sentence {i} is about the bank ." for i in range(30)]


@pytest.mark.parametrize("ending", ["\r", "\r\n"])
def test_an_upload_with_cr_line_ends_shows_its_lines_and_analyses_the_same(ending):
    """A .txt file with classic Mac OS (CR) or Windows (CRLF) line ends: the box shows its 30 lines and the page
    analyses those 30 sentences, each [label] read as a label (a CR-only file used to be one sentence whose labels
    were words, while the box showed its lines)."""
    from app.session import keys

    at = start()
    at.file_uploader(key=keys.UPLOAD).set_value(("mac.txt", ending.join(CR_LINES).encode(), "text/plain")).run()
    no_errors(at)
    assert at.text_area(key=keys.SENTENCES).value == "\n".join(CR_LINES)
    at.selectbox(key=keys.WORD).set_value("bank").run()
    data = frame_of(at)
    assert len(data.rows) == 30 and len(at.session_state["_explorer_table"][1].lines) == 30
    labels = [ln.label for ln in at.session_state["_explorer_table"][1].lines]
    assert labels == ["money", "river"] * 15 and not any(
        "[" in t for ln in inputs.parse_input(at.text_area(key=keys.SENTENCES).value).lines for t in ln.tokens
    )


def test_a_links_cr_and_crlf_line_breaks_are_line_breaks():
    at = start(s="[river] We sat on the bank .\r[money] The bank closed .\r\n[river] A muddy bank .", word="bank")
    no_errors(at)
    assert at.text_area(key="explorer_sentences").value == (
        "[river] We sat on the bank .\n[money] The bank closed .\n[river] A muddy bank ."
    )
    table = at.session_state["_explorer_table"][1]
    assert [ln.label for ln in table.lines] == ["river", "money", "river"] and len(frame_of(at).rows) == 3
    assert at.query_params["s"] == at.text_area(key="explorer_sentences").value  # the link says what is shown


def _sidebar_upload(at: AppTest, options: tuple[str, bytes], weights: tuple[str, bytes]) -> AppTest:
    at.sidebar.file_uploader(key="upload_options_0").set_value((*options, "application/json"))
    at.sidebar.file_uploader(key="upload_weights_0").set_value((*weights, "application/octet-stream"))
    return at.sidebar.button(key="load_uploaded").click().run()


@pytest.mark.usefixtures("fresh_caches")
@pytest.mark.parametrize("case", ["misspelt key", "unwritten", "wide"])
def test_a_hostile_model_upload_is_one_line_and_keeps_the_model(case, tmp_path, wide_model_files):
    from tests.conftest import crafted_weights, misspelt_options

    options = (FIXTURE / "options.json").read_bytes()
    files, says = {
        "misspelt key": (
            (("my.json", misspelt_options()), ("w.hdf5", crafted_weights(tmp_path, "marked"))),
            "my.json: unknown key 'lstm.use_skip_connection'; did you mean 'lstm.use_skip_connections'?",
        ),
        "unwritten": (
            (("options.json", options), ("w.hdf5", crafted_weights(tmp_path, "unwritten"))),
            "w.hdf5 (with options.json): 'CNN_proj/W_proj' is declared but its data were never written (it "
            "would read as zeros); refused (a weights file must hold complete, plain float arrays of its "
            "own)",
        ),
        "wide": (
            (("options.json", wide_model_files[0]), ("wide.hdf5", wide_model_files[1])),
            "this model needs about 2,655 MB of working memory for one biLM call of the page (32 sentences of 100 "
            "tokens, 833 KB a token position), more than this server allows "
            "(1,024 MB, ELMO_EXPLORER_WORK_MB)",
        ),
    }[case]
    at = start(ex="bank", word="bank")
    before = frame_of(at).model_key
    _sidebar_upload(at, *files)
    assert not at.exception
    (error,) = at.sidebar.error
    assert shown(error.value) == f"Could not load this model: {says}  \nStill using **lm_weights.hdf5**."
    assert frame_of(at).model_key == before
    from app.serving import limits

    assert limits.model_registry().used_bytes == 0


@pytest.mark.usefixtures("fresh_caches")
def test_unknown_link_parameters_are_named_literally():
    names = [LINK, "<b>x</b>", "\nnew line", "a", "b", "c"]  # sorted, five named: the rest counted
    at = start(ex="bank", word="bank", **{name: IMAGE for name in names})
    no_errors(at)
    (note,) = [w for w in at.warning if "does not know" in shown(w.value)]
    assert shown(note.value) == (
        "The link has parameters this explorer does not know ('\\nnew line', '<b>x</b>', "
        "'[click me](https://e…', 'a', 'b' and 1 more); ignored."
    )
    _assert_literal(at, "'<b>x</b>'", "'[click me](https://e…'")


def test_the_sentences_box_closes_once_a_set_is_loaded_and_stays_open_while_typing():
    """Map-first (issue 29): the sentences' box starts closed when the link brings a set, stays open while the
    user types into it, and closes again when an example set is loaded; the map is there throughout."""
    from app.session import keys

    at = start(ex="bank", word="bank")
    no_errors(at)
    assert at.session_state[keys.SENTENCES_OPEN] is False and map_points(at)
    at.session_state[keys.SENTENCES_OPEN] = True  # the user opens it to edit
    at.run()
    at.text_area(key=keys.SENTENCES).input(BANK4).run()
    no_errors(at)
    assert at.session_state[keys.SENTENCES_OPEN] is True and frame_of(at).word == "bank"
    assert len(frame_of(at).rows) == 4
    at.button(key=keys.key("example_play")).click().run()
    no_errors(at)
    assert at.session_state[keys.SENTENCES_OPEN] is False and frame_of(at).word == EXAMPLE_SETS["play"].word

"""Page-flow tests of the Streamlit explorer with streamlit.testing.v1.AppTest and the tiny fixture biLM.

AppTest runs the script in this process; plotly charts come back as unknown elements, so the tests read
the figure JSON (``proto.spec``) and the Frame the page computed (``app.frame.compute_frame``, kept as ``st.session_state["explorer_frame"]``).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

from streamlit.testing.v1 import AppTest  # noqa: E402

from app import explore as ex  # noqa: E402
from tests.conftest import frame_of  # noqa: E402
from app.examples import EXAMPLE_SETS  # noqa: E402
from app.safe import shown  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"
APP = str(ROOT / "app" / "streamlit_app.py")
TIMEOUT = 90  # generous: the CI machine may be busy

BANK4 = """[river] We sat on the bank of the river.
[river] The river bank was muddy.
[money] The bank raised its rates.
[money] I paid the cheque into the bank."""


@pytest.fixture(scope="module")
def embedder():
    from elmo_core import Embedder
    return Embedder.from_elmo_files(FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5", device="cpu")


@pytest.fixture(autouse=True)
def app_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ELMO_EXPLORER_OPTIONS", str(FIXTURE / "options.json"))
    monkeypatch.setenv("ELMO_EXPLORER_WEIGHTS", str(FIXTURE / "lm_weights.hdf5"))
    monkeypatch.setenv("ELMO_EXPLORER_DEVICE", "cpu")
    monkeypatch.setenv("ELMO_EXPLORER_UMAP_WARMUP", "0")  # no background numba compile during tests
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(tmp_path / "no-reference.txt"))
    monkeypatch.delenv("ELMO_EXPLORER_ALLOW_SERVER_PATHS", raising=False)
    monkeypatch.delenv("ELMO_EXPLORER_CHECKPOINT", raising=False)


@pytest.fixture(scope="module", autouse=True)
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


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def warnings(at: AppTest) -> str:
    return "\n".join(shown(w.value) for w in at.warning)


def map_spec(at: AppTest) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


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
    parsed = ex.parse_input(text)
    occ = ex.find_occurrences(parsed.lines, word)
    vecs = []
    for o in occ:
        acts = embedder.embed_sentence(list(parsed.lines[o.line].tokens))
        vecs.append(ex.scalar_mix(acts[:, o.position], w, gamma))
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
    assert data.projection.method == "pca"  # UMAP warm-up is off in tests: PCA with a note
    assert not data.same_vector
    spec = map_spec(at)
    points = {t["name"]: len(values(t["x"])) for t in spec["data"]}
    assert points == {"baseball": 6, "theatre": 6, "verb": 3, "neighbours query": 1}
    assert at.query_params["ex"] == "play" and at.query_params["word"] == "play"
    sidebar = " ".join(shown(m.value) for m in at.sidebar.markdown)
    assert "lm_weights.hdf5" in sidebar
    assert any(m.value == "105,120" for m in at.sidebar.metric)


def test_typed_sentences_give_the_models_vectors(embedder):
    at = start()
    at.text_area(key="explorer_sentences").input(BANK4).run()
    at.selectbox(key="explorer_word").set_value("bank").run()
    no_errors(at)
    data = frame_of(at)
    np.testing.assert_allclose(data.vectors, expected_mix(embedder, BANK4, "bank", [0, 0, 0]), rtol=1e-5, atol=1e-6)
    assert data.coords.shape == (4, 2) and data.projection.method == "pca"

    at.slider(key="explorer_w_2").set_value(2.0).run()
    at.slider(key="explorer_gamma").set_value(0.5).run()
    no_errors(at)
    data = frame_of(at)
    np.testing.assert_allclose(data.s, ex.softmax([0, 0, 2.0]))
    np.testing.assert_allclose(data.vectors, expected_mix(embedder, BANK4, "bank", [0, 0, 2.0], 0.5),
                               rtol=1e-5, atol=1e-6)
    assert at.query_params["w"] == "0,0,2" and at.query_params["g"] == "0.5"
    text = " ".join(shown(m.value) for m in at.markdown)
    assert f"s_2 = **{ex.softmax([0, 0, 2.0])[2]:.3f}**" in text


def test_presets_and_reset():
    at = start(ex="bank", word="bank")
    at.button(key="explorer_preset_bottom").click().run()
    data = frame_of(at)
    assert data.s[0] > 0.9999
    # layer 0 is context-free: one vector for all occurrences, drawn at one spot with a note (no noise map)
    assert data.same_vector and np.ptp(data.coords, axis=0).max() == 0.0
    assert any("have the same vector here" in str(i.value) and "context-free" in str(i.value) for i in at.info)
    at.button(key="explorer_preset_top").click().run()
    assert frame_of(at).s[2] > 0.9999
    at.checkbox(key="explorer_layer_norm").check().run()
    at.button(key="explorer_reset").click().run()
    no_errors(at)
    np.testing.assert_allclose(frame_of(at).s, [1 / 3] * 3)
    assert frame_of(at).controls.gamma == 1.0 and not at.checkbox(key="explorer_layer_norm").value


def test_unknown_example_set_in_link_is_reported():
    at = start(ex="nope")
    no_errors(at)
    assert "unknown example set 'nope'" in warnings(at)


def test_shared_link_restores_the_view():
    at = start(ex="bank", word="bank", w="0,1,2", g="2", proj="tsne", ln="1")
    no_errors(at)
    assert at.text_area(key="explorer_sentences").value == EXAMPLE_SETS["bank"].text
    assert [at.slider(key=f"explorer_w_{j}").value for j in range(3)] == [0.0, 1.0, 2.0]
    assert at.slider(key="explorer_gamma").value == 2.0 and at.checkbox(key="explorer_layer_norm").value
    assert frame_of(at).projection.method == "tsne"
    assert frame_of(at).coords.shape == (12, 2)


def test_layers_tab_scores_layer0_at_chance():
    at = start(ex="bank", word="bank")
    no_errors(at)
    scores = frame_of(at).separation
    assert len(scores) == 4  # layers 0, 1, 2 and the mix
    # Layer 0 is context-free: all 12 "bank" vectors are equal, so 1-NN accuracy is the share of same-label
    # points among the 11 tied neighbours, (6 - 1) / 11, which is also the chance level.
    assert scores[0].knn_accuracy == pytest.approx(5 / 11)
    assert scores[0].chance == pytest.approx(5 / 11)
    heatmaps = json.loads(at.get("plotly_chart")[1].proto.spec)
    layer0 = np.array(values(heatmaps["data"][0]["z"]))
    np.testing.assert_allclose(layer0, np.ones((12, 12)), atol=1e-6)


def test_neighbours_follow_the_query_occurrence():
    at = start(ex="bank", word="bank")
    first = frame_of(at).neighbours
    assert len(first) == 10 and all(0 <= n[2] <= 1.0001 for n in first)
    at.selectbox(key="explorer_query").set_value(7).run()
    no_errors(at)
    assert frame_of(at).query == 7
    assert frame_of(at).neighbours != first
    at.checkbox(key="explorer_same_word").check().run()
    assert {n[0].lower() for n in frame_of(at).neighbours} == {"bank"}
    spec = map_spec(at)
    ring = next(t for t in spec["data"] if t["name"] == "neighbours query")
    assert ring["customdata"] == [[7]]


def test_context_words_in_grey():
    at = start(ex="bank", word="bank")
    at.checkbox(key="explorer_context").check().run()
    no_errors(at)
    grey = next(t for t in map_spec(at)["data"] if t["name"] == "other words")
    table_tokens = sum(len(ln.tokens) for ln in ex.parse_input(EXAMPLE_SETS["bank"].text).lines)
    wordlike = sum(ex.is_wordlike(t) for ln in ex.parse_input(EXAMPLE_SETS["bank"].text).lines for t in ln.tokens)
    assert len(values(grey["x"])) == wordlike - 12 < table_tokens
    assert frame_of(at).coords.shape == (wordlike, 2)


def test_reference_corpus_neighbours(monkeypatch, tmp_path):
    ref = tmp_path / "ref.txt"
    ref.write_text("The bank of the river flooded .\nShe works at a bank .\nNothing here .\nBanks lend money .\n")
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(ref))
    at = start(ex="bank", word="bank")
    no_errors(at)
    found = frame_of(at).reference_neighbours
    assert len(found) == 2 and all(k.target == "bank" for _, k in found)
    assert {k.plain() for _, k in found} == {"The «bank» of the river flooded .", "She works at a «bank» ."}
    assert any("Among 2 occurrences in 2 reference sentences." == c.value for c in at.caption)


def test_reference_sentences_are_split_not_retokenized(tmp_path):
    from app import resources
    ref = tmp_path / "ref.txt"
    ref.write_text("The industry 's bank closed .\nA bank ( the old one ) -- gone .\n")
    hits, total = resources.reference_matches(str(ref), ref.stat().st_mtime, "bank", False)
    assert total == 2
    assert hits[0] == ("The", "industry", "'s", "bank", "closed", ".")
    assert hits[1] == ("A", "bank", "(", "the", "old", "one", ")", "--", "gone", ".")


# ---- bad input ---------------------------------------------------------------------------------------------
def test_empty_box():
    at = start()
    at.text_area(key="explorer_sentences").input("   \n\n").run()
    no_errors(at)
    assert "Type or paste some sentences" in " ".join(str(i.value) for i in at.info)
    assert len(at.get("plotly_chart")) == 0


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


@pytest.mark.parametrize("text, n", [("The bank closed.\nWe walked home.", 1), ("One bank.\nTwo banks and a bank.", 2)])
def test_one_or_two_occurrences(text, n):
    at = start()
    at.text_area(key="explorer_sentences").input(text).run()
    at.selectbox(key="explorer_word").set_value("bank").run()
    no_errors(at)
    assert f"occurs {n} time{'s' if n > 1 else ''}: a 2-D map needs at least 3 points" in warnings(at)
    assert frame_of(at).coords is None
    assert len(frame_of(at).rows) == n
    assert len(frame_of(at).neighbours) > 0  # the neighbours table still works


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
    assert f"first {ex.MAX_LINES} of 2000 lines" in warnings(at)
    assert len(frame_of(at).rows) == ex.MAX_LINES
    assert "too long to keep in the link" in warnings(at) and "s" not in at.query_params


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


def test_uploaded_model_bad_file_raises_and_good_file_loads():
    from app import resources
    with pytest.raises(Exception):
        resources.load_uploaded_model(b'{"lstm": {}}', b"\x00garbage", "weights.hdf5")
    options = (FIXTURE / "options.json").read_bytes()
    with pytest.raises(Exception):
        resources.load_uploaded_model(options, b"not an hdf5 file", "weights.hdf5")
    model = resources.load_uploaded_model(options, (FIXTURE / "lm_weights.hdf5").read_bytes(), "lm_weights.hdf5")
    assert model.key.startswith("upload:") and model.embedder.dim == 32
    again = resources.current_model()[0]
    assert again.key == model.key and again.embedder is model.embedder and again.display_name == "lm_weights.hdf5"



def test_uploaded_model_error_names_the_users_file():
    from safetensors.numpy import save

    from app import resources
    options = (ROOT / "assets" / "default" / "options.json").read_bytes()
    with pytest.raises(ValueError) as info:
        resources.load_uploaded_model(options, save({"x": np.zeros(2, dtype=np.float32)}), "my.safetensors")
    message = str(info.value)
    assert message.startswith("my.safetensors") and "is missing" in message
    assert "elmo-explorer-uploads" not in message and "upload:" not in message


def test_umap_status_shows_only_while_it_is_true(monkeypatch):
    from app import resources
    warm = ex.UmapWarmUp()
    warm.state = "warming"
    monkeypatch.setattr(resources, "umap_warm_up", lambda: warm)
    at = start(ex="bank", word="bank")
    no_errors(at)
    assert any("UMAP is compiling" in str(c.value) for c in at.sidebar.caption)
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
    spec = map_spec(at)
    assert {t["name"] for t in spec["data"]} == {"spring", "Spring", "neighbours query"}  # coloured by spelling
    at.checkbox(key="explorer_fold_case").uncheck().run()
    no_errors(at)
    tokens = [t for ln in ex.parse_input(EXAMPLE_SETS["spring"].text).lines for t in ln.tokens]
    exact, folded = tokens.count("spring"), sum(t.casefold() == "spring" for t in tokens)
    assert exact < folded and len(frame_of(at).rows) == exact  # "Spring" is no longer an occurrence
    assert at.query_params["case"] == "exact" and at.query_params["present"] == "1"

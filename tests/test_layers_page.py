"""The Layers page (app/views/layers.py) in AppTest, and its logic (app/layers_logic.py), with the tiny fixture biLM."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

from streamlit.testing.v1 import AppTest  # noqa: E402

from app import layers_logic as lg  # noqa: E402
from tests.conftest import frame_of  # noqa: E402
from elmo_core import probes  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"
PROBE_DATA = ROOT / "tests" / "fixtures" / "probes"
PAGE = str(ROOT / "app" / "views" / "layers.py")
APP = str(ROOT / "app" / "streamlit_app.py")
TIMEOUT = 120  # generous: the machine may be busy (a model trains in the background)


def fake_task(task: str, s: list[float]) -> dict:
    """A task result as a results file holds it (JSON), with made-up numbers."""
    own = {"wsd": {"mix_linear": 0.6, "mix_equal": 0.65}, "pos": {"layers_converged": [True, True, False]}}[task]
    return {"task": task, "title": f"{task} probe", "metric": "accuracy", "layers": [0.5, 0.7, 0.6],
            "mix_learned": 0.72, "s": s, "w": [0.0, 0.0, 0.0], "gamma": 1.0, "layer_scale": [1.0, 1.0, 1.0],
            "baselines": {"mfs": 0.55}, "paper": dataclasses.asdict(probes.TASKS[task].paper),
            "data": {"source": "test", "n_train": 10, "n_test": 5, "split": "test", "subsample": "all"},
            "seconds": 0.1, **own}


@pytest.fixture(scope="module")
def embedder():
    from elmo_core import Embedder
    return Embedder.from_elmo_files(FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5", device="cpu")


@pytest.fixture
def fixture_report(embedder, tmp_path):
    data = probes.new_report(embedder).to_json()
    data["tasks"] = {"wsd": fake_task("wsd", [0.2, 0.3, 0.5]), "pos": fake_task("pos", [0.1, 0.6, 0.3])}
    path = tmp_path / "probes.json"
    path.write_text(json.dumps(data))
    return path, probes.ProbeReport.from_json(data, probes.result_types())


@pytest.fixture(autouse=True)
def app_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ELMO_EXPLORER_OPTIONS", str(FIXTURE / "options.json"))
    monkeypatch.setenv("ELMO_EXPLORER_WEIGHTS", str(FIXTURE / "lm_weights.hdf5"))
    monkeypatch.setenv("ELMO_EXPLORER_DEVICE", "cpu")
    monkeypatch.setenv("ELMO_EXPLORER_UMAP_WARMUP", "0")
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(tmp_path / "no-reference.txt"))
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(tmp_path / "no-probes.json"))
    monkeypatch.delenv("ELMO_EXPLORER_CHECKPOINT", raising=False)
    monkeypatch.delenv("ELMO_EXPLORER_ALLOW_SERVER_PATHS", raising=False)


@pytest.fixture(scope="module", autouse=True)
def fresh_caches():
    import streamlit as st
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


# ---- logic -----------------------------------------------------------------------------------------------------
def test_weights_for_explorer_round_trip():
    s = [0.2, 0.3, 0.5]
    w = lg.weights_for_explorer(s)
    assert all(abs(round(v * 10) - v * 10) < 1e-9 for v in w)  # on the sliders' 0.1 grid
    assert np.allclose(lg.softmax(w), s, atol=0.02)
    w = lg.weights_for_explorer([0.99998, 0.00001, 0.00001])
    assert min(w) >= -5 and max(w) <= 5 and np.argmax(lg.softmax(w)) == 0
    with pytest.raises(ValueError):
        lg.weights_for_explorer([0.5, 0.0, 0.5])


def test_apply_weights_updates_sliders_and_view():
    from app.explore import View
    state = {"_view": View(text="x", weights=(0.0, 0.0, 0.0)), "w_0": 1.0}
    w = lg.apply_weights(state, [0.1, 0.6, 0.3], 3)
    assert [state[f"w_{j}"] for j in range(3)] == w and state["_view"].weights == tuple(w)
    assert state["_view"].text == "x"
    with pytest.raises(ValueError, match="2 layers; the model has 3"):
        lg.apply_weights({}, [0.5, 0.5], 3)


def test_matching_report(fixture_report):
    path, report = fixture_report
    loaded, why = lg.load_precomputed(path)
    assert loaded == report and why == ""
    fp = report.model.fingerprint
    assert lg.matching_report(loaded, fp, "startup:x") == (loaded, "")
    assert lg.matching_report(loaded, "other", "startup:x") == (None, "")
    got, warning = lg.matching_report(loaded, "other", "default")
    assert got is loaded and "another version" in warning
    assert lg.load_precomputed(path.parent / "missing.json")[0] is None
    path.write_text("{broken")
    assert "Could not read" in lg.load_precomputed(path)[1]


def test_figures(fixture_report):
    _, report = fixture_report
    fig = lg.task_figure(report.tasks["pos"])
    assert list(fig.data[0].y) == [50.0, 70.0, 60.0, 72.0] and list(fig.data[1].y) == [97.3, 96.8]
    s_fig = lg.weights_figure(report)
    assert [list(t.y) for t in s_fig.data] == [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]
    assert len(lg.summary_rows(report)) == 2


# ---- page ------------------------------------------------------------------------------------------------------
def test_page_shows_precomputed_results(fixture_report, monkeypatch):
    path, report = fixture_report
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(path))
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert at.title[0].value == "What each layer knows"
    assert any("gamma" in str(x.value) for x in at.get("latex"))
    specs = charts(at)
    assert len(specs) == 3
    assert [t["y"] for t in specs[2]["data"]] == [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]
    assert at.button(key="layers_use_wsd") and at.button(key="layers_use_pos")
    at.button(key="layers_use_pos").click().run()
    no_errors(at)
    w = lg.weights_for_explorer([0.1, 0.6, 0.3])
    assert [at.session_state[f"w_{j}"] for j in range(3)] == w
    assert any("part of speech weights" in str(m.value) for m in at.success)


def test_page_computes_results_for_a_model(monkeypatch):
    monkeypatch.setenv("ELMO_WORDNET_DIR", str(PROBE_DATA / "wordnet"))
    monkeypatch.setenv("ELMO_BROWN_DIR", str(PROBE_DATA / "brown"))
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert any("No probe results" in str(i.value) for i in at.info) and not charts(at)
    at.button(key="layers_compute").click().run()
    no_errors(at)
    report = next(iter(at.session_state["layers_computed"].values()))
    for task in ("wsd", "pos"):
        assert abs(sum(report.tasks[task].s) - 1) < 1e-6
    assert len(charts(at)) == 3


def test_page_says_when_probe_data_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("ELMO_WORDNET_DIR", str(tmp_path))
    monkeypatch.setenv("ELMO_BROWN_DIR", str(tmp_path))
    monkeypatch.setattr("elmo_core.wordnet.wordnet_dirs", list)
    monkeypatch.setattr("elmo_core.brown.brown_dirs", list)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert not any(b.key == "layers_compute" for b in at.button)  # no button that can only fail
    assert any("python -m elmo_core probe --prepare" in str(i.value) for i in at.info)


def test_use_weights_reaches_the_explorer_sliders(fixture_report, monkeypatch):
    path, _ = fixture_report
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    at.slider(key="w_0").set_value(2.0).run()
    at.switch_page("views/layers.py").run()
    no_errors(at)
    at.button(key="layers_use_wsd").click().run()
    no_errors(at)
    at.switch_page("views/explorer.py").run()
    no_errors(at)
    w = [round(v, 1) for v in lg.weights_for_explorer([0.2, 0.3, 0.5])]  # the sliders' 0.1 steps
    assert [at.slider(key=f"w_{j}").value for j in range(3)] == pytest.approx(w)
    assert frame_of(at).s == pytest.approx(lg.softmax(w))
    # what the browser shows: the sent value when set_value is on, else the widget default (the old bug: -5)
    assert [shown(at.slider(key=f"w_{j}")) for j in range(3)] == pytest.approx(w)
    # the next interaction sends the shown values back; the learned weights must survive it
    for j in range(3):
        at.slider(key=f"w_{j}").set_value(shown(at.slider(key=f"w_{j}")))
    at.checkbox(key="layer_norm").check().run()
    no_errors(at)
    assert [at.slider(key=f"w_{j}").value for j in range(3)] == pytest.approx(w)
    assert [shown(at.slider(key=f"w_{j}")) for j in range(3)] == pytest.approx(w)
    assert at.query_params["w"] == ",".join(f"{v:g}" for v in w)


def shown(slider) -> float:
    """The value a browser displays for a slider that (re)mounts: the backend's value if it says set_value,
    otherwise the element default."""
    proto = slider.proto
    return float((proto.value if proto.set_value else proto.default)[0])


def test_explorer_controls_survive_a_visit_to_the_layers_page(fixture_report, monkeypatch):
    path, _ = fixture_report
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    at.number_input(key="nn_k").set_value(4).run()
    at.checkbox(key="nn_same_word").check().run()
    at.selectbox(key="query_occ").set_value(2).run()
    at.radio(key="color_by").set_value("sentence").run()
    no_errors(at)
    at.switch_page("views/layers.py").run()
    no_errors(at)
    at.switch_page("views/explorer.py").run()
    no_errors(at)
    assert at.number_input(key="nn_k").value == 4 and at.checkbox(key="nn_same_word").value
    assert at.selectbox(key="query_occ").value == 2 and at.radio(key="color_by").value == "sentence"
    assert frame_of(at).query == 2 and len(frame_of(at).neighbours) == 4

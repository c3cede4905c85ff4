"""The Layers page (app/views/layers.py) in AppTest, with the tiny fixture biLM; its logic is tested in
tests/app/explore/test_probes.py and its charts in tests/app/render/test_probe_charts.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from streamlit.testing.v1 import AppTest  # noqa: E402

from app.explore import probes as lg  # noqa: E402
from app.render.safe import shown as shown_text  # noqa: E402
from tests.conftest import APP, PROBE_DATA, frame_of, no_errors, render_markdown  # noqa: E402

PAGE = str(ROOT / "app" / "views" / "layers.py")
TIMEOUT = 120  # generous: the machine may be busy (a model trains in the background)

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches_per_module")


@pytest.fixture(autouse=True)
def no_precomputed_results(monkeypatch, tmp_path):
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(tmp_path / "no-probes.json"))


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


# ---- page ------------------------------------------------------------------------------------------------------
def test_page_shows_precomputed_results(fixture_report, monkeypatch):
    path, report = fixture_report
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(path))
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert at.title[0].value == "What each layer knows"
    assert any("gamma" in str(x.value) for x in at.get("latex"))
    specs = charts(at)
    assert len(specs) == 4  # one per task, then the learned s of the tasks that learn one
    assert [t["y"] for t in specs[3]["data"]] == [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]
    assert at.button(key="layers_use_wsd") and at.button(key="layers_use_pos")
    assert not any(b.key == "layers_use_loo_sense" for b in at.button)  # the leave-one-out probe learns no s
    # the summary as a static table (its cells wrap at 1,024 px): a row per quantity, a column per task
    # (its cells are markdown: escaped, so the "-" of no value shows as "-", not as a list bullet)
    (table,) = at.table
    assert [shown_text(i) for i in table.value.index[:4]] == ["layer 0", "layer 1", "layer 2", "learned mix"]
    assert [shown_text(c) for c in table.value.columns] == [r.title for r in report.tasks.values()]
    loo = table.value.iloc[:, 2]
    assert [shown_text(v) for v in loo[:4]] == ["50.0", "70.0", "60.0", lg.NONE] and loo.iloc[3] == "\\-"
    at.button(key="layers_use_pos").click().run()
    no_errors(at)
    w = lg.weights_for_explorer([0.1, 0.6, 0.3])
    assert [at.session_state[f"explorer_w_{j}"] for j in range(3)] == w
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
    assert report.tasks["loo_sense"].data.n_test == 750  # the shipped 34-word probe, whole
    assert len(charts(at)) == 4


def test_page_says_when_probe_data_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("ELMO_WORDNET_DIR", str(tmp_path))
    monkeypatch.setenv("ELMO_BROWN_DIR", str(tmp_path))
    monkeypatch.setattr("elmo_core.data.wordnet.wordnet_dirs", list)
    monkeypatch.setattr("elmo_core.data.brown.brown_dirs", list)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    no_errors(at)
    assert not any(b.key == "layers_compute" for b in at.button)  # no button that can only fail
    assert at.button(key="layers_compute_disabled").disabled  # shown, greyed out, with the reason
    assert any("python -m elmo_core probe --prepare" in shown_text(i.value) for i in at.info)
    assert any("needs the probe data, which is missing here" in shown_text(i.value) for i in at.info)
    # the missing-data reasons show their commands as code, not as literal backticks
    assert any(
        "`apt-get install -y wordnet-base`" in i.value and "\\`" not in i.value.split("- ", 1)[-1] for i in at.info
    )


def test_use_weights_reaches_the_explorer_sliders(fixture_report, monkeypatch):
    path, _ = fixture_report
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    at.slider(key="explorer_w_0").set_value(2.0).run()
    at.switch_page("views/layers.py").run()
    no_errors(at)
    at.button(key="layers_use_wsd").click().run()  # opens the Explorer with the weights (issue 29)
    no_errors(at)
    assert at.title[0].value == "ELMo Explorer" and not any(b.key == "layers_use_wsd" for b in at.button)
    w = [round(v, 1) for v in lg.weights_for_explorer([0.2, 0.3, 0.5])]  # the sliders' 0.1 steps
    assert [shown_text(m.value) for m in at.success] == [
        "The sliders hold the word sense (sense means) weights from the Layer probes page: w = "
        f"{', '.join(f'{v:.1f}' for v in w)}, so s = {', '.join(f'{v:.2f}' for v in lg.softmax(w))}."
    ]
    assert [at.slider(key=f"explorer_w_{j}").value for j in range(3)] == pytest.approx(w)
    assert frame_of(at).s == pytest.approx(lg.softmax(w))
    # what the browser shows: the sent value when set_value is on, else the widget default (the old bug: -5)
    assert [shown(at.slider(key=f"explorer_w_{j}")) for j in range(3)] == pytest.approx(w)
    # the next interaction sends the shown values back; the learned weights must survive it. (AppTest reruns the
    # page its own switch_page named, the Layers page, where a browser follows the app's switch: point it here.)
    at.switch_page("views/explorer.py")
    for j in range(3):
        at.slider(key=f"explorer_w_{j}").set_value(shown(at.slider(key=f"explorer_w_{j}")))
    at.checkbox(key="explorer_layer_norm").check().run()
    no_errors(at)
    assert [at.slider(key=f"explorer_w_{j}").value for j in range(3)] == pytest.approx(w)
    assert [shown(at.slider(key=f"explorer_w_{j}")) for j in range(3)] == pytest.approx(w)
    assert at.query_params["w"] == ",".join(f"{v:g}" for v in w)


def test_use_weights_opens_the_explorer_from_a_session_that_began_on_the_layers_page(fixture_report, monkeypatch):
    path, _ = fixture_report
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("views/layers.py").run()  # a link to /layers: the Explorer has never run in this session
    no_errors(at)
    at.button(key="layers_use_pos").click().run()
    no_errors(at)
    w = [round(v, 1) for v in lg.weights_for_explorer([0.1, 0.6, 0.3])]
    assert at.title[0].value == "ELMo Explorer"
    assert [at.slider(key=f"explorer_w_{j}").value for j in range(3)] == pytest.approx(w)
    assert frame_of(at).s == pytest.approx(lg.softmax(w))
    assert any("part of speech weights" in shown_text(m.value) for m in at.success)


def shown(slider) -> float:
    """The value a browser displays for a slider that (re)mounts: the backend's value if it says set_value,
    otherwise the element default."""
    proto = slider.proto
    return float((proto.value if proto.set_value else proto.default)[0])


def test_explorer_controls_survive_a_visit_to_the_layers_page(fixture_report, monkeypatch):
    path, _ = fixture_report
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(path))
    from app.session import keys

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_errors(at)
    at.session_state[keys.TAB] = keys.TABS["neighbours"]  # only the open tab's widgets are drawn
    at.run()
    at.number_input(key="explorer_k").set_value(4).run()
    at.checkbox(key="explorer_same_word").uncheck().run()  # on by default
    at.selectbox(key="explorer_query").set_value(2).run()
    at.session_state[keys.TAB] = keys.TABS["map"]
    at.run()
    at.radio(key="explorer_color_by").set_value("sentence").run()
    no_errors(at)
    at.switch_page("views/layers.py").run()
    no_errors(at)
    at.switch_page("views/explorer.py").run()
    no_errors(at)
    assert at.radio(key="explorer_color_by").value == "sentence"
    at.session_state[keys.TAB] = keys.TABS["neighbours"]  # the neighbours tab's controls were closed meanwhile
    at.run()
    no_errors(at)
    assert at.number_input(key="explorer_k").value == 4 and not at.checkbox(key="explorer_same_word").value
    assert at.selectbox(key="explorer_query").value == 2
    assert frame_of(at).query == 2 and len(frame_of(at).neighbours) == 4


# ---- hostile input (issue 26) ----------------------------------------------------------------------------------
def _everything_shown(at: AppTest) -> str:
    """Every text the page and its sidebar show (markdown sources, as rendered: escapes removed)."""
    parts = []
    for kind in ("markdown", "caption", "warning", "info", "error", "success", "title", "code"):
        parts += [shown_text(e.value) for e in getattr(at, kind)]
        if kind != "title":
            parts += [shown_text(e.value) for e in getattr(at.sidebar, kind)]
    return "\n".join(parts)


@pytest.mark.parametrize("allowed", [False, True])
def test_missing_probe_data_never_shows_the_servers_folders_to_a_visitor(monkeypatch, tmp_path, allowed):
    """Only where the operator allows server paths (ELMO_EXPLORER_ALLOW_SERVER_PATHS=1) does the page name the
    folders it searched; a visitor gets what is missing and the commands that fix it."""
    if allowed:
        monkeypatch.setenv("ELMO_EXPLORER_ALLOW_SERVER_PATHS", "1")
    folder = tmp_path / "secret-folder"
    monkeypatch.setenv("ELMO_WORDNET_DIR", str(folder))
    monkeypatch.setenv("ELMO_BROWN_DIR", str(folder))
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(folder / "secret-results.json"))  # a name that says too much
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    no_errors(at)
    text = _everything_shown(at)
    assert ("secret-folder" in text) == allowed and ("/usr/share/wordnet" in text) == allowed
    assert ("secret-results" in text) == allowed
    if not allowed:
        assert str(tmp_path) not in text and str(ROOT) not in text
        assert "No precomputed probe results on this server. No probe results for this model yet" in text
        assert (
            "- WordNet not found on this server: install it with `apt-get install -y wordnet-base` "
            "(Debian/Ubuntu), or run `python -m elmo_core probe --prepare`"
        ) in text  # the commands as code
        assert "- Brown corpus not found on this server: run `python -m elmo_core probe --prepare`" in text


def test_a_link_that_opens_the_layers_page_gets_its_notes(fixture_report, monkeypatch):
    path, _ = fixture_report
    monkeypatch.setenv("ELMO_EXPLORER_PROBES", str(path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in {"[x](https://example.org)": "1", "<img src=x>": "2", "k": "<b>many</b>"}.items():
        at.query_params[name] = value
    at.switch_page("views/layers.py").run()
    no_errors(at)
    assert at.title[0].value == "What each layer knows"
    warnings = [w.value for w in at.warning]
    assert [shown_text(w) for w in warnings] == [
        "The link's k (neighbours) '<b>many</b>' is not a number; using 10.",
        "The link has parameters this explorer does not know ('<img src=x>', '[x](https://example.…'); ignored.",
    ]
    for html in map(render_markdown, warnings):  # escaped: shown literally, never markup
        assert "<a " not in html and "<img" not in html and "<b>" not in html, html
    at.switch_page("views/explorer.py").run()
    no_errors(at)
    assert not [w for w in at.warning if "does not know" in shown_text(w.value)]  # said once

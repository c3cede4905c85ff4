"""app/explore/probes.py, the Layers page's logic without Streamlit: results for a model, pushing s to the
explorer's sliders, the figures."""
from __future__ import annotations

import numpy as np
import pytest

from app.explore import probes as lg


# ---- weights and results -------------------------------------------------------------------------------------------
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
    from app.session.state import VIEW, View, weight_key
    state = {VIEW: View(text="x", weights=(0.0, 0.0, 0.0)), weight_key(0): 1.0}
    w = lg.apply_weights(state, [0.1, 0.6, 0.3], 3)
    assert [state[weight_key(j)] for j in range(3)] == w and state[VIEW].weights == tuple(w)
    assert state[VIEW].text == "x"
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
    assert len(lg.summary_rows(report)) == 3
    # tagging's per-word baseline is the word form's most frequent tag, and says so (not "mfs": senses)
    labels = [a.text for a in fig.layout.annotations]
    assert any(t.startswith("most frequent") for t in labels) and not any(t.startswith("mfs") for t in labels), labels
    pos_row = next(r for r in lg.summary_rows(report) if r["task"] == report.tasks["pos"].title)
    assert pos_row["baselines"].startswith("most frequent tag ") and "mfs" not in pos_row["baselines"]
    # the paper's diamonds stand beside their bars (x = j + offset), not on the bars' value labels
    assert list(fig.data[1].x) == [1 + lg.PAPER_OFFSET, 2 + lg.PAPER_OFFSET] and lg.PAPER_OFFSET > lg.BAR_WIDTH / 2
    # no number inside the plot (a line or a diamond could cross it): value, name and the paper's value are
    # the bar's tick label, never turned on its side
    assert list(fig.layout.xaxis.ticktext) == [
        "<b>50.0</b><br>layer 0", f"<b>70.0</b><br>layer 1<br><span style='color:{lg.PAPER_COLOUR}'>◆ 97.3</span>",
        f"<b>60.0</b><br>layer 2<br><span style='color:{lg.PAPER_COLOUR}'>◆ 96.8</span>", "<b>72.0</b><br>mix"]
    assert fig.layout.xaxis.tickangle == 0 and fig.data[0].text is None and fig.data[1].mode == "markers"
    assert all(shape.layer == "below" for shape in fig.layout.shapes)  # the dotted baselines pass behind the bars
    table = lg.summary_table(report)
    assert table[""][:4] == ["layer 0", "layer 1", "layer 2", "learned mix"]
    assert len(table) == 4 and table[report.tasks["pos"].title][:4] == ["50.0", "70.0", "60.0", "72.0"]


def test_a_task_without_a_learned_mix_or_paper_numbers(fixture_report):
    """The leave-one-out sense probe trains nothing: no mix bar, no diamonds, no weights button or s bars."""
    _, report = fixture_report
    loo = report.tasks["loo_sense"]
    assert not loo.has_mix and loo.paper is None
    fig = lg.task_figure(loo)
    assert len(fig.data) == 1 and list(fig.data[0].y) == [50.0, 70.0, 60.0]
    # each tick is the bar's value over its name; no paper value (no diamond) under any of them
    assert list(fig.layout.xaxis.ticktext) == ["<b>50.0</b><br>layer 0", "<b>70.0</b><br>layer 1",
                                               "<b>60.0</b><br>layer 2"]
    assert list(lg.mixing_tasks(report)) == ["wsd", "pos"]
    # the line under the chart speaks of no mix bar and no diamonds that are not there
    pos = report.tasks["pos"]
    assert lg.chart_caption(pos) == ("mix: " + pos.mix_learned_how.rstrip(".") + ". ◆: the paper's layer 1 and 2 "
                                     "(other data and model).")
    assert "mix:" not in lg.chart_caption(loo) and "◆" not in lg.chart_caption(loo)
    assert [t.name for t in lg.weights_figure(report).data] == [lg.task_label("wsd"), lg.task_label("pos")]
    row = lg.summary_rows(report)[2]
    assert row["task"] == loo.title and row["learned mix"] == row["learned s"] == row["paper layer 1 / 2"] == lg.NONE
    assert "The paper has no such probe." in dict(lg.data_notes(report))[loo.title]
    assert lg.task_label("loo_sense") != lg.task_label("wsd")  # two sense probes, two names


def test_task_charts_come_two_to_a_row(fixture_report):
    _, report = fixture_report
    rows = lg.chart_rows(report)
    assert [[task for task, _ in row] for row in rows] == [["wsd", "pos"], ["loo_sense"]]
    assert lg.chart_rows(report, per_row=3) == [list(report.tasks.items())]



def test_baseline_labels_of_close_values_are_moved_apart_in_order():
    import plotly.graph_objects as go
    fig = go.Figure()
    # three lines within 2 points of each other on a 0-100 axis drawn 250 px high: 5 px apart at most
    lg._right_labels(fig, [(27.4, "mfs 27.4"), (25.0, "chance 25.0"), (26.0, "bag 26.0"), (80.0, "far 80.0")],
                     (0.0, 100.0), 250.0)
    px = {a.text: (a.y / 100 * 250) + a.yshift for a in fig.layout.annotations}  # label centres in pixels
    order = sorted(px, key=px.get)
    assert order == ["chance 25.0", "bag 26.0", "mfs 27.4", "far 80.0"]
    gaps = [px[b] - px[a] for a, b in zip(order, order[1:])]
    assert min(gaps) >= lg.LABEL_GAP_PX - 1e-9
    assert fig.layout.annotations[3].yshift == 0 and px["chance 25.0"] == pytest.approx(25.0 / 100 * 250)
    # a stack pushed past the top comes down as a whole
    fig = go.Figure()
    lg._right_labels(fig, [(99.0, "a"), (99.5, "b")], (0.0, 100.0), 250.0)
    tops = sorted(a.y / 100 * 250 + a.yshift for a in fig.layout.annotations)
    assert tops[1] == pytest.approx(250.0) and tops[1] - tops[0] == pytest.approx(lg.LABEL_GAP_PX)


def test_a_long_baseline_label_takes_two_lines_and_its_neighbour_keeps_clear():
    """"bag of context 62.9" is wider than the chart's right margin (it ended in "62.!" at 1,024 px): the
    value goes under the name, and a line's label close to it stays a line and a half away."""
    import plotly.graph_objects as go
    assert lg.baseline_label("chance", 42.8) == "chance 42.8"
    assert lg.baseline_label("bag of context", 62.9) == "bag of context<br>62.9"
    assert lg.baseline_label("<b>x</b> long name here", 1.0) == "&lt;b&gt;x&lt;/b&gt; long<br>name here<br>1.0"
    # the loo_sense probe's baseline (its first line was cut to "layer-0 bag of con" at 1,024 px)
    label = lg.baseline_label("layer-0 bag of context", 75.6)
    assert label == "layer-0 bag of<br>context<br>75.6" and max(map(len, label.split("<br>"))) <= lg.LABEL_CHARS
    fig = go.Figure()
    lg._right_labels(fig, [(50.0, "chance 50.0"), (51.0, lg.baseline_label("bag of context", 51.0))],
                     (0.0, 100.0), 250.0)
    low, high = (a.y / 100 * 250 + a.yshift for a in fig.layout.annotations)
    assert high - low == pytest.approx(1.5 * lg.LABEL_GAP_PX)

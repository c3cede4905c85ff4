"""app/render/probe_charts.py: the Layers page's figures (accuracy per layer, the learned s, baseline labels)."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from app.explore import probes as lg
from app.render import probe_charts as pc


def test_figures(fixture_report):
    _, report = fixture_report
    fig = pc.task_figure(report.tasks["pos"])
    assert list(fig.data[0].y) == [50.0, 70.0, 60.0, 72.0] and list(fig.data[1].y) == [97.3, 96.8]
    s_fig = pc.weights_figure(report)
    assert [list(t.y) for t in s_fig.data] == [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]
    assert len(lg.summary_rows(report)) == 3
    # tagging's per-word baseline is the word form's most frequent tag, and says so (not "mfs": senses)
    labels = [a.text for a in fig.layout.annotations]
    assert any(t.startswith("most frequent") for t in labels) and not any(t.startswith("mfs") for t in labels), labels
    pos_row = next(r for r in lg.summary_rows(report) if r["task"] == report.tasks["pos"].title)
    assert pos_row["baselines"].startswith("most frequent tag ") and "mfs" not in pos_row["baselines"]
    # the paper's diamonds stand beside their bars (x = j + offset), not on the bars' value labels
    assert list(fig.data[1].x) == [1 + pc.PAPER_OFFSET, 2 + pc.PAPER_OFFSET] and pc.PAPER_OFFSET > pc.BAR_WIDTH / 2
    # no number inside the plot (a line or a diamond could cross it): value, name and the paper's value are
    # the bar's tick label, never turned on its side
    assert list(fig.layout.xaxis.ticktext) == [
        "<b>50.0</b><br>layer 0",
        f"<b>70.0</b><br>layer 1<br><span style='color:{pc.PAPER_COLOUR}'>◆ 97.3</span>",
        f"<b>60.0</b><br>layer 2<br><span style='color:{pc.PAPER_COLOUR}'>◆ 96.8</span>",
        "<b>72.0</b><br>mix",
    ]
    assert fig.layout.xaxis.tickangle == 0 and fig.data[0].text is None and fig.data[1].mode == "markers"
    assert all(shape.layer == "below" for shape in fig.layout.shapes)  # the dotted baselines pass behind the bars
    table = lg.summary_table(report)
    assert table[""][:4] == ["layer 0", "layer 1", "layer 2", "learned mix"]
    assert len(table) == 4 and table[report.tasks["pos"].title][:4] == ["50.0", "70.0", "60.0", "72.0"]


def test_baseline_labels_of_close_values_are_moved_apart_in_order():
    fig = go.Figure()
    # three lines within 2 points of each other on a 0-100 axis drawn 250 px high: 5 px apart at most
    pc._right_labels(
        fig, [(27.4, "mfs 27.4"), (25.0, "chance 25.0"), (26.0, "bag 26.0"), (80.0, "far 80.0")], (0.0, 100.0), 250.0
    )
    px = {a.text: (a.y / 100 * 250) + a.yshift for a in fig.layout.annotations}  # label centres in pixels
    order = sorted(px, key=px.get)
    assert order == ["chance 25.0", "bag 26.0", "mfs 27.4", "far 80.0"]
    gaps = [px[b] - px[a] for a, b in zip(order, order[1:])]
    assert min(gaps) >= pc.LABEL_GAP_PX - 1e-9
    assert fig.layout.annotations[3].yshift == 0 and px["chance 25.0"] == pytest.approx(25.0 / 100 * 250)
    # a stack pushed past the top comes down as a whole
    fig = go.Figure()
    pc._right_labels(fig, [(99.0, "a"), (99.5, "b")], (0.0, 100.0), 250.0)
    tops = sorted(a.y / 100 * 250 + a.yshift for a in fig.layout.annotations)
    assert tops[1] == pytest.approx(250.0) and tops[1] - tops[0] == pytest.approx(pc.LABEL_GAP_PX)


def test_a_long_baseline_label_takes_two_lines_and_its_neighbour_keeps_clear():
    """ "bag of context 62.9" is wider than the chart's right margin (it ended in "62.!" at 1,024 px): the
    value goes under the name, and a line's label close to it stays a line and a half away."""
    assert pc.baseline_label("chance", 42.8) == "chance 42.8"
    assert pc.baseline_label("bag of context", 62.9) == "bag of context<br>62.9"
    assert pc.baseline_label("<b>x</b> long name here", 1.0) == "&lt;b&gt;x&lt;/b&gt; long<br>name here<br>1.0"
    # the loo_sense probe's baseline (its first line was cut to "layer-0 bag of con" at 1,024 px)
    label = pc.baseline_label("layer-0 bag of context", 75.6)
    assert label == "layer-0 bag of<br>context<br>75.6" and max(map(len, label.split("<br>"))) <= pc.LABEL_CHARS
    fig = go.Figure()
    pc._right_labels(
        fig, [(50.0, "chance 50.0"), (51.0, pc.baseline_label("bag of context", 51.0))], (0.0, 100.0), 250.0
    )
    low, high = (a.y / 100 * 250 + a.yshift for a in fig.layout.annotations)
    assert high - low == pytest.approx(1.5 * pc.LABEL_GAP_PX)

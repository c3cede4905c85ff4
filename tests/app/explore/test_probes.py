"""app/explore/probes.py, the Layers page's logic without Streamlit: results for a model, the weights for the
explorer's sliders, the tables and captions."""

from __future__ import annotations

import numpy as np
import pytest

from app.explore import probes as lg
from app.render import probe_charts as pc


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


def test_a_task_without_a_learned_mix_or_paper_numbers(fixture_report):
    """The leave-one-out sense probe trains nothing: no mix bar, no diamonds, no weights button or s bars."""
    _, report = fixture_report
    loo = report.tasks["loo_sense"]
    assert not loo.has_mix and loo.paper is None
    fig = pc.task_figure(loo)
    assert len(fig.data) == 1 and list(fig.data[0].y) == [50.0, 70.0, 60.0]
    # each tick is the bar's value over its name; no paper value (no diamond) under any of them
    assert list(fig.layout.xaxis.ticktext) == [
        "<b>50.0</b><br>layer 0",
        "<b>70.0</b><br>layer 1",
        "<b>60.0</b><br>layer 2",
    ]
    assert list(lg.mixing_tasks(report)) == ["wsd", "pos"]
    # the line under the chart speaks of no mix bar and no diamonds that are not there
    pos = report.tasks["pos"]
    assert lg.chart_caption(pos) == (
        "mix: " + pos.mix_learned_how.rstrip(".") + ". ◆: the paper's layer 1 and 2 (other data and model)."
    )
    assert "mix:" not in lg.chart_caption(loo) and "◆" not in lg.chart_caption(loo)
    assert [t.name for t in pc.weights_figure(report).data] == [lg.task_label("wsd"), lg.task_label("pos")]
    row = lg.summary_rows(report)[2]
    assert row["task"] == loo.title and row["learned mix"] == row["learned s"] == row["paper layer 1 / 2"] == lg.NONE
    assert "The paper has no such probe." in dict(lg.data_notes(report))[loo.title]
    assert lg.task_label("loo_sense") != lg.task_label("wsd")  # two sense probes, two names


def test_task_charts_come_two_to_a_row(fixture_report):
    _, report = fixture_report
    rows = lg.chart_rows(report)
    assert [[task for task, _ in row] for row in rows] == [["wsd", "pos"], ["loo_sense"]]
    assert lg.chart_rows(report, per_row=3) == [list(report.tasks.items())]

"""app.render.corpus_map: the Corpus page's marks shrink with the number of points, and the shared spec is kept."""

from __future__ import annotations

import numpy as np

from app.explore.inputs import Line, Occurrence
from app.render import corpus_map, map_chart
from app.render.map_spec import OCCURRENCE_VIEW


def _occurrence_mark(chart) -> dict:
    return next(layer["mark"] for layer in chart.spec["layer"] if layer.get("name") == OCCURRENCE_VIEW)


def test_marks_shrink_with_many_points_and_the_shared_spec_is_unchanged():
    assert corpus_map.mark_for(100) == {}
    assert corpus_map.mark_for(300) == {"size": round(150 * (120 / 300) ** 0.5)}
    assert corpus_map.mark_for(1500) == {"size": 42, "opacity": 0.65, "strokeWidth": 0}
    assert corpus_map.mark_for(10**6)["size"] == corpus_map.MIN_SIZE
    n = 500
    lines = [Line(f"a bank {i}", None, ("a", "bank", str(i))) for i in range(n)]
    occs = [Occurrence(i, 1, "bank", "group 1") for i in range(n)]
    chart = map_chart.contexts_chart(np.random.default_rng(0).standard_normal((n, 2)), occs, lines, "label")
    before = dict(_occurrence_mark(chart))
    dense = corpus_map.dense(chart, n)
    assert (
        _occurrence_mark(dense)["size"] == corpus_map.mark_for(n)["size"] and _occurrence_mark(dense)["opacity"] == 0.65
    )
    assert _occurrence_mark(chart) == before and dense.data is chart.data

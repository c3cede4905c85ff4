"""app.explore.compare: two models on the same occurrences (frames, aligned maps, the score table), on the tiny
fixture biLM."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.explore import activations, compare, projections
from app.explore.controls import Controls
from app.explore.frame import compute_frame


def test_two_models_compared_on_the_same_occurrences(bank):
    table, occ = bank
    # a stand-in for a second model: the same activations with each layer scaled differently, so other mixes
    other = activations.TokenTable(
        table.lines,
        [
            table.acts[:, a:b] * np.array([3.0, 1.0, 0.5])[:, None, None]
            for a, b in zip(table.offsets[:-1], table.offsets[1:])
        ],
    )
    sides = compare.compare(
        [("one", "m1", table), ("two", "m2", other)], occ, Controls(same_word=False, weights=(0.0, 1.0, 0.0)), "bank"
    )
    assert [s.name for s in sides] == ["one", "two"] and not sides[0].aligned and sides[1].aligned
    own = compute_frame(other, occ, Controls(same_word=False, weights=(0.0, 1.0, 0.0)), model_key="m2", word="bank")
    np.testing.assert_allclose(sides[1].frame.vectors, own.vectors)
    np.testing.assert_allclose(sides[1].frame.coords, projections.procrustes_align(own.coords, sides[0].frame.coords))
    # the maps as drawn side by side: titled, the legend under the plot (above it, two lines of legend at half
    # the page wide ran into the title), each side's own coordinates
    from app.render import map_chart, map_spec

    maps = [m.to_dict() for m in map_chart.comparison_charts(sides, occ, table, "label")]
    assert [m["title"]["text"] for m in maps] == ["one", "two (aligned to the left map)"]
    assert all(m["height"] == 420 for m in maps)
    occurrence_layers = [
        next(layer for layer in m["layer"] if "'occurrence'" in layer["transform"][0]["filter"]) for m in maps
    ]
    assert all(layer["encoding"]["color"]["legend"]["orient"] == "bottom" for layer in occurrence_layers)
    rows, _ = map_chart.map_rows(sides[1].frame.coords, occ, table.lines, "label")
    points = rows[rows.role == map_spec.OCCURRENCE]
    np.testing.assert_allclose(points[["x", "y"]].to_numpy(), sides[1].frame.coords[points.idx.to_numpy()])
    rows = compare.score_rows(sides)
    assert [r["layer"] for r in rows][-1].startswith("ELMo mix") and len(rows) == 4
    assert rows[0]["one: 1-NN"] == round(sides[0].frame.separation[0].knn_accuracy, 3)
    assert rows[3]["two: silhouette"] == round(sides[1].frame.separation[3].silhouette, 3)
    with pytest.raises(ValueError, match="different sentences"):
        compare.compare(
            [
                ("one", "m1", table),
                (
                    "x",
                    "m3",
                    activations.TokenTable(
                        table.lines[:2], [table.acts[:, a:b] for a, b in zip(table.offsets[:2], table.offsets[1:3])]
                    ),
                ),
            ],
            occ,
            Controls(same_word=False, weights=(0.0,) * 3),
            "bank",
        )


def test_side_names_and_the_score_note(bank):
    table, occ = bank
    assert compare.side_name("default (bundled)") == "default"
    assert compare.side_name("my model (v2) (yours, this session only)") == "my model (v2)"
    unlabelled = [dataclasses.replace(o, label=None) for o in occ]
    sides = compare.compare(
        [("one", "m1", table), ("again", "m2", table)],
        unlabelled,
        Controls(same_word=False, weights=(0.0, 0.0, 0.0)),
        "bank",
    )
    note = sides[0].frame.separation[0].note
    assert note and compare.score_note(sides) == note  # no labels: the scores say why there is no 1-NN
    assert compare.score_note([]) == ""

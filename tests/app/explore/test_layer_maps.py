"""app.explore.layer_maps: every layer's map next to the mix's, aligned onto the mix's layout."""

from __future__ import annotations

import numpy as np

from app.explore import projections
from app.explore.controls import Controls
from app.explore.frame import compute_frame
from app.explore.layer_maps import layer_maps


def test_layer_maps_are_aligned_to_the_mix_and_reused(bank):
    table, occ = bank
    frame = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), projection="auto"), word="bank"
    )
    maps = layer_maps(table, frame)
    assert maps.method == "pca" and len(maps.coords) == 4 and maps.names[-1].startswith("ELMo mix")
    np.testing.assert_array_equal(maps.coords[-1], frame.coords[:6])
    # layer 0 is context-free: one spot, at the centre of the mix's map
    assert "one vector for all" in maps.notes[0]
    np.testing.assert_allclose(maps.coords[0], np.repeat(frame.coords[:6].mean(0, keepdims=True), 6, axis=0))
    # layer 2's panel is its own PCA, turned onto the mix's map: the best rotation + scale + shift of that fit
    fit = projections.pca_2d(projections.l2_normalise(table.layers()[2][frame.rows]))
    np.testing.assert_allclose(maps.coords[2], projections.procrustes_align(fit, frame.coords[:6]), atol=1e-9)
    assert np.sum((maps.coords[2] - frame.coords[:6]) ** 2) <= np.sum((fit - frame.coords[:6]) ** 2) + 1e-12
    moved = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 3.0), projection="auto"), frame, word="bank"
    )
    again = layer_maps(table, moved, maps)
    assert again.fits is maps.fits  # the layers did not change: their fits are reused, only re-aligned
    assert (
        layer_maps(
            table, compute_frame(table, occ[:2], Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
        )
        is None
    )


def test_on_the_fixed_axes_each_layer_is_the_mix_with_its_weight_alone(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 1.0, 0.0), gamma=1.5), word="bank")
    maps = layer_maps(table, frame)
    assert maps.method == "live" and len(maps.coords) == 4
    for j in range(3):
        one_hot = np.eye(3)[j]
        np.testing.assert_allclose(maps.coords[j], frame.live.coords(one_hot, 1.5)[:6])
    np.testing.assert_array_equal(maps.coords[-1], frame.coords[:6])
    assert np.ptp(maps.coords[0], axis=0).max() < 1e-9  # layer 0: one spelling, one spot, on the same axes

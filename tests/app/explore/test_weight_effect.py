"""app.explore.weight_effect: why moving a layer weight can change the map little (issue 29, item 6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.explore import mixing, projections
from app.explore import weight_effect as we
from tests.app.explore.test_fit import senses_in


def test_a_long_layer_outweighs_the_others():
    layers, _ = senses_in(2, lengths=(1.0, 1.0, 5.0))
    effect = we.layer_effect(layers)
    assert effect.lengths[2] > 5 * max(effect.lengths[:2]) and all(effect.varies)
    assert effect.alone[2] > 0.98 > effect.alone[1]
    note = we.weight_note(effect)
    ratio = effect.lengths[2] / max(effect.lengths[:2])
    assert note == (
        f"Layer 2's vectors are {ratio:.1f}× as long as the others' here (mean length "
        f"{effect.lengths[2]:.0f} vs {effect.lengths[0]:.0f} and {effect.lengths[1]:.0f}), so even equal "
        f"weights mostly mean layer 2 (same arrangement: {effect.alone[2]:.2f}) and raising w_2 moves the "
        "map little. Layer norm evens the lengths."
    )
    balanced, _ = senses_in(2)
    assert we.weight_note(we.layer_effect(balanced)) == ""  # three different layers of one scale: nothing to say


def test_two_alike_layers_are_named():
    layers, _ = senses_in(1)
    rng = np.random.default_rng(5)
    layers[2] = layers[1] + 0.05 * rng.normal(size=layers[1].shape)  # layer 2: layer 1 with a little noise
    effect = we.layer_effect(layers)
    assert effect.similarity[1, 2] > 0.99 and effect.similarity[0, 1] < 0.5
    assert we.weight_note(effect) == (
        f"Layers 1 and 2 are very similar here ({effect.similarity[1, 2]:.2f}), so "
        "shifting weight between them moves the map little."
    )


def test_a_context_free_layer_has_no_arrangement():
    layers, _ = senses_in(2, lengths=(1.0, 1.0, 5.0))
    layers[0] = layers[0, 0]  # layer 0 of one spelling: one vector for every occurrence
    effect = we.layer_effect(layers)
    assert effect.varies == (False, True, True)
    assert math.isnan(effect.alone[0]) and math.isnan(effect.similarity[0, 1]) and effect.similarity[0, 0] == 1.0
    assert we.weight_note(effect).startswith("Layer 2's vectors are")
    assert we.weight_note(effect, layer_norm=True) == ""  # layer-normed layers share one scale
    assert we.layer_effect(layers[:, :2]) is None and we.weight_note(None) == ""
    with pytest.raises(ValueError, match="must be"):
        we.layer_effect(layers[0])


def test_why_top_layer_only_looks_like_equal_weights_for_bank(default_bank):
    """Issue 29: moving w_2 from equal weights to "top layer only" barely changes the "bank" map: layer 2's vectors
    are 3.2 times as long as layer 0's and 5.5 times layer 1's, so the equal mix already is mostly layer 2."""
    layers, _ = default_bank
    effect = we.layer_effect(layers)
    assert [round(v) for v in effect.lengths] == [27, 16, 88] and effect.varies == (False, True, True)
    assert effect.alone[2] > 0.99 and effect.alone[1] < 0.5 and effect.similarity[1, 2] < 0.5
    assert we.weight_note(effect) == (
        "Layer 2's vectors are 3.2× as long as the others' here (mean length 88 vs 27 and 16), so even equal weights "
        f"mostly mean layer 2 (same arrangement: {effect.alone[2]:.2f}) and raising w_2 moves the map little. Layer "
        "norm evens the lengths."
    )

    # the map itself: PCA at equal weights and at "top layer only" differ by 1% of its spread, layer 1 alone by half
    def pca(w):
        return projections.pca_2d(projections.l2_normalise(mixing.scalar_mix(layers, w, 1.0)))

    def moved(w):
        base, other = pca((0.0, 0.0, 0.0)), pca(w)
        return np.sum((projections.procrustes_align(other, base) - base) ** 2) / np.sum((base - base.mean(0)) ** 2)

    assert moved((-5.0, -5.0, 5.0)) < 0.02 and moved((-5.0, 5.0, -5.0)) > 0.4

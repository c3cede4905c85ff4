"""app.explore.fit: s fitted to sense labels by leave-one-out 1-NN, the sliders' w for it, and whether the labels
support setting it (issue 29, item 6)."""

from __future__ import annotations

import numpy as np
import pytest

from app.explore import fit as fm
from app.explore import mixing, neighbours


def senses_in(
    layer: int, n_per: int = 6, num_layers: int = 3, dim: int = 24, seed: int = 0, lengths=(1.0, 1.0, 1.0)
) -> tuple[np.ndarray, list[str]]:
    """(layers float32 (num_layers, 2 n_per, dim), labels): two senses that only ``layer`` tells apart (two
    directions); the other layers are noise around one direction. ``lengths`` scales each layer."""
    rng = np.random.default_rng(seed)
    n = 2 * n_per
    layers = np.empty((num_layers, n, dim))
    for j in range(num_layers):
        base = np.zeros(dim)
        base[j] = 3.0
        layers[j] = base + rng.normal(size=(n, dim))
        if j == layer:
            layers[j, :n_per, dim - 1] += 6.0
            layers[j, n_per:, dim - 2] += 6.0
        layers[j] *= lengths[j]
    return layers.astype(np.float32), ["a"] * n_per + ["b"] * n_per


# ---- the grid and the weights ----------------------------------------------------------------------------------
def test_the_grid_covers_the_simplex_with_equal_weights():
    grid = fm.simplex_grid(3)
    assert grid.shape == (67, 3)  # 66 points of step 0.1, then (1/3, 1/3, 1/3), which is not on it
    np.testing.assert_allclose(grid.sum(axis=1), 1.0)
    assert grid.min() == 0.0 and grid.max() == 1.0
    np.testing.assert_allclose(grid[-1], [1 / 3] * 3)
    assert len({tuple(np.round(r, 9)) for r in grid}) == 67
    assert fm.simplex_grid(4, 0.25).shape == (35, 4)  # equal weights (0.25 each) already on that grid
    assert fm.simplex_grid(1).tolist() == [[1.0]]
    with pytest.raises(ValueError, match="divide 1"):
        fm.simplex_grid(3, 0.3)
    with pytest.raises(ValueError, match="at least one layer"):
        fm.simplex_grid(0)
    assert fm.grid_step_for(3) == 0.1 and fm.grid_step_for(8) == pytest.approx(1 / 7)  # C(17, 7) > 5000 at 0.1


def test_weights_for_s_give_s_back_on_the_sliders():
    w = fm.weights_for_s([0.3, 0.6, 0.1], (-5.0, 5.0), 0.1)
    assert w == (0.1, 0.8, -1.0)  # log s centred, on the 0.1 steps
    np.testing.assert_allclose(mixing.softmax(w), [0.299, 0.602, 0.099], atol=5e-4)
    assert fm.weights_for_s([1 / 3] * 3, (-5.0, 5.0), 0.1) == (0.0, 0.0, 0.0)
    zero = fm.weights_for_s([0.0, 0.4, 0.6], (-5.0, 5.0), 0.1)  # no log of 0: the largest at the top, 0 at the bottom
    assert zero == (-5.0, 4.6, 5.0)
    np.testing.assert_allclose(mixing.softmax(zero), [0.0, 0.4, 0.6], atol=5e-3)
    assert fm.weights_for_s([1.0, 0.0, 0.0], (-5.0, 5.0), 0.1) == (5.0, -5.0, -5.0)
    for bad in ([], [0.0, 0.0], [-0.1, 1.1]):
        with pytest.raises(ValueError, match="non-negative"):
            fm.weights_for_s(bad, (-5.0, 5.0), 0.1)


# ---- fitting ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layer", [0, 1, 2])
def test_the_fit_finds_the_layer_that_tells_the_senses_apart(layer):
    layers, labels = senses_in(layer)
    fit = fm.fit_mix(layers, labels)
    assert fit.accuracy == 1.0 and fit.n == 12 and fit.tried == 67 and fit.step == 0.1
    assert fit.layers[layer] == 1.0 and max(v for j, v in enumerate(fit.layers) if j != layer) < 0.7
    assert fit.chance == pytest.approx(5 / 11)
    assert fit.s[layer] == max(fit.s) and fit.s.sum() == pytest.approx(1.0)
    # the score is the explorer's own 1-NN accuracy of that mix, as the Similarity tab shows it
    assert neighbours.knn_accuracy(np.tensordot(fit.s, layers.astype(np.float64), axes=1), labels) == fit.accuracy
    assert fit.equal == neighbours.knn_accuracy(layers.astype(np.float64).mean(axis=0), labels)
    # of all the s that score 1.0, the one kept is the nearest to equal weights
    grid = fm.simplex_grid(3)
    perfect = [s for s in grid if fm.accuracy(layers, labels, s) == 1.0]
    assert len(perfect) == fit.tied
    nearest = min(np.linalg.norm(s - 1 / 3) for s in perfect)
    assert np.linalg.norm(fit.s - 1 / 3) == pytest.approx(nearest)


def test_the_nested_score_does_not_flatter_the_fit():
    """Choosing s by its leave-one-out score on the same labels flatters it; the nested score chooses s without
    each occurrence, then tests on it. On pure noise (labels a, b, a, b, ...; chance 5/11) the best of 67
    weightings scores 0.71 on average over eight draws, the nested score 0.35."""
    labels = ["a", "b"] * 6
    fits = [fm.fit_mix(np.random.default_rng(seed).normal(size=(3, 12, 24)), labels) for seed in range(8)]
    assert np.mean([f.accuracy for f in fits]) == pytest.approx(0.708, abs=1e-3)
    assert np.mean([f.nested for f in fits]) == pytest.approx(0.354, abs=1e-3)
    # by hand for one draw: for each occurrence, s chosen on the other 11, then its nearest other one in that mix
    layers = np.random.default_rng(3).normal(size=(3, 12, 24))
    hits = []
    for i in range(12):
        rest = [j for j in range(12) if j != i]
        mix = np.tensordot(fm.fit_mix(layers[:, rest], [labels[j] for j in rest]).s, layers, axes=1)
        unit = mix / np.linalg.norm(mix, axis=1, keepdims=True)
        sims = unit @ unit[i]
        sims[i] = -np.inf
        hits.append(labels[int(np.argmax(sims))] == labels[i])
    assert fits[3].nested == pytest.approx(np.mean(hits)) == pytest.approx(1 / 12)
    big = np.random.default_rng(0).normal(size=(3, fm.NESTED_MAX + 1, 8))
    assert fm.fit_mix(big, ["a", "b", "c"] * 20 + ["a"]).nested is None  # n fits of the grid: only up to 60


def test_a_tie_goes_to_equal_weights():
    layers, labels = senses_in(1)
    layers = np.repeat(layers[1:2], 3, axis=0)  # three copies of the telling layer: every s scores 1.0
    fit = fm.fit_mix(layers, labels)
    assert fit.tied == fit.tried and fit.accuracy == fit.equal == 1.0
    np.testing.assert_allclose(fit.s, [1 / 3] * 3)
    assert fm.fit_mix(layers, labels).s.tolist() == fit.s.tolist()  # deterministic


def test_unlabelled_occurrences_are_left_out_and_bad_input_refused():
    layers, labels = senses_in(2)
    some = [lab if i % 3 else None for i, lab in enumerate(labels)]
    fit = fm.fit_mix(layers, some)
    assert fit.n == 8 and fit.layers[2] == 1.0
    assert fm.can_fit(["a", "b", "a"]) and not fm.can_fit(["a", "b", None]) and not fm.can_fit(["a"] * 5)
    with pytest.raises(ValueError, match="at least 3 labelled occurrences of at least 2 senses"):
        fm.fit_mix(layers, ["a"] * 12)
    with pytest.raises(ValueError, match="11 labels for 12 occurrences"):
        fm.fit_mix(layers, labels[:11])
    with pytest.raises(ValueError, match=r"\(L \+ 1, n, D\)"):
        fm.fit_mix(layers[0], labels)
    with pytest.raises(ValueError, match="do not match"):
        fm.accuracy(layers, labels, [0.5, 0.5])


def test_zero_vectors_score_like_the_explorer():
    layers, labels = senses_in(1)
    layers[:, 3] = 0.0  # an occurrence with no direction in any layer
    s = np.array([0.2, 0.5, 0.3])
    mix = np.tensordot(s, layers.astype(np.float64), axes=1)
    assert fm.accuracy(layers, labels, s) == pytest.approx(neighbours.knn_accuracy(mix, labels))


def test_the_message_says_what_was_set():
    layers, labels = senses_in(1)
    layers[[0, 2], ::2, 5] += 8.0  # layers 0 and 2 split the occurrences another way (odd / even), loudly
    fit = fm.fit_mix(layers, labels)
    assert fit.equal == 0.75 and fit.accuracy == 1.0 and fit.s.tolist() == pytest.approx([0.2, 0.4, 0.4])
    w = fm.weights_for_s(fit.s, (-5.0, 5.0), 0.1)
    s_set = mixing.softmax(w)
    text = fm.fit_message(fit, s_set, fm.accuracy(layers, labels, s_set))
    assert text == (
        f"Fitted s = {' / '.join(f'{v:.2f}' for v in s_set)}: leave-one-out 1-NN accuracy 100% over 12 "
        f"labelled occurrences, equal weights 75% (chance 45%; alone: layer 0 "
        f"{100 * fit.layers[0]:.0f}%, layer 1 100%, layer 2 {100 * fit.layers[2]:.0f}%). {fit.tied} of 67 "
        "weightings tie; the one nearest equal weights is set. Chosen without each sentence in turn, "
        "then tested on it: 100%."
    )
    same = fm.fit_mix(np.repeat(layers[1:2], 3, axis=0), labels)
    assert fm.fit_message(same, [1 / 3] * 3, 1.0) == (
        "Equal weights are already the best s: leave-one-out 1-NN accuracy 100% over 12 labelled occurrences "
        "(chance 45%; alone: layer 0 100%, layer 1 100%, layer 2 100%). 67 of 67 weightings tie. Chosen without "
        "each sentence in turn, then tested on it: 100%."
    )


def test_fitting_s_on_the_bank_example_with_the_default_model(default_bank):
    """Issue 29: on the 12 "bank" sentences, equal weights already reach the best leave-one-out score (10 of 12);
    layer 2 alone does too, layers 0 and 1 alone do worse, and 52 of the 67 weightings tie."""
    layers, labels = default_bank
    fit = fm.fit_mix(layers, labels)
    np.testing.assert_allclose(fit.s, [1 / 3] * 3)
    assert fit.accuracy == fit.equal == pytest.approx(10 / 12)
    assert fit.layers == pytest.approx((5 / 11, 7 / 12, 10 / 12), abs=1e-9)
    assert (fit.tied, fit.tried) == (52, 67) and fit.chance == pytest.approx(5 / 11)
    assert fit.nested == pytest.approx(10 / 12)  # chosen without each sentence, equal weights score the same
    assert fm.weights_for_s(fit.s, (-5.0, 5.0), 0.1) == (0.0, 0.0, 0.0)


# ---- labels that cannot support a fit --------------------------------------------------------------------------
def test_mostly_one_occurrence_labels_keep_the_weights():
    """Labels that mark one occurrence each are wrong in every mix: the grid's best was then reported as a fitted s
    (pure layer 0 at chance). The page now says why and keeps the weights."""
    layers = np.random.default_rng(0).normal(size=(3, 6, 24))
    labels = ["a", "a", "b", "c", "d", "e"]
    fit = fm.fit_mix(layers, labels)
    assert fm.unsupported(fit, labels) == (
        "Your labels do not support a fit, so the weights are unchanged: of your 5 labels, only one marks two "
        "occurrences or more, and an occurrence whose label no other one carries is wrong in every mix. More "
        "sentences per label help."
    )
    assert "none marks" in fm.unsupported(fm.fit_mix(layers[:, :4], ["a", "b", "c", "d"]), ["a", "b", "c", "d"])


def test_a_fit_at_chance_keeps_the_weights():
    """The fixture biLM's "bank": layer 0 never varies (one spelling), so every neighbour ties and it scores
    chance; layers 1 and 2 put each "a" next to a "b". The best s was that layer alone, at chance, reported as a
    fitted s; the nested score is no better than chance either."""
    rng = np.random.default_rng(1)
    pairs = np.repeat(8.0 * np.eye(24)[:6], 2, axis=0)  # occurrences 2k and 2k + 1 alike ...
    layers = np.stack([np.ones((12, 24)), pairs + rng.normal(size=(12, 24)), pairs + rng.normal(size=(12, 24))])
    labels = ["a", "b"] * 6  # ... and of different senses
    fit = fm.fit_mix(layers, labels)
    assert fit.layers[0] == pytest.approx(fit.chance) == pytest.approx(5 / 11)
    assert fit.nested < fit.chance + fm.CHANCE_MARGIN
    assert fm.unsupported(fit, labels).startswith(
        f"Your labels do not support a fit, so the weights are unchanged: the fitted s scores "
        f"{100 * fit.nested:.0f}% (chosen without each sentence in turn, then tested on it) over 12 labelled "
        "occurrences, not 10 points above chance (45%)."
    )
    n = fm.NESTED_MAX + 2  # no nested score: the score itself
    pairs = np.repeat(8.0 * np.eye(n // 2), 2, axis=0)
    big = np.stack([np.ones((n, n // 2)), pairs + rng.normal(size=pairs.shape), pairs + rng.normal(size=pairs.shape)])
    many = ["a", "b"] * (n // 2)
    assert "the fitted s scores" in fm.unsupported(fm.fit_mix(big, many), many)


@pytest.mark.parametrize("layer", [0, 1, 2])
def test_labels_that_tell_the_senses_apart_are_fitted(layer):
    layers, labels = senses_in(layer)
    assert fm.unsupported(fm.fit_mix(layers, labels), labels) == ""


def test_the_bank_example_with_the_default_model_is_fitted(default_bank):
    layers, labels = default_bank
    assert fm.unsupported(fm.fit_mix(layers, labels), labels) == ""

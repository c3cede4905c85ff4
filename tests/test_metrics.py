"""elmo_core.metrics on toy vectors: 1-NN with ties, chance, most frequent sense, silhouette by sense."""

from __future__ import annotations

import numpy as np
import pytest

from elmo_core.metrics import (
    chance_random_neighbour,
    loo_baseline_scores,
    loo_nn_scores,
    mean_over_groups,
    nn_scores_from_similarity,
    silhouette_by_sense,
)


def test_loo_nn_on_separated_clusters():
    x = np.array([[1, 0.1], [1, 0], [0, 1], [0.1, 1]], dtype=np.float32)
    assert loo_nn_scores(x, ["a", "a", "b", "b"]).tolist() == [1, 1, 1, 1]
    assert loo_nn_scores(x, ["a", "b", "a", "b"]).tolist() == [0, 0, 0, 0]


def test_loo_nn_ties_score_the_expected_random_pick():
    x = np.ones((4, 3))  # identical vectors, like layer 0 for one word form
    scores = loo_nn_scores(x, ["a", "a", "a", "b"])
    assert np.allclose(scores, [2 / 3, 2 / 3, 2 / 3, 0])
    assert np.allclose(scores, loo_baseline_scores(["a", "a", "a", "b"])["chance_random_neighbour"])


def test_loo_baselines():
    b = loo_baseline_scores(["a", "a", "a", "b"])
    assert b["mfs"].tolist() == [1, 1, 1, 0]
    assert np.allclose(b["chance_uniform"], 0.5)
    assert loo_baseline_scores(["a", "a", "b", "b"])["mfs"].tolist() == [0, 0, 0, 0]  # balanced: LOO flips it


def test_similarity_form_is_the_same_rule():
    x = np.array([[1, 0.1], [1, 0], [0, 1], [0.1, 1], [1, 0]], dtype=np.float64)
    labels = ["a", "b", "a", "b", "a"]
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    sims = unit @ unit.T
    before = sims.copy()
    assert np.array_equal(nn_scores_from_similarity(sims, labels), loo_nn_scores(x, labels))
    assert np.array_equal(sims, before)  # the caller's matrix is left alone
    assert np.allclose(chance_random_neighbour(labels), [0.5, 0.25, 0.5, 0.25, 0.5])


def test_silhouette_by_sense_on_known_cases():
    rng = np.random.default_rng(0)
    centres = np.eye(8)[:2] * 10
    labels = ["a"] * 10 + ["b"] * 10
    separated = np.repeat(centres, 10, axis=0) + rng.normal(scale=0.1, size=(20, 8))
    assert silhouette_by_sense(separated, labels) > 0.9
    assert abs(silhouette_by_sense(rng.normal(size=(200, 64)), ["a", "b"] * 100)) < 0.05
    assert silhouette_by_sense(np.ones((4, 3)), ["a", "a", "b", "b"]) == 0.0  # identical vectors
    assert np.isnan(silhouette_by_sense(separated, ["a"] * 20))  # one sense: undefined
    assert np.isnan(silhouette_by_sense(separated[:2], ["a", "b"]))  # every item its own sense
    assert mean_over_groups([0.5, float("nan"), 0.1]) == pytest.approx(0.3)
    assert mean_over_groups([float("nan")]) is None

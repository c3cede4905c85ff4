"""app/explore/neighbours.py, the explorer's neighbours without Streamlit.

Expected values are worked out by hand in the comments, or follow from the definitions (softmax, cosine,
Procrustes) on small arrays built for the purpose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]

from app.explore import neighbours  # noqa: E402


# ---- neighbours, similarity, separation ------------------------------------------------------------------------
def test_cosine_neighbours_order_exclude_and_ties():
    cand = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [-1.0, 0.0]])
    found = neighbours.cosine_neighbours(np.array([1.0, 0.0]), cand, k=3)
    assert [n.index for n in found] == [0, 3, 2]  # tie 0/3 (cos 1) kept in row order
    np.testing.assert_allclose([n.similarity for n in found], [1.0, 1.0, np.sqrt(0.5)])
    assert [n.index for n in neighbours.cosine_neighbours(np.array([1.0, 0.0]), cand, 2, exclude=[0])] == [3, 2]
    assert neighbours.cosine_neighbours(np.array([1.0, 0.0]), cand[:0], 3) == []


def test_cosine_matrix_and_unique_types():
    m = neighbours.cosine_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    np.testing.assert_allclose(m, [[1, 0, np.sqrt(0.5)], [0, 1, np.sqrt(0.5)], [np.sqrt(0.5), np.sqrt(0.5), 1]])
    words, vecs = neighbours.unique_types(["a", ".", "b", "a"], np.arange(8.0).reshape(4, 2))
    assert words == ["a", "b"]
    np.testing.assert_array_equal(vecs, [[0, 1], [4, 5]])


def test_knn_accuracy_and_silhouette_with_labels():
    x = np.array([[1, 0.1], [1, 0.2], [1, 0.0], [0.1, 1], [0.2, 1], [0.0, 1]])
    labels = ["a", "a", "a", "b", "b", "b"]
    sep = neighbours.separation(x, labels)
    assert sep.knn_accuracy == 1.0
    assert sep.chance == pytest.approx(2 * 3 * 2 / (6 * 5))  # 0.4
    assert sep.silhouette > 0.8
    # identical vectors (layer 0 of one spelling): ties split evenly -> (3-1)/5 = 0.4 for every point
    same = neighbours.separation(np.ones((6, 2)), labels)
    assert same.knn_accuracy == pytest.approx(0.4)
    mixed_up = neighbours.separation(x, ["a", "b", "a", "b", "a", "b"])
    assert mixed_up.knn_accuracy < 0.5


def test_separation_without_labels_and_too_few():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(size=(8, 4)) * 0.05 + [1, 0, 0, 0], rng.normal(size=(8, 4)) * 0.05 + [0, 1, 0, 0]])
    sep = neighbours.separation(x, [None] * 16)
    assert sep.knn_accuracy is None and sep.silhouette > 0.8 and "2 groups" in sep.note
    assert neighbours.separation(x[:3], [None] * 3).silhouette is None
    partial = neighbours.separation(x, ["a"] * 4 + [None] * 8 + ["b"] * 4)
    assert partial.knn_accuracy == 1.0 and "8 unlabelled" in partial.note


def test_all_zero_vectors_are_left_out_of_separation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 4))
    labels = ["a", "a", "a", "b", "b", "b"]
    with_zero = np.concatenate([x, np.zeros((2, 4))])
    got = neighbours.separation(with_zero, labels + ["a", "b"])
    want = neighbours.separation(x, labels)
    assert got.silhouette == pytest.approx(want.silhouette) and got.knn_accuracy == pytest.approx(want.knn_accuracy)
    assert "2 all-zero vectors left out" in got.note
    assert list(neighbours.zero_rows(with_zero)) == [False] * 6 + [True, True]

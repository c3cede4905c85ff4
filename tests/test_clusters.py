"""app.clusters: sense discovery by clustering, the number of clusters by silhouette, agreement with labels."""
from __future__ import annotations

import numpy as np
import pytest

from app import clusters as cl


def blobs(sizes, dim=16, spread=0.05, seed=0):
    """Well-separated groups of vectors around orthogonal directions (cosine geometry), in order."""
    rng = np.random.default_rng(seed)
    parts = []
    for g, size in enumerate(sizes):
        centre = np.zeros(dim)
        centre[g] = 1.0
        parts.append(centre + spread * rng.normal(size=(size, dim)))
    return np.concatenate(parts)


@pytest.mark.parametrize("sizes", [(8, 8), (6, 7, 5), (5, 5, 5, 5)])
def test_k_is_chosen_by_silhouette_on_separable_data(sizes):
    x = blobs(sizes)
    found = cl.discover(x)
    assert found.k == len(sizes) and found.chosen_by == "silhouette"
    assert found.silhouette == max(found.silhouettes.values()) > 0.8
    assert set(found.silhouettes) == set(range(2, 7))
    # clusters numbered in order of first occurrence, and each blob is one cluster
    want = np.repeat(np.arange(len(sizes)), sizes)
    np.testing.assert_array_equal(found.labels, want)
    assert found.members(1) == list(range(sizes[0], sizes[0] + sizes[1]))


def test_manual_k_overrides_and_is_clipped():
    x = blobs((8, 8))
    three = cl.discover(x, k=3)
    assert three.k == 3 and three.chosen_by == "manual" and list(three.silhouettes) == [3]
    assert len(set(three.labels.tolist())) == 3
    assert three.note == ""  # nothing was cut
    cut = cl.discover(x[:4], k=9)
    assert cut.k == 3  # at most n - 1 clusters, and the Senses tab says so
    assert cut.note == "9 clusters were asked for; 4 occurrences allow 2 to 3, so 3."
    assert cl.discover(x[:3], k=6).note == "6 clusters were asked for; 3 occurrences allow only 2, so 2."


def test_nothing_to_split():
    assert cl.discover(np.ones((6, 4))) is None  # one direction (layer 0 of one spelling)
    assert cl.discover(blobs((1, 1))) is None  # two points
    assert cl.discover(np.zeros((5, 3))) is None


def test_zero_vectors_get_no_cluster():
    x = np.concatenate([blobs((5, 5)), np.zeros((1, 16))])
    found = cl.discover(x)
    assert found.k == 2 and found.labels[-1] == cl.NO_CLUSTER and "1 all-zero" in found.note
    np.testing.assert_array_equal(found.labels[:-1], [0] * 5 + [1] * 5)


def test_agreement_is_one_for_the_same_split_and_counts_the_table():
    found = cl.discover(blobs((4, 4)))
    same = cl.agreement(found, ["river"] * 4 + ["money"] * 4)
    assert same.ari == pytest.approx(1.0) and same.n == 8
    assert same.senses == ["money", "river"] and same.clusters == [0, 1]
    np.testing.assert_array_equal(same.counts, [[0, 4], [4, 0]])
    # half of each sense in each cluster: the clusters say nothing about the senses
    crossed = cl.agreement(found, ["a", "a", "b", "b", "a", "a", "b", "b"])
    np.testing.assert_array_equal(crossed.counts, [[2, 2], [2, 2]])
    assert crossed.ari < 0.0
    # unlabelled occurrences are left out; one sense is no basis for a score
    partial = cl.agreement(found, ["x", None, "x", "x", "y", "y", None, "y"])
    assert partial.n == 6 and partial.ari == pytest.approx(1.0)
    assert cl.agreement(found, ["x"] * 8) is None
    with pytest.raises(ValueError, match="7 labels for 8"):
        cl.agreement(found, ["x"] * 7)

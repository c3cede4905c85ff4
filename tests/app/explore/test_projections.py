"""app/explore/projections.py, the explorer's projections without Streamlit.

Expected values are worked out by hand in the comments, or follow from the definitions (softmax, cosine,
Procrustes) on small arrays built for the purpose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]

from app.explore import mixing, projections  # noqa: E402


# ---- projection --------------------------------------------------------------------------------------------
def test_nearly_identical_detects_layer0_like_vectors():
    rng = np.random.default_rng(0)
    base = rng.normal(size=64)
    noise = rng.normal(size=(5, 64))
    # the "layer 0 only" mix: one vector plus 4.5e-5 of other layers (cosine distance ~1e-9)
    assert projections.nearly_identical(base + 4.5e-5 * noise)
    assert projections.nearly_identical(np.stack([base, 3 * base]))  # length does not matter, direction does
    assert not projections.nearly_identical(base + 0.05 * noise)  # real differences: cosine distance ~1e-3
    assert not projections.nearly_identical(np.stack([base, -base]))
    assert not projections.nearly_identical(base[None])  # one point: nothing to compare
    assert not projections.nearly_identical(np.stack([base, np.zeros(64)]))
    # the mixed vectors of a real model: layer 0 is the same for every occurrence of a spelling
    layers = np.stack([np.tile(base, (4, 1)), rng.normal(size=(4, 64)), rng.normal(size=(4, 64))])
    assert projections.nearly_identical(mixing.scalar_mix(layers, mixing.preset_weights("bottom", 3), 1.0))
    assert not projections.nearly_identical(mixing.scalar_mix(layers, mixing.preset_weights("equal", 3), 1.0))


def test_pca_2d_recovers_a_plane():
    rng = np.random.default_rng(0)
    plane = rng.normal(size=(30, 2)) * [5.0, 1.0]
    basis = np.linalg.qr(rng.normal(size=(10, 2)))[0].T  # (2, 10) orthonormal rows
    coords = projections.pca_2d(plane @ basis)
    aligned = projections.procrustes_align(coords, plane - plane.mean(0))
    np.testing.assert_allclose(aligned, plane - plane.mean(0), atol=1e-8)


def test_procrustes_undoes_rotation_reflection_scale_shift():
    rng = np.random.default_rng(2)
    ref = rng.normal(size=(12, 2))
    theta = 0.7
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]) @ np.diag([1, -1])
    moved = 3.0 * ref @ rot + [5.0, -2.0]
    np.testing.assert_allclose(projections.procrustes_align(moved, ref), ref, atol=1e-10)


def test_project_small_inputs_and_fallbacks():
    rng = np.random.default_rng(0)
    assert projections.project(rng.normal(size=(2, 8))).coords is None
    assert "at least 3" in projections.project(rng.normal(size=(1, 8))).note
    p = projections.project(rng.normal(size=(10, 8)), "auto")
    assert p.method == "pca" and p.coords.shape == (10, 2) and "too few" in p.note
    same = projections.project(np.ones((5, 8)), "auto")
    assert same.coords.shape == (5, 2) and np.all(same.coords == 0)
    with pytest.raises(ValueError):
        projections.project(rng.normal(size=(5, 3)), "mds")


def test_project_pca_is_stable_under_small_changes():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(12, 16))
    first = projections.project(x, "pca").coords
    second = projections.project(x + rng.normal(size=x.shape) * 1e-3, "pca", previous=first).coords
    assert np.abs(second - first).max() < 0.01  # aligned: no sign flips or rotation


def test_project_tsne_warm_start():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(size=(10, 8)) + 5, rng.normal(size=(10, 8)) - 5])
    first = projections.project(x, "tsne")
    assert first.method == "tsne" and first.coords.shape == (20, 2)
    again = projections.project(x, "tsne", previous=first.coords)
    assert again.coords.shape == (20, 2)


def test_tsne_is_bounded_and_starts_from_pca(monkeypatch):
    from sklearn import manifold

    rng = np.random.default_rng(5)
    x = projections.l2_normalise(np.concatenate([rng.normal(size=(15, 8)) + 3, rng.normal(size=(15, 8)) - 3]))
    made = []
    real = manifold.TSNE

    def spy(**kw):
        made.append(kw)
        return real(**kw)

    monkeypatch.setattr(manifold, "TSNE", spy)
    coords, iterations = projections.tsne_fit(x, 0)
    assert made[-1]["init"] == "pca" and made[-1]["max_iter"] == projections.TSNE_MAX_ITER < 1000
    assert iterations <= projections.TSNE_MAX_ITER and coords.shape == (30, 2)
    # the two groups stay apart after the capped run: every point is nearer its own group's centre
    centres = np.stack([coords[:15].mean(0), coords[15:].mean(0)])
    nearest = np.argmin(((coords[:, None] - centres[None]) ** 2).sum(-1), axis=1)
    assert nearest.tolist() == [0] * 15 + [1] * 15
    _, warm_iterations = projections.tsne_fit(x, 0, coords)
    assert made[-1]["max_iter"] == projections.TSNE_WARM_ITER and made[-1]["early_exaggeration"] == 1.0
    assert warm_iterations <= projections.TSNE_WARM_ITER
    np.testing.assert_array_equal(made[-1]["init"], coords.astype(np.float32))


@pytest.mark.slow
def test_umap_projection_separates_clusters_and_stays_put():
    pytest.importorskip("umap")
    from app.serving.warm_up import UmapWarmUp

    warm = UmapWarmUp().run_now()
    assert warm.state == "ready", warm.error
    rng = np.random.default_rng(5)
    centers = np.zeros((2, 16))
    centers[0, 0], centers[1, 1] = 1.0, 1.0
    x = np.concatenate([centers[0] + rng.normal(size=(15, 16)) * 0.05, centers[1] + rng.normal(size=(15, 16)) * 0.05])
    first = projections.project(x, "auto")
    assert first.method == "umap"
    a, b = first.coords[:15], first.coords[15:]
    gap = np.linalg.norm(a.mean(0) - b.mean(0))
    assert gap > 3 * max(a.std(0).max(), b.std(0).max())
    second = projections.project(x + rng.normal(size=x.shape) * 1e-3, "umap", previous=first.coords)
    scale = np.ptp(first.coords, axis=0).max()
    assert np.median(np.linalg.norm(second.coords - first.coords, axis=1)) < 0.2 * scale


def test_pca_axes_have_a_fixed_orientation():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(9, 6))
    coords = projections.pca_2d(x)
    np.testing.assert_allclose(projections.pca_2d(-x), coords, atol=1e-12)  # the sign flip of the data is undone
    for axis in range(2):
        assert coords[np.argmax(np.abs(coords[:, axis])), axis] > 0


@pytest.mark.parametrize("method", ["umap", "tsne"])
def test_identical_vectors_share_one_spot_in_umap_and_tsne(method):
    """Layer 0 gives every occurrence of a spelling the same vector; the map must not scatter them."""
    if method == "umap":
        pytest.importorskip("umap")
    rng = np.random.default_rng(3)
    spellings = rng.normal(size=(6, 8))
    which = np.array([0] * 8 + [1] * 4 + [2, 3, 4, 5] * 2)
    p = projections.project(spellings[which], method)
    assert p.method == method
    for k in range(6):
        spots = p.coords[which == k]
        np.testing.assert_array_equal(spots, np.repeat(spots[:1], len(spots), axis=0))
    assert len(np.unique(p.coords, axis=0)) == 6
    # two spellings among sixteen occurrences: too few distinct vectors for UMAP, so PCA with a note saying why
    two = projections.project(spellings[[0] * 14 + [1] * 2], method)
    assert two.method == "pca" and "Only 2 distinct vectors among the 16 points" in two.note
    assert len(np.unique(two.coords, axis=0)) == 2


def test_distinct_rows_keep_the_order_of_first_appearance():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [0.5, 0.5], [3.0, 4.0]], dtype=np.float32)
    first, inverse = projections.distinct_rows(x)
    assert first.tolist() == [0, 1, 3] and inverse.tolist() == [0, 1, 0, 2, 1]
    np.testing.assert_array_equal(x[first][inverse], x)

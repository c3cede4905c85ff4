"""app.explore.frame.compute_frame on the tiny fixture biLM: what the explorer page draws, without Streamlit."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

from app.explore import frame as fr
from app.explore import mixing, projections
from app.explore.controls import Controls
from app.explore.frame import compute_frame


def test_the_frame_holds_the_mix_and_the_views(bank):
    table, occ = bank
    frame = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 2.0), gamma=0.5, projection="auto"), word="bank"
    )
    np.testing.assert_allclose(frame.s, mixing.softmax([0, 0, 2.0]))
    np.testing.assert_allclose(frame.vectors, table.mix([0, 0, 2.0], 0.5)[table.rows(occ)])
    assert frame.coords.shape == (6, 2) and frame.projection.method == "pca"
    assert not frame.same_vector and frame.query == 0
    assert len(frame.neighbours) == 10 and len(frame.panels) == 4 and all(p.shape == (6, 6) for p in frame.panels)
    assert len(frame.separation) == 4 and frame.separation[0].knn_accuracy is not None
    assert frame.reference_neighbours is None
    normed = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), layer_norm=True), word="bank")
    layers = fr.occurrence_layers(table, normed)
    assert layers.shape == (3, 6, table.acts.shape[-1])
    np.testing.assert_array_equal(layers, table.layers(True)[:, normed.rows])
    np.testing.assert_array_equal(normed.occurrence_coords, normed.coords[:6])


def test_layer_zero_draws_one_spot(bank):
    table, occ = bank
    frame = compute_frame(
        table, occ, Controls(same_word=False, weights=(5.0, -5.0, -5.0), projection="auto"), word="bank"
    )
    assert frame.s[0] > 0.9999 and frame.same_vector and np.ptp(frame.coords, axis=0).max() == 0.0
    # the fixed axes: the residue of layers 1 and 2 (s = 4.5e-5 each) moves the points less than 0.1 % of the axes
    live = compute_frame(table, occ, Controls(same_word=False, weights=(5.0, -5.0, -5.0)), word="bank")
    half = live.live.half_extent(live.s)  # the frame at this s: one spot, not a cloud of residues
    assert live.same_vector and np.ptp(live.coords, axis=0).max() < 1e-2 * half.max()


@pytest.mark.parametrize("method", ["pca", "tsne"])
def test_the_map_depends_on_the_controls_not_on_the_history(bank, method):
    table, occ = bank
    target = Controls(same_word=False, weights=(0.0, 1.0, 2.0), projection=method)
    fresh = compute_frame(table, occ, target, word="bank")  # a link opened in a new session
    previous = None
    for w in [(0.0, 0.0, 0.0), (3.0, -1.0, 0.0), (0.0, 0.5, 1.5), (0.0, 1.0, 2.0)]:  # a session moving sliders
        previous = compute_frame(
            table, occ, Controls(same_word=False, weights=w, projection=method), previous, word="bank"
        )
    np.testing.assert_array_equal(previous.coords, fresh.coords)
    other = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 2.0, 1.0), projection=method), previous, word="bank"
    )
    assert np.abs(other.coords - fresh.coords).max() > 1e-6  # another mix: another map


def test_every_layout_starts_from_the_equal_weights_layout(bank, monkeypatch):
    table, occ = bank
    first = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), projection="auto"), word="bank"
    )
    base = first.base_layout[1].coords
    np.testing.assert_array_equal(first.coords, base)  # equal weights: the base itself
    seen = []
    real = projections.project
    monkeypatch.setattr(
        projections, "project", lambda x, m, previous, **kw: (seen.append(previous), real(x, m, previous, **kw))[1]
    )
    second = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 1.0, 0.0), projection="auto"), first, word="bank"
    )
    assert len(seen) == 1 and seen[0] is base  # memoised base; the new mix starts from it
    assert second.separation[:3] == first.separation[:3]  # the layers did not change, only the mix
    third = compute_frame(
        table,
        occ,
        Controls(same_word=False, weights=(0.0, 1.0, 0.0), layer_norm=True, projection="auto"),
        second,
        word="bank",
    )
    assert third.separation_key != second.separation_key and len(seen) == 3  # a new base for layer-normed vectors


def test_a_new_click_picks_the_query_and_an_old_one_does_not(bank):
    table, occ = bank
    first = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), clicked=4, word="bank")
    assert first.query == 4
    moved = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), query=2), first, clicked=4, word="bank"
    )
    assert moved.query == 2  # the selectbox moved on; the click is the old one
    other_word = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), query=2), moved, word="river"
    )
    assert other_word.query == 0


def test_the_frame_clusters_the_mix(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    assert frame.clusters is not None and len(frame.clusters.labels) == 6 and frame.clusters.labels[0] == 0
    fixed = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), n_clusters=3), word="bank")
    assert fixed.clusters.k == 3 and fixed.clusters.chosen_by == "manual"
    layer0 = compute_frame(table, occ, Controls(same_word=False, weights=(5.0, -5.0, -5.0)), word="bank")
    assert layer0.clusters is None  # one vector for all: nothing to split


def test_a_frame_computes_what_a_view_reads_only_when_it_reads_it(bank):
    """A control move redraws the open view only: the frame holds the mix and the map at once, and
    the neighbours, matrices, scores and clusters when first read; the layers' scores, which do not depend on s
    or γ, pass to the next frame of the same points and layer norm."""
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.5)), word="bank")
    assert frame.coords is not None and frame.coords.shape == (len(occ), 2)
    parts = ("neighbours", "_reference_found", "_layer0_found", "panels", "separation", "clusters")
    assert not any(name in vars(frame) for name in parts)
    eager = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.5)), word="bank")
    assert [n[:3] for n in frame.neighbours] == [n[:3] for n in eager.neighbours] and frame.neighbours
    assert len(frame.panels) == table.num_layers + 1 and "panels" in vars(frame)
    first = frame.separation
    assert len(first) == table.num_layers + 1 and frame.layer_scores["layers"] == first[:-1]
    moved = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 1.0)), frame, word="bank")
    assert moved.layer_scores is frame.layer_scores and moved.separation[:-1] == first[:-1]
    normed = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 1.0), layer_norm=True), moved, word="bank"
    )
    assert normed.layer_scores is not frame.layer_scores and "layers" not in normed.layer_scores


def test_colour_by_cluster_is_offered_without_clustering_each_move(bank, monkeypatch):
    table, occ = bank
    monkeypatch.setattr(fr, "_EQUAL_CLUSTERS", weakref.WeakKeyDictionary())
    calls = []
    discover = fr.discover
    monkeypatch.setattr(fr, "discover", lambda *a, **k: calls.append(1) or discover(*a, **k))
    a = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    offered = a.offers_clusters()
    assert len(calls) == 1 and "clusters" not in a.__dict__  # the equal-weights mix, clustered once
    expected = fr._clear_clusters(table.mix((0.0,) * 3, 1.0)[a.rows], 0)
    assert offered == expected
    calls.clear()
    for w in (1.0, 2.0, -1.0):  # slider moves: the same points, no clustering
        b = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, w, 0.0)), a, word="bank")
        assert b.offers_clusters() == offered and "clusters" not in b.__dict__
        a = b
    assert calls == []
    # the layer norm on: its equal-weights mix clustered once; off again: nothing new
    on = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 1.0, 0.0), layer_norm=True), a, word="bank")
    on.offers_clusters()
    assert len(calls) == 1
    off = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 2.0, 0.0)), on, word="bank")
    assert off.offers_clusters() == offered and len(calls) == 1
    # coloured by cluster (or the Senses tab read them): this mix's clusters count too
    assert a.offers_clusters(current=True) == (offered or a.cluster_labels is not None) and "clusters" in a.__dict__

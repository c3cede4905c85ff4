"""app.frame.compute_frame on the tiny fixture biLM: what the explorer page draws, without Streamlit."""
from __future__ import annotations

import numpy as np
import pytest

from app import explore as ex
from app import compare
from app.frame import Controls, Reference, compute_frame, layer_maps

TEXT = """[river] We sat on the bank of the river.
[river] The river bank was muddy.
[river] Reeds covered the bank where the ducks nested.
[money] The bank raised its rates.
[money] I paid the cheque into the bank.
[money] A bank manager called me about the loan."""


@pytest.fixture(scope="module")
def bank(embedder):
    parsed = ex.parse_input(TEXT)
    table = ex.TokenTable(parsed.lines, embedder.embed_batch([list(ln.tokens) for ln in parsed.lines]))
    return table, ex.find_occurrences(parsed.lines, "bank")


def test_the_frame_holds_the_mix_and_the_views(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 2.0), gamma=0.5), word="bank")
    np.testing.assert_allclose(frame.s, ex.softmax([0, 0, 2.0]))
    np.testing.assert_allclose(frame.vectors, table.mix([0, 0, 2.0], 0.5)[table.rows(occ)])
    assert frame.coords.shape == (6, 2) and frame.projection.method == "pca"
    assert not frame.same_vector and frame.query == 0
    assert len(frame.neighbours) == 10 and len(frame.panels) == 4 and all(p.shape == (6, 6) for p in frame.panels)
    assert len(frame.separation) == 4 and frame.separation[0].knn_accuracy is not None
    assert frame.reference_neighbours is None


def test_layer_zero_draws_one_spot(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((5.0, -5.0, -5.0)), word="bank")
    assert frame.s[0] > 0.9999 and frame.same_vector and np.ptp(frame.coords, axis=0).max() == 0.0


@pytest.mark.parametrize("method", ["pca", "tsne"])
def test_the_map_depends_on_the_controls_not_on_the_history(bank, method):
    table, occ = bank
    target = Controls((0.0, 1.0, 2.0), projection=method)
    fresh = compute_frame(table, occ, target, word="bank")  # a link opened in a new session
    previous = None
    for w in [(0.0, 0.0, 0.0), (3.0, -1.0, 0.0), (0.0, 0.5, 1.5), (0.0, 1.0, 2.0)]:  # a session moving sliders
        previous = compute_frame(table, occ, Controls(w, projection=method), previous, word="bank")
    np.testing.assert_array_equal(previous.coords, fresh.coords)
    other = compute_frame(table, occ, Controls((0.0, 2.0, 1.0), projection=method), previous, word="bank")
    assert np.abs(other.coords - fresh.coords).max() > 1e-6  # another mix: another map


def test_every_layout_starts_from_the_equal_weights_layout(bank, monkeypatch):
    table, occ = bank
    first = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank")
    base = first.base_layout[1].coords
    np.testing.assert_array_equal(first.coords, base)  # equal weights: the base itself
    seen = []
    real = ex.project
    monkeypatch.setattr(ex, "project", lambda x, m, previous, **kw: (seen.append(previous), real(x, m, previous, **kw))[1])
    second = compute_frame(table, occ, Controls((0.0, 1.0, 0.0)), first, word="bank")
    assert len(seen) == 1 and seen[0] is base  # memoised base; the new mix starts from it
    assert second.separation[:3] == first.separation[:3]  # the layers did not change, only the mix
    third = compute_frame(table, occ, Controls((0.0, 1.0, 0.0), layer_norm=True), second, word="bank")
    assert third.separation_key != second.separation_key and len(seen) == 3  # a new base for layer-normed vectors


def test_a_new_click_picks_the_query_and_an_old_one_does_not(bank):
    table, occ = bank
    first = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), clicked=4), word="bank")
    assert first.query == 4
    moved = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), query=2, clicked=4), first, word="bank")
    assert moved.query == 2  # the selectbox moved on; the click is the old one
    other_word = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), query=2), moved, word="river")
    assert other_word.query == 0


def test_reference_neighbours_come_from_the_reference_table(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), k=3), word="bank",
                          reference=Reference(table, total=10))
    assert len(frame.reference_neighbours) == 3
    assert "Among 6 occurrences in 6 reference sentences (of 10 that contain it)." == frame.reference_note
    assert all(k.target == "bank" for _, k in frame.reference_neighbours)
    one = compute_frame(table, occ[:1], Controls((0.0, 0.0, 0.0), k=3), word="bank",
                        reference=Reference(ex.TokenTable(table.lines[:1], [table.acts[:, :int(table.offsets[1])]])))
    assert one.reference_note == "Among 1 occurrence in 1 reference sentence."
    empty = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank", reference=Reference(None, 0, "none"))
    assert empty.reference_neighbours is None and empty.reference_note == "none"


def test_layer_zero_neighbours_come_from_the_vocabulary_once_it_is_ready(bank, embedder):
    from app.type_vectors import TypeVectors
    table, occ = bank
    vocab = ["bank", "banks", "tank", "river", "money", "the", "rank", "blank"]
    types = TypeVectors(vocab, embedder.type_vectors)
    waiting = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), k=3), word="bank", types=types)
    assert "in the background (0%)" in waiting.layer0_note
    assert waiting.layer0_neighbours == ex.layer0_type_neighbours(table, None, int(table.rows(occ)[0]), 3)
    types.run_now()
    ready = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), k=3), word="bank", types=types)
    assert "8 most frequent word types" in ready.layer0_note
    q = table.layers(False)[0][table.rows(occ)[0]]
    v = embedder.type_vectors(vocab[1:])
    sims = v @ q / np.linalg.norm(v, axis=1) / np.linalg.norm(q)
    assert [w for w, _ in ready.layer0_neighbours] == [vocab[1:][i] for i in np.argsort(-sims)[:3]]


def test_the_frame_clusters_the_mix(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank")
    assert frame.clusters is not None and len(frame.clusters.labels) == 6 and frame.clusters.labels[0] == 0
    fixed = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), n_clusters=3), word="bank")
    assert fixed.clusters.k == 3 and fixed.clusters.chosen_by == "manual"
    layer0 = compute_frame(table, occ, Controls((5.0, -5.0, -5.0)), word="bank")
    assert layer0.clusters is None  # one vector for all: nothing to split


def test_layer_maps_are_aligned_to_the_mix_and_reused(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank")
    maps = layer_maps(table, frame)
    assert maps.method == "pca" and len(maps.coords) == 4 and maps.names[-1].startswith("ELMo mix")
    np.testing.assert_array_equal(maps.coords[-1], frame.coords[:6])
    # layer 0 is context-free: one spot, at the centre of the mix's map
    assert "one vector for all" in maps.notes[0]
    np.testing.assert_allclose(maps.coords[0], np.repeat(frame.coords[:6].mean(0, keepdims=True), 6, axis=0))
    # layer 2's panel is its own PCA, turned onto the mix's map: the best rotation + scale + shift of that fit
    fit = ex.pca_2d(ex.l2_normalise(table.layers()[2][frame.rows]))
    np.testing.assert_allclose(maps.coords[2], ex.procrustes_align(fit, frame.coords[:6]), atol=1e-9)
    assert np.sum((maps.coords[2] - frame.coords[:6]) ** 2) <= np.sum((fit - frame.coords[:6]) ** 2) + 1e-12
    moved = compute_frame(table, occ, Controls((0.0, 0.0, 3.0)), frame, word="bank")
    again = layer_maps(table, moved, maps)
    assert again.fits is maps.fits  # the layers did not change: their fits are reused, only re-aligned
    assert layer_maps(table, compute_frame(table, occ[:2], Controls((0.0, 0.0, 0.0)), word="bank")) is None


def test_two_models_compared_on_the_same_occurrences(bank):
    table, occ = bank
    # a stand-in for a second model: the same activations with each layer scaled differently, so other mixes
    other = ex.TokenTable(table.lines, [table.acts[:, a:b] * np.array([3.0, 1.0, 0.5])[:, None, None]
                                        for a, b in zip(table.offsets[:-1], table.offsets[1:])])
    sides = compare.compare([("one", "m1", table), ("two", "m2", other)], occ, Controls((0.0, 1.0, 0.0)), "bank")
    assert [s.name for s in sides] == ["one", "two"] and not sides[0].aligned and sides[1].aligned
    own = compute_frame(other, occ, Controls((0.0, 1.0, 0.0)), model_key="m2", word="bank")
    np.testing.assert_allclose(sides[1].frame.vectors, own.vectors)
    np.testing.assert_allclose(sides[1].frame.coords, ex.procrustes_align(own.coords, sides[0].frame.coords))
    rows = compare.score_rows(sides)
    assert [r["layer"] for r in rows][-1].startswith("ELMo mix") and len(rows) == 4
    assert rows[0]["one: 1-NN"] == round(sides[0].frame.separation[0].knn_accuracy, 3)
    assert rows[3]["two: silhouette"] == round(sides[1].frame.separation[3].silhouette, 3)
    with pytest.raises(ValueError, match="different sentences"):
        compare.compare([("one", "m1", table), ("x", "m3", ex.TokenTable(table.lines[:2], [
            table.acts[:, a:b] for a, b in zip(table.offsets[:2], table.offsets[1:3])]))], occ, Controls((0.0,) * 3), "bank")

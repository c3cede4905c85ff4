"""app.explore.frame_neighbours through a frame on the tiny fixture biLM: the reference and layer-0 neighbours columns."""

from __future__ import annotations

import numpy as np

from app.explore import neighbours
from app.explore.controls import Controls
from app.explore.frame import compute_frame
from app.explore.frame_neighbours import Reference


def test_reference_neighbours_come_from_the_reference_table(bank):
    table, occ = bank
    frame = compute_frame(
        table,
        occ,
        Controls(same_word=False, weights=(0.0, 0.0, 0.0), k=3),
        word="bank",
        reference=Reference(table, total=10),
    )
    assert len(frame.reference_neighbours) == 3
    assert all(k.target == "bank" for _, k in frame.reference_neighbours)
    empty = compute_frame(
        table,
        occ,
        Controls(same_word=False, weights=(0.0, 0.0, 0.0)),
        word="bank",
        reference=Reference(None, 0, "none"),
    )
    assert empty.reference_neighbours is None


def test_layer_zero_neighbours_come_from_the_vocabulary_once_it_is_ready(bank, embedder):
    from app.serving.type_vectors import TypeVectors

    table, occ = bank
    vocab = ["bank", "banks", "tank", "river", "money", "the", "rank", "blank"]
    types = TypeVectors(vocab, embedder.type_vectors)
    waiting = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), k=3), word="bank", types=types
    )
    assert "in the background (0%)" in waiting.layer0_note
    assert waiting.layer0_neighbours == neighbours.layer0_type_neighbours(table, None, int(table.rows(occ)[0]), 3)
    types.run_now()
    ready = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), k=3), word="bank", types=types)
    assert "8 most frequent word types" in ready.layer0_note
    q = table.layers(False)[0][table.rows(occ)[0]]
    v = embedder.type_vectors(vocab[1:])
    sims = v @ q / np.linalg.norm(v, axis=1) / np.linalg.norm(q)
    assert [w for w, _ in ready.layer0_neighbours] == [vocab[1:][i] for i in np.argsort(-sims)[:3]]

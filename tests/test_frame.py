"""app.frame.compute_frame on the tiny fixture biLM: what the explorer page draws, without Streamlit."""
from __future__ import annotations

import numpy as np
import pytest

from app import explore as ex
from app.frame import Controls, Reference, compute_frame

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
    assert frame.layout is None  # nothing to warm-start from


def test_the_previous_frame_warm_starts_and_memoises(bank, monkeypatch):
    table, occ = bank
    first = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank")
    seen = {}
    real = ex.project
    monkeypatch.setattr(ex, "project", lambda x, m, previous, **kw: (seen.__setitem__("p", previous),
                                                                     real(x, m, previous, **kw))[1])
    second = compute_frame(table, occ, Controls((0.0, 1.0, 0.0)), first, word="bank")
    assert seen["p"] is first.coords  # the same points start from the last layout
    assert second.separation[:3] == first.separation[:3]  # the layers did not change, only the mix
    third = compute_frame(table, occ, Controls((0.0, 1.0, 0.0), layer_norm=True), second, word="bank")
    assert third.separation_key != second.separation_key


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
    empty = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank", reference=Reference(None, 0, "none"))
    assert empty.reference_neighbours is None and empty.reference_note == "none"

"""app/render/map_texts.py: the contexts map's hover text and legend order, made once per set of points."""

from __future__ import annotations

from app.explore.controls import Controls
from app.explore.frame import compute_frame
from app.render import map_texts


def test_a_move_reuses_the_text_and_names_clusters_only_when_coloured_by_cluster(bank):
    table, occ = bank
    a = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), context=True), word="bank")
    b = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 1.0, 0.0), context=True), a, word="bank")
    texts = map_texts.texts_of(a, occ, table)
    assert texts is map_texts.texts_of(b, occ, table)  # the same points: the hover text is made once
    assert len(texts.occ_text) == len(occ) and len(texts.ctx_head) == len(b.context_rows) > 0
    by_label = texts.colouring("label", None)
    assert sorted(by_label.order.tolist()) == list(range(len(occ)))
    assert not any("cluster" in h for h in by_label.heads)  # coloured by label: no cluster in the hover titles
    assert texts.colouring("label", None) is by_label  # kept per colouring
    # coloured by cluster: the clusters in legend order and in the hover titles, or one "no clear clusters" group
    assert texts.colouring("cluster", None).names == [map_texts.NO_CLEAR_CLUSTERS]
    clustered = texts.colouring("cluster", [1, 0, 0, 1, 0, 1])
    assert clustered.names == ["cluster 1", "cluster 2"] and clustered.order.tolist() == [1, 2, 4, 0, 3, 5]
    assert clustered.heads[0].endswith(" · cluster 1") and clustered.heads[-1].endswith(" · cluster 2")

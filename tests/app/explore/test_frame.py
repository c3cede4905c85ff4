"""app.explore.frame.compute_frame on the tiny fixture biLM: what the explorer page draws, without Streamlit."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.explore import activations, inputs, mixing, neighbours, projections
from app.explore import frame as fr
from app.explore.frame import Controls, Reference, compute_frame, layer_maps


def test_the_frame_holds_the_mix_and_the_views(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 2.0), gamma=0.5), word="bank")
    np.testing.assert_allclose(frame.s, mixing.softmax([0, 0, 2.0]))
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
    real = projections.project
    monkeypatch.setattr(projections, "project", lambda x, m, previous, **kw: (seen.append(previous), real(x, m, previous, **kw))[1])
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
                        reference=Reference(activations.TokenTable(table.lines[:1], [table.acts[:, :int(table.offsets[1])]])))
    assert one.reference_note == "Among 1 occurrence in 1 reference sentence."
    empty = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank", reference=Reference(None, 0, "none"))
    assert empty.reference_neighbours is None and empty.reference_note == "none"


def test_layer_zero_neighbours_come_from_the_vocabulary_once_it_is_ready(bank, embedder):
    from app.serving.type_vectors import TypeVectors
    table, occ = bank
    vocab = ["bank", "banks", "tank", "river", "money", "the", "rank", "blank"]
    types = TypeVectors(vocab, embedder.type_vectors)
    waiting = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), k=3), word="bank", types=types)
    assert "in the background (0%)" in waiting.layer0_note
    assert waiting.layer0_neighbours == neighbours.layer0_type_neighbours(table, None, int(table.rows(occ)[0]), 3)
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
    fit = projections.pca_2d(projections.l2_normalise(table.layers()[2][frame.rows]))
    np.testing.assert_allclose(maps.coords[2], projections.procrustes_align(fit, frame.coords[:6]), atol=1e-9)
    assert np.sum((maps.coords[2] - frame.coords[:6]) ** 2) <= np.sum((fit - frame.coords[:6]) ** 2) + 1e-12
    moved = compute_frame(table, occ, Controls((0.0, 0.0, 3.0)), frame, word="bank")
    again = layer_maps(table, moved, maps)
    assert again.fits is maps.fits  # the layers did not change: their fits are reused, only re-aligned
    assert layer_maps(table, compute_frame(table, occ[:2], Controls((0.0, 0.0, 0.0)), word="bank")) is None


def test_the_layers_side_by_side_are_readable_on_a_projector(bank):
    from app.render import figures

    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank")
    fig = figures.small_multiples(layer_maps(table, frame), occ, table.lines, title="bank")
    assert len(fig.layout.annotations) == 4  # one title a panel: layers 0-2 and the mix
    assert {a.font.size for a in fig.layout.annotations} == {figures.READABLE_FONT}
    assert fig.layout.legend.font.size == fig.layout.hoverlabel.font.size == figures.READABLE_FONT == 14
    assert fig.layout.title.font.size == 16


# ---- the page's words for a frame -----------------------------------------------------------------------------
def test_the_mix_formula_and_the_notes(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 2.0), gamma=0.5), word="bank")
    s = mixing.softmax([0.0, 0.0, 2.0])
    assert fr.mix_formula(frame.s, 0.5) == ("ELMo = γ · Σ_j s_j · h_j with s = softmax(w): ELMo = 0.5 · "
                                            f"({s[0]:.3f}·h_0 + {s[1]:.3f}·h_1 + {s[2]:.3f}·h_2)")
    assert fr.zero_note(frame) == "" and fr.same_vector_note(frame) == ""
    layer0 = compute_frame(table, occ, Controls((5.0, -5.0, -5.0)), word="bank")
    assert fr.same_vector_note(layer0).startswith("All 6 occurrences have the same vector here: layer 0 is "
                                                  "context-free")
    zero = dataclasses.replace(frame, zero=np.array([False, True, False, False, False, True]))
    assert fr.zero_note(zero).startswith("2 of the 6 occurrences have an all-zero vector in this mix (numbered #2, #6)")
    assert "Mix + projection:" in fr.map_caption(frame) and fr.map_caption(frame).startswith(
        "PCA of the 6 occurrence vectors (cosine")
    with_context = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), context=True), word="bank")
    assert f"and {len(with_context.context_rows)} other words" in fr.map_caption(with_context)
    assert fr.method_name("auto") == "the automatic projection" and fr.method_name("tsne") == "t-SNE"


def test_the_word_summary_says_when_capitals_split_layer_zero(embedder):
    parsed = inputs.parse_input("Spring came early .\nThe spring was dry .\nIn spring we sow .")
    occ = inputs.find_occurrences(parsed.lines, "spring")
    head, caption = fr.word_summary("spring", occ)
    assert head == "**3 occurrences** of “spring” in 3 sentences; forms as written: spring, Spring"
    assert fr.case_split(occ) and "“spring” and “Spring” get different layer-0 vectors" in caption
    table = activations.TokenTable(parsed.lines, embedder.embed_batch([list(ln.tokens) for ln in parsed.lines]))
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="spring")
    assert "Layer 0 sees spring and Spring as different words" in fr.separation_caption(frame, occ)
    same = [o for o in occ if o.token == "spring"]
    assert fr.word_summary("spring", same) == ("**2 occurrences** of “spring” in 2 sentences; form as written: "
                                               "spring", "")
    assert not fr.case_split(same)


def test_the_separation_caption_names_what_is_scored(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank")
    caption = fr.separation_caption(frame, occ)
    assert caption.startswith("1-NN accuracy: share of occurrences") and "Layer 0 sees" not in caption
    unlabelled = [dataclasses.replace(o, label=None) for o in occ]
    plain = compute_frame(table, unlabelled, Controls((0.0, 0.0, 0.0)), word="bank")
    assert fr.separation_caption(plain, unlabelled).startswith("Silhouette: (b − a)/max(a, b)")


def test_clusters_as_the_senses_tab_lists_them(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), n_clusters=3), word="bank")
    head, per_k = fr.cluster_summary(frame.clusters)
    assert head.startswith("**3 clusters** in the current mix (set by hand); silhouette ") and per_k == ""
    groups = fr.cluster_groups(frame.clusters)
    assert [g.name for g in groups] == ["cluster 1", "cluster 2", "cluster 3"]
    assert sorted(i for g in groups for i in g.members) == list(range(6))
    assert [list(np.flatnonzero(frame.cluster_labels == g.cluster)) for g in groups] == [g.members for g in groups]
    auto = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank")
    head, per_k = fr.cluster_summary(auto.clusters)  # 6 occurrences: 2 clusters of 3 or none; here none
    assert head == ("**No clear clusters**: a split into 2 leaves a cluster of fewer than 3 occurrences. The "
                    "occurrences form one group in this mix; pick a number of clusters to split them anyway.")
    assert per_k == "" and auto.cluster_labels is None and auto.clusters.k == 1
    clear = dataclasses.replace(auto.clusters, labels=np.array([0, 0, 0, 1, 1, 1]), k=2, silhouettes={2: 0.4, 3: 0.3},
                                too_small={4: 1})
    head, per_k = fr.cluster_summary(clear)
    assert head.startswith("**2 clusters** in the current mix (chosen by silhouette among 2, 3); silhouette 0.40")
    assert per_k == ("Silhouette per number of clusters: 2: 0.40, 3: 0.30; 4 left out (a cluster under 3 "
                     "occurrences)")
    assert compute_frame(table, occ, Controls((5.0, -5.0, -5.0)), word="bank").cluster_labels is None


def test_tables_and_options_of_the_page(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0), layer_norm=True), word="bank")
    assert fr.query_option(occ, table.lines, 1) == "#2 · river · The river «bank» was muddy ."
    unlabelled = [dataclasses.replace(o, label=None) for o in occ]  # no empty slot between two separators
    assert fr.query_option(unlabelled, table.lines, 1) == "#2 · The river «bank» was muddy ."
    rows = fr.tokenization_rows(table.lines)
    assert rows["#"] == [1, 2, 3, 4, 5, 6] and rows["label"][0] == "river" and rows["tokens"][1].startswith("The ·")
    layers = fr.occurrence_layers(table, frame)
    assert layers.shape == (3, 6, table.acts.shape[-1])
    np.testing.assert_array_equal(layers, table.layers(True)[:, frame.rows])
    np.testing.assert_array_equal(frame.occurrence_coords, frame.coords[:6])
    rows, columns = fr.occurrence_lines(occ, table.lines, [1, 4], chars=70)
    assert [k.target for k in rows] == ["bank", "bank"] and rows[0].left == "The river"
    assert columns == [("#", "n", ["#2", "#5"]), ("label", "lab", ["river", "money"])]
    unlabelled = [dataclasses.replace(o, label=None) for o in occ]
    assert fr.occurrence_lines(unlabelled, table.lines)[1] == [("#", "n", [f"#{i}" for i in range(1, 7)])]
    rows, columns = fr.neighbour_lines(frame)
    assert len(rows) == len(frame.neighbours) == 10
    assert columns[0] == ("cos", "c", [f"{cos:.3f}" for _, _, cos, _ in frame.neighbours])
    assert columns[1][0] == "label" and columns[1][2] == [label for _, label, _, _ in frame.neighbours]
    assert fr.embedding_note(0.25, 2, table) == (f"Last biLM run: 250 ms for 2 new of 6 sentences ({table.num_tokens} "
                                                 "tokens; the rest came from the cache).")
    assert fr.embedding_note(0.25, 6, table) == f"Last biLM run: 250 ms for 6 new of 6 sentences ({table.num_tokens} tokens)."


def test_a_frame_computes_what_a_view_reads_only_when_it_reads_it(bank):
    """A control move redraws the open view only (issue 29): the frame holds the mix and the map at once, and
    the neighbours, matrices, scores and clusters when first read; the layers' scores, which do not depend on s
    or γ, pass to the next frame of the same points and layer norm."""
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.5)), word="bank")
    assert frame.coords is not None and frame.coords.shape == (len(occ), 2)
    parts = ("neighbours", "_reference_found", "_layer0_found", "panels", "separation", "clusters")
    assert not any(name in vars(frame) for name in parts)
    eager = compute_frame(table, occ, Controls((0.0, 0.0, 0.5)), word="bank")
    assert [n[:3] for n in frame.neighbours] == [n[:3] for n in eager.neighbours] and frame.neighbours
    assert len(frame.panels) == table.num_layers + 1 and "panels" in vars(frame)
    first = frame.separation
    assert len(first) == table.num_layers + 1 and frame.layer_scores["layers"] == first[:-1]
    moved = compute_frame(table, occ, Controls((0.0, 0.0, 1.0)), frame, word="bank")
    assert moved.layer_scores is frame.layer_scores and moved.separation[:-1] == first[:-1]
    normed = compute_frame(table, occ, Controls((0.0, 0.0, 1.0), layer_norm=True), moved, word="bank")
    assert normed.layer_scores is not frame.layer_scores and "layers" not in normed.layer_scores

"""app/render/words.py: the page's words about a frame (the formula, notes, captions, the map's title)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np

from app.explore import activations, inputs, mixing
from app.explore.controls import Controls
from app.explore.frame import compute_frame
from app.explore.frame_neighbours import Reference
from app.render import words


def test_the_maps_title_escapes_the_models_name_for_plotly():
    title = words.map_title(Controls(model="<b>m</b>", word="bank", weights=(0, 0)), (0.5, 0.5), "PCA")
    assert "&lt;b&gt;m&lt;/b&gt;" in title and "s = 0.50 / 0.50" in title and title.endswith("PCA")
    plain = words.map_title_text(Controls(model="m", word="bank", layer_norm=True), (0.25, 0.75), "UMAP")
    assert plain == "“bank” · m · s = 0.25 / 0.75 · γ = 1, layer norm · UMAP"


def test_the_mix_formula_and_the_notes(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 2.0), gamma=0.5), word="bank")
    s = mixing.softmax([0.0, 0.0, 2.0])
    assert words.mix_formula(frame.s, 0.5) == (
        f"ELMo = γ · Σ_j s_j · h_j with s = softmax(w): ELMo = 0.5 · ({s[0]:.3f}·h_0 + {s[1]:.3f}·h_1 + {s[2]:.3f}·h_2)"
    )
    assert words.zero_note(frame) == "" and words.same_vector_note(frame) == ""
    layer0 = compute_frame(table, occ, Controls(same_word=False, weights=(5.0, -5.0, -5.0)), word="bank")
    assert words.same_vector_note(layer0).startswith(
        "All 6 occurrences have the same vector here: layer 0 is context-free"
    )
    zero = dataclasses.replace(frame, zero=np.array([False, True, False, False, False, True]))
    assert words.zero_note(zero).startswith(
        "2 of the 6 occurrences have an all-zero vector in this mix (numbered #2, #6)"
    )
    fitted = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 2.0), gamma=0.5, projection="auto"), word="bank"
    )
    assert "Mix + projection:" in words.map_caption(fitted) and words.map_caption(fitted).startswith(
        "PCA of the 6 occurrence vectors (cosine"
    )
    assert words.map_caption(frame).startswith("Fixed axes: each point is what a task model receives, [x_k; γ·ELMo_k]")
    with_context = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), context=True), word="bank"
    )
    assert f"and {len(with_context.context_rows)} other words" in words.map_caption(with_context)
    assert words.method_name("auto") == "the automatic projection" and words.method_name("tsne") == "t-SNE"
    reference = compute_frame(
        table,
        occ,
        Controls(same_word=False, weights=(0.0, 0.0, 0.0), k=3),
        word="bank",
        reference=Reference(table, total=10),
    )
    assert words.reference_note(reference) == "Among 6 occurrences in 6 reference sentences (of 10 that contain it)."
    one = compute_frame(
        table,
        occ[:1],
        Controls(same_word=False, weights=(0.0, 0.0, 0.0), k=3),
        word="bank",
        reference=Reference(activations.TokenTable(table.lines[:1], [table.acts[:, : int(table.offsets[1])]])),
    )
    assert words.reference_note(one) == "Among 1 occurrence in 1 reference sentence."
    empty = compute_frame(
        table,
        occ,
        Controls(same_word=False, weights=(0.0, 0.0, 0.0)),
        word="bank",
        reference=Reference(None, 0, "none"),
    )
    assert words.reference_note(empty) == "none"


def test_the_word_summary_says_when_capitals_split_layer_zero(embedder):
    parsed = inputs.parse_input("Spring came early .\nThe spring was dry .\nIn spring we sow .")
    occ = inputs.find_occurrences(parsed.lines, "spring")
    head, caption = words.word_summary("spring", occ)
    assert head == "**3 occurrences** of “spring” in 3 sentences; forms as written: spring, Spring"
    assert words.case_split(occ) and "“spring” and “Spring” get different layer-0 vectors" in caption
    table = activations.TokenTable(parsed.lines, embedder.embed_batch([list(ln.tokens) for ln in parsed.lines]))
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="spring")
    assert "Layer 0 sees spring and Spring as different words" in words.separation_caption(frame, occ)
    same = [o for o in occ if o.token == "spring"]
    assert words.word_summary("spring", same) == (
        "**2 occurrences** of “spring” in 2 sentences; form as written: spring",
        "",
    )
    assert not words.case_split(same)


def test_the_separation_caption_names_what_is_scored(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    caption = words.separation_caption(frame, occ)
    assert caption.startswith("1-NN accuracy: share of occurrences") and "Layer 0 sees" not in caption
    unlabelled = [dataclasses.replace(o, label=None) for o in occ]
    plain = compute_frame(table, unlabelled, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    assert words.separation_caption(plain, unlabelled).startswith("Silhouette: (b − a)/max(a, b)")


def test_clusters_as_the_senses_tab_lists_them(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), n_clusters=3), word="bank")
    head, per_k = words.cluster_summary(frame.clusters)
    assert head.startswith("**3 clusters** in the current mix (set by hand); silhouette ") and per_k == ""
    groups = words.cluster_groups(frame.clusters)
    assert [g.name for g in groups] == ["cluster 1", "cluster 2", "cluster 3"]
    assert sorted(i for g in groups for i in g.members) == list(range(6))
    assert [list(np.flatnonzero(frame.cluster_labels == g.cluster)) for g in groups] == [g.members for g in groups]
    auto = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    head, per_k = words.cluster_summary(auto.clusters)  # 6 occurrences: 2 clusters of 3 or none; here none
    assert head == (
        "**No clear clusters**: a split into 2 leaves a cluster of fewer than 3 occurrences. The "
        "occurrences form one group in this mix; pick a number of clusters to split them anyway."
    )
    assert per_k == "" and auto.cluster_labels is None and auto.clusters.k == 1
    clear = dataclasses.replace(
        auto.clusters, labels=np.array([0, 0, 0, 1, 1, 1]), k=2, silhouettes={2: 0.4, 3: 0.3}, too_small={4: 1}
    )
    head, per_k = words.cluster_summary(clear)
    assert head.startswith("**2 clusters** in the current mix (chosen by silhouette among 2, 3); silhouette 0.40")
    assert per_k == ("Silhouette per number of clusters: 2: 0.40, 3: 0.30; 4 left out (a cluster under 3 occurrences)")
    assert (
        compute_frame(table, occ, Controls(same_word=False, weights=(5.0, -5.0, -5.0)), word="bank").cluster_labels
        is None
    )


def test_tables_and_options_of_the_page(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), layer_norm=True), word="bank")
    assert words.query_option(occ, table.lines, 1) == "#2 · river · The river «bank» was muddy ."
    unlabelled = [dataclasses.replace(o, label=None) for o in occ]  # no empty slot between two separators
    assert words.query_option(unlabelled, table.lines, 1) == "#2 · The river «bank» was muddy ."
    rows = words.tokenization_rows(table.lines)
    assert rows["#"] == [1, 2, 3, 4, 5, 6] and rows["label"][0] == "river" and rows["tokens"][1].startswith("The ·")
    rows, columns = words.occurrence_lines(occ, table.lines, [1, 4], chars=70)
    assert [k.target for k in rows] == ["bank", "bank"] and rows[0].left == "The river"
    assert columns == [("#", "n", ["#2", "#5"]), ("label", "lab", ["river", "money"])]
    unlabelled = [dataclasses.replace(o, label=None) for o in occ]
    assert words.occurrence_lines(unlabelled, table.lines)[1] == [("#", "n", [f"#{i}" for i in range(1, 7)])]
    rows, columns = words.neighbour_lines(frame)
    assert len(rows) == len(frame.neighbours) == 10
    assert columns[0] == ("cos", "c", [f"{cos:.3f}" for _, _, cos, _ in frame.neighbours])
    assert columns[1][0] == "label" and columns[1][2] == [label for _, label, _, _ in frame.neighbours]
    assert words.embedding_note(0.25, 2, table) == (
        f"Last biLM run: 250 ms for 2 new of 6 sentences ({table.num_tokens} tokens; the rest came from the cache)."
    )
    assert (
        words.embedding_note(0.25, 6, table)
        == f"Last biLM run: 250 ms for 6 new of 6 sentences ({table.num_tokens} tokens)."
    )


def test_no_separation_note_names_each_panels_reason(bank):
    from app.explore.neighbours import Separation

    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    identical, none = (
        Separation(None, None, None, "All vectors are identical."),
        Separation(None, None, None, "No grouping found."),
    )
    names = frame.panel_names  # the frame's separation is computed on first read: stand-ins carry given scores
    mixed = SimpleNamespace(panel_names=names, separation=[identical, none, none, none])
    note = words.no_separation_note(mixed)
    # layer 0's reason is not the contextual layers' reason: each is said with its panel's name
    assert note.startswith(f"{frame.panel_names[0]}: All vectors are identical.")
    assert (
        f"{frame.panel_names[1]}: No grouping found." in note and f"{frame.panel_names[-1]}: No grouping found." in note
    )
    same = SimpleNamespace(panel_names=names, separation=[identical] * 4)
    assert words.no_separation_note(same) == "All vectors are identical."
    assert words.no_separation_note(SimpleNamespace(panel_names=names, separation=[])) == "No score for this input."
    assert len(frame.separation) == len(names) == 4  # the stand-ins have the real frame's shape

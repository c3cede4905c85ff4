"""The panels under the Corpus page's map: the sense groups (size, most telling context words, the sentences
nearest each group's centre) and a clicked occurrence's nearest contexts (the same word among all its occurrences;
any word across the corpus, with an atlas)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app.explore import corpus_view as cv
from app.explore.text import kwic, plural
from app.render.display import kwic_list
from app.render.safe import md
from app.serving.settings import for_visitor

CHARS = 34  # characters of context either side in the panels' concordance lines
NEAREST_K = 8
ATLAS_HOWTO = (
    "“Any word” needs an atlas: build one from a corpus (one sentence per line) with "
    "`python -m elmo_core atlas build CORPUS.txt --out DIR`, then start the explorer with "
    "`ELMO_EXPLORER_ATLAS=DIR` (or `make app ATLAS=DIR`) and pick it as the source."
)
SCORE_HELP = (
    "A group's telling words are the words within 5 tokens of the occurrence that most over-represent the group: "
    "the share of the group's occurrences with the word nearby minus the share of the other groups' "
    "occurrences with it (1: in every one of the group's contexts and in none of the others'). Stop words and "
    "the word itself are left out."
)


def groups_panel(word: cv.CorpusWord, x: np.ndarray, groups: cv.Groups, windows, exclude: frozenset[str]) -> None:
    """Each group: its size, its most telling context words and the three occurrences nearest its centre."""
    st.markdown(f"**Sense groups** in this mix · {plural(word.n, 'occurrence')}", help=SCORE_HELP)
    if groups.k <= 1:
        st.info(
            f"No clear groups in this mix ({md(groups.note or 'one group fits best')}). Move the weights, "
            "e.g. towards the top layer, and look again."
        )
    if groups.sampled < word.n:
        st.caption(
            f"The groups were found on {groups.sampled:,} evenly sampled occurrences; each other occurrence "
            "joined the group whose centre is nearest."
        )
    telling = cv.telling_words(windows, groups.labels, exclude)
    examples = cv.examples(x, groups.labels)
    for g in range(groups.k):
        size = int(np.sum(groups.labels == g))
        words = telling.get(g) or []
        shown = " · ".join(f"*{md(w)}* {score:.2f}" for w, score in words) or "none stands out"
        st.markdown(
            f"**{cv.group_name(g, groups.k)}** · {plural(size, 'occurrence')} ({size / max(word.n, 1):.0%}) · "
            + (f"telling words: {shown}" if groups.k > 1 else f"frequent context words: {shown}")
        )
        rows = [kwic(word.tokens_of(i), int(word.positions[i]), CHARS, CHARS) for i in examples.get(g, [])]
        st.html(kwic_list(rows))


def nearest_panel(
    word: cv.CorpusWord,
    x: np.ndarray,
    query: tuple[str, int] | None,
    query_vector: np.ndarray | None,
    query_layers: np.ndarray | None,
    query_tokens: tuple[tuple[str, ...], int] | None,
    s: np.ndarray,
    atlas,
) -> None:
    """The clicked occurrence and its nearest contexts: the same word (cosine in the mix among all the word's
    occurrences) and, with an atlas, any word (``Atlas.nearest``)."""
    st.markdown(
        "**Nearest contexts**",
        help="Click an occurrence on the map. The cosine is of the mix Σ s_j h_j (γ drops out of a cosine).",
    )
    if query is None or query_vector is None or query_tokens is None:
        st.info("Click a point on the map to see its nearest contexts: the same word, and any word.")
        if atlas is None:
            st.caption(ATLAS_HOWTO)
        return
    tokens, position = query_tokens
    what = "your sentence" if query[0] == "typed" else f"occurrence #{query[1] + 1}"
    st.markdown(f"Query: {what}")
    st.html(kwic_list([kwic(tokens, position, CHARS, CHARS)]))
    skip = query[1] if query[0] == "corpus" else None
    rows, cos = cv.nearest_rows(x, query_vector, NEAREST_K, skip)
    st.markdown(f"**The same word**, among all {word.n:,} occurrences")
    st.html(
        kwic_list(
            [kwic(word.tokens_of(i), int(word.positions[i]), CHARS, CHARS) for i in rows.tolist()],
            [("cos", "c", [f"{c:.3f}" for c in cos.tolist()])],
        )
    )
    st.markdown("**Any word**, across the corpus")
    if atlas is None:
        st.info(ATLAS_HOWTO)
        return
    if query_layers is None or query_layers.shape != (atlas.num_layers, atlas.dim):
        st.info("Your sentences were embedded with a model of another shape than the atlas's: no search.")
        return
    try:  # an atlas changed on disk since it was opened: say so, keep the page
        hits = atlas.nearest(query_layers, k=min(4 * NEAREST_K, atlas.num_occurrences), weights=s)
        found = [atlas.sentence(int(sent)) for sent in hits.sentences.tolist()]
    except ValueError as err:
        st.warning(md(for_visitor(str(err).replace(str(atlas.folder), f"“{atlas.folder.name}”"))))
        return
    lines, values, words = [], [], []
    for w, toks, pos, c in zip(hits.words, found, hits.positions.tolist(), hits.cosines.tolist()):
        if tuple(toks) == tuple(tokens):
            continue  # the query's own sentence: its other words share its context, and say little
        lines.append(kwic(toks, int(pos), CHARS, CHARS))
        values.append(f"{c:.3f}")
        words.append(w)
    st.html(kwic_list(lines[:NEAREST_K], [("cos", "c", values[:NEAREST_K])]))
    st.caption(
        f"Words found: {md(', '.join(dict.fromkeys(words[:NEAREST_K])))}. The query's own sentence is left out; "
        "approximate search (the atlas's index), cosines exact."
    )

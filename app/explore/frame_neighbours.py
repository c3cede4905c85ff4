"""The frame's neighbours columns: the query's nearest tokens in the sentences, the reference corpus, layer 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.explore import activations, inputs, neighbours
from app.explore.controls import Controls
from app.explore.text import Kwic, kwic

CONTEXT_CHARS = 60  # characters of context on each side of a neighbour's target (the table clips further)


@dataclass(frozen=True)
class Reference:
    """The reference corpus for one word: its token table (None when there is none), how many reference
    sentences contain the word in all, and a note for the user."""

    table: activations.TokenTable | None
    total: int = 0
    note: str = ""


def sentence_neighbours(table, mixed, rows, q_row, controls) -> list[tuple[str, str, float, Kwic]]:
    """The ``k`` tokens of the sentences nearest to the query's (row ``q_row`` of ``mixed``): only the word's other
    occurrences with ``same_word``, else every word-like token. Each as (token, its line's label, similarity, kwic)."""
    if controls.same_word:
        cand = np.array([r for r in rows if r != q_row], dtype=np.int64)
    else:
        cand = np.array(
            [r for r in range(table.num_tokens) if r != q_row and inputs.is_wordlike(table.token(r))], dtype=np.int64
        )
    found = neighbours.cosine_neighbours(mixed[q_row], mixed[cand], int(controls.k)) if len(cand) else []
    out = []
    for nb in found:
        r = int(cand[nb.index])
        li = int(table.line_of_row[r])
        out.append(
            (
                table.token(r),
                table.lines[li].label or "",
                round(nb.similarity, 3),
                kwic(table.lines[li].tokens, r - int(table.offsets[li]), CONTEXT_CHARS, CONTEXT_CHARS),
            )
        )
    return out


def reference_neighbours(
    reference: Reference | None, word: str, query_vector: np.ndarray, controls: Controls
) -> tuple[list[tuple[float, Kwic]] | None, int | None]:
    """The ``k`` occurrences of ``word`` in the reference sentences nearest to ``query_vector``, as (similarity, kwic),
    and how many occurrences there are; (None, None) without a reference table, (None, 0) when the word is not in it."""
    if reference is None or reference.table is None:
        return None, None
    ref = reference.table
    occ = inputs.find_occurrences(ref.lines, word, controls.inflections, controls.fold_case)
    if not occ:
        return None, 0
    ref_mixed = ref.mix(controls.weights, controls.gamma, controls.layer_norm)[ref.rows(occ)]
    found = neighbours.cosine_neighbours(query_vector, ref_mixed, int(controls.k))
    rows = [
        (
            round(nb.similarity, 3),
            kwic(ref.lines[occ[nb.index].line].tokens, occ[nb.index].position, CONTEXT_CHARS, CONTEXT_CHARS),
        )
        for nb in found
    ]
    return rows, len(occ)


def layer0_neighbours(
    table: activations.TokenTable, reference: Reference | None, q_row: int, k: int, types
) -> tuple[list[tuple[str, float]], str]:
    """The ``k`` word types whose layer-0 vectors are nearest to the query's, as (word, similarity), and a note on
    what was searched."""
    # the vocabulary's type vectors once they are there; until then (or without them) the word types of the
    # input and of the word's reference sentences, which is all the page has embedded
    if types is not None and types.ready:
        query = table.layers(False)[0][q_row]
        return types.neighbours(table.token(q_row), query, k), types.status()
    found = neighbours.layer0_type_neighbours(table, reference.table if reference else None, q_row, k)
    return found, types.status() if types is not None else "Searched among your sentences' words."

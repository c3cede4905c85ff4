"""Nearest neighbours by cosine and how well the mix separates labelled senses (leave-one-out 1-NN; no Streamlit
here)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.explore.activations import TokenTable
from app.explore.blas import one_blas_thread
from app.explore.clusters import discover
from app.explore.inputs import is_wordlike
from app.explore.text import plural
from elmo_core import chance_random_neighbour, nn_scores_from_similarity


# ---- similarity, neighbours, separation -----------------------------------------------------------------
@one_blas_thread()
def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """(n, n) cosine similarities of the rows of x (0 for zero vectors)."""
    from sklearn.metrics.pairwise import cosine_similarity

    return cosine_similarity(x).astype(np.float64)


def cosine_distances(x: np.ndarray, sims: np.ndarray | None = None) -> np.ndarray:
    """(n, n) float64 cosine distances 1 - cos, clipped to [0, 2], zero diagonal (as scikit-learn's
    ``cosine_distances``), from the vectors or from their ``cosine_matrix`` when given."""
    d = 1.0 - (cosine_matrix(x) if sims is None else sims)
    np.clip(d, 0.0, 2.0, out=d)
    np.fill_diagonal(d, 0.0)
    return d


@dataclass(frozen=True)
class Neighbour:
    index: int  # row in the candidate matrix
    similarity: float


def cosine_neighbours(
    query: np.ndarray, candidates: np.ndarray, k: int = 10, exclude: Sequence[int] = ()
) -> list[Neighbour]:
    """The k candidate rows most cosine-similar to ``query`` (D,), best first, ties in row order."""
    if len(candidates) == 0 or k <= 0:
        return []
    # scikit-learn's cosine_similarity without its input validation (a few ms on every slider move):
    # rows scaled to unit length (zero rows stay zero), then one matrix-vector product.
    dtype = np.result_type(candidates.dtype, query.dtype, np.float32)
    cand = np.asarray(candidates, dtype=dtype)
    q = np.asarray(query, dtype=dtype).reshape(-1)
    with one_blas_thread():
        norms = np.sqrt(np.einsum("ij,ij->i", cand, cand))
        q_norm = float(np.sqrt(q @ q))
        sims = (cand @ (q / q_norm if q_norm > 0 else q)) / np.where(norms > 0, norms, 1.0)
    order = np.argsort(-sims, kind="stable")
    skip = set(int(i) for i in exclude)
    out = []
    for i in order:
        if int(i) in skip:
            continue
        out.append(Neighbour(int(i), float(sims[i])))
        if len(out) == k:
            break
    return out


def unique_types(tokens: Sequence[str], vectors: np.ndarray) -> tuple[list[str], np.ndarray]:
    """One row per distinct word-like token spelling (first occurrence): for context-free layer-0 vectors,
    which are equal for equal spellings."""
    seen: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        if is_wordlike(tok) and tok not in seen:
            seen[tok] = i
    words = list(seen)
    rows = np.array(list(seen.values()), dtype=np.int64)
    return words, vectors[rows] if len(rows) else vectors[:0]


def layer0_type_neighbours(table: TokenTable, ref: TokenTable | None, row: int, k: int) -> list[tuple[str, float]]:
    """The k word types nearest to token ``row`` of ``table`` by layer-0 (context-free) cosine, among the
    types of ``table`` and of ``ref`` (the reference sentences, or None); the query's own spelling is left out.

    Returns: [(word, cosine similarity)], best first (the GloVe-like column of the paper's Table 4).
    """
    layer0 = table.layers(False)[0]
    tokens = [table.token(r) for r in range(table.num_tokens)]
    vectors = layer0
    if ref is not None:
        tokens += [ref.token(r) for r in range(ref.num_tokens)]
        vectors = np.concatenate([layer0, ref.layers(False)[0]])
    types, type_vecs = unique_types(tokens, vectors)
    exclude = [i for i, t in enumerate(types) if t == table.token(row)]
    return [(types[nb.index], nb.similarity) for nb in cosine_neighbours(layer0[row], type_vecs, k, exclude)]


@dataclass
class Separation:
    """How well the occurrences' vectors separate the senses (or group at all, without labels)."""

    silhouette: float | None  # mean cosine silhouette in [-1, 1]
    knn_accuracy: float | None  # leave-one-out 1-NN accuracy (labels only), ties split evenly
    chance: float | None  # 1-NN accuracy expected from a random neighbour
    note: str = ""


def knn_accuracy(x: np.ndarray, labels: Sequence[str]) -> float:
    """Leave-one-out 1-nearest-neighbour (cosine) accuracy; a tie between neighbours counts fractionally.

    The tie rule matters for layer 0, where every occurrence of one spelling has the same vector: the
    score then equals the share of same-label points among the tied ones, not a lucky tie-break.
    """
    return _knn_accuracy(cosine_matrix(x), labels)


def _knn_accuracy(sims: np.ndarray, labels: Sequence[str]) -> float:
    return float(np.mean(nn_scores_from_similarity(sims, labels)))


def zero_rows(x: np.ndarray) -> np.ndarray:
    """(n,) bool: rows of ``x`` (n, D) that are all zero (no direction, so no cosine similarity)."""
    x = np.asarray(x)
    return ~np.any(x != 0, axis=1) if x.ndim == 2 else np.zeros(len(x), bool)


@one_blas_thread()
def separation(x: np.ndarray, labels: Sequence[str | None]) -> Separation:
    """Silhouette (cosine) and, with sense labels, leave-one-out 1-NN accuracy.

    Without labels (fewer than 2 distinct ones), the silhouette is that of the best 2..6-cluster split found
    by average-linkage clustering (``app.explore.clusters.discover``, clusters of ``min_cluster_size`` or more; also
    when it is too low to count as clusters): how clearly the occurrences fall into groups at all.
    """
    from sklearn.metrics import silhouette_score

    zero = zero_rows(x)
    if zero.any():  # an all-zero vector has no direction: no cosine, so no score may use it
        keep = np.flatnonzero(~zero)
        found = separation(x[keep], [labels[i] for i in keep]) if len(keep) else Separation(None, None, None, "")
        left_out = f"{plural(int(zero.sum()), 'all-zero vector')} left out."
        return dataclasses.replace(found, note=" ".join(t for t in (found.note, left_out) if t))
    n = len(x)
    given = [i for i, lab in enumerate(labels) if lab]
    distinct = {labels[i] for i in given}
    if len(distinct) >= 2 and len(given) >= 3:
        xs, ls = x[given], [labels[i] for i in given]
        note = "" if len(given) == n else f"{n - len(given)} unlabelled occurrence(s) left out."
        chance = float(np.mean(chance_random_neighbour(ls)))
        sims = cosine_matrix(xs)  # one similarity matrix for both scores
        sil = (
            float(silhouette_score(cosine_distances(xs, sims), ls, metric="precomputed"))
            if len(distinct) < len(ls)
            else None
        )
        return Separation(sil, _knn_accuracy(sims, ls), chance, note)
    if n < 4:
        return Separation(None, None, None, "Too few occurrences for a score.")
    if float(np.ptp(x, axis=0).max()) == 0.0:
        return Separation(None, None, None, "All vectors are identical.")
    found = discover(x)  # the Senses tab's split: one answer to "how many groups" on the page
    if found is None or found.best is None:
        return Separation(None, None, None, "No grouping found.")
    weak = "" if found.clear else " (no clear clusters)"
    return Separation(
        found.silhouette, None, None, f"No sense labels: silhouette of the best split into {found.best} groups{weak}."
    )

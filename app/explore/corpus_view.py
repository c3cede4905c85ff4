"""Corpus mode's computations (the Corpus page, ``app/views/corpus.py``): one word's every occurrence in a corpus
(the bundled reference corpus embedded on demand, or an atlas), the points the map draws, the sense groups with
their most telling context words and example sentences, and the nearest occurrences of the word. No Streamlit here.

Dims: n occurrences of the word, L + 1 layers, D the model's dimension.

The telling words of a group (``telling_words``): for each context word c (case-folded, with a letter, not the
word itself, not a stop word) the share of the group's occurrences with c within ``WINDOW`` tokens either side,
minus the share of the other groups' occurrences with it:

    score(c, g) = df_g(c) / n_g - df_rest(c) / (n - n_g)

(a difference of document frequencies, the windows as documents). It is 1 for a word in every window of the group
and none of the others, 0 for a word as common in both (a stop word the list missed), and prefers a word that many
of the group's occurrences share to a rare one that only one has; a word needs ``MIN_SUPPORT`` windows in the group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.explore.blas import one_blas_thread
from app.explore.clusters import MAX_CLUSTERS, discover

WINDOW = 5  # tokens either side of an occurrence that count as its context
MIN_SUPPORT = 2  # a telling word is in at least this many of the group's windows (1 in a group of fewer than 4)
MAX_DRAWN = 1000  # points the map draws at most (evenly sampled, fixed seed); the groups and neighbours use all
MAX_CLUSTERED = 2000  # occurrences the groups are found on (a sample); the rest join the group of the nearest centre
SEED = 0
MAX_GROUPS = MAX_CLUSTERS  # the most groups a visitor may ask for


@dataclass(frozen=True)
class CorpusWord:
    """Every occurrence of ``word`` a source holds (or an even sample of them, ``total`` > n).

    sentences: the tokens of each sentence that holds an occurrence; occ_sentence: int64 (n,) each occurrence's
    sentence (an index into ``sentences``); positions: int64 (n,) its token there; layers: float32 (L + 1, n, D)
    its layer vectors; total: occurrences (or sentences, for a source that counts sentences) in the whole source;
    source: the source's name for the page ("the reference corpus", "atlas news")."""

    word: str
    sentences: tuple[tuple[str, ...], ...]
    occ_sentence: np.ndarray
    positions: np.ndarray
    layers: np.ndarray
    total: int
    source: str

    @property
    def n(self) -> int:
        return len(self.positions)

    def token(self, i: int) -> str:
        return self.sentences[int(self.occ_sentence[i])][int(self.positions[i])]

    def tokens_of(self, i: int) -> tuple[str, ...]:
        return self.sentences[int(self.occ_sentence[i])]


def occurrence_positions(sentences: Sequence[Sequence[str]], matches) -> tuple[np.ndarray, np.ndarray]:
    """(sentence index, position) int64 arrays of every token for which ``matches(token)`` is true, in reading
    order."""
    found = [(i, j) for i, toks in enumerate(sentences) for j, tok in enumerate(toks) if matches(tok)]
    arr = np.asarray(found, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0].copy(), arr[:, 1].copy()


def sample_rows(n: int, limit: int = MAX_DRAWN, seed: int = SEED) -> np.ndarray:
    """int64 ascending: all ``n`` rows when ``n`` <= ``limit``, else ``limit`` of them drawn uniformly without
    replacement with a fixed seed (the same rows on every run and server)."""
    if n <= limit:
        return np.arange(n, dtype=np.int64)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False)).astype(np.int64)


def sample_note(drawn: int, total: int) -> str:
    """What the map says when it draws a sample ("" when it draws every occurrence)."""
    if drawn >= total:
        return ""
    return f"{drawn:,} of {total:,} occurrences drawn, evenly sampled; the groups and neighbours use all"


@one_blas_thread()
def mix(layers: np.ndarray, s: Sequence[float]) -> np.ndarray:
    """float32 (n, D): Σ_j s_j h_j (γ scales every vector alike, so no cosine and no group depends on it)."""
    return np.tensordot(np.asarray(s, dtype=np.float32), layers, axes=1).astype(np.float32, copy=False)


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


@dataclass(frozen=True)
class Groups:
    """The sense groups of the occurrences in one mix: labels int64 (n,) 0..k-1 (k = 1: no clear groups);
    note: what the clustering said; sampled: how many occurrences the groups were found on (< n: the others
    joined the group whose centre is nearest)."""

    labels: np.ndarray
    k: int
    note: str
    sampled: int


@one_blas_thread()
def sense_groups(x: np.ndarray, k: int | None = None, limit: int = MAX_CLUSTERED, seed: int = SEED) -> Groups:
    """Groups of the rows of ``x`` (n, D) by cosine: ``k`` None, the explorer's automatic choice
    (``app.explore.clusters.discover``: agglomerative, k by silhouette, none when no split is clear); a number,
    k-means of the unit vectors into that many groups (balanced groups rather than outliers split off); found on an even sample of ``limit`` rows when there are more, the rest assigned to the nearest
    group centre (cosine)."""
    n = len(x)
    rows = sample_rows(n, limit, seed)
    unit = _unit(x.astype(np.float32))
    if k is not None and 2 <= k < len(rows):  # a chosen number: k-means on the unit vectors (cosine), balanced
        from sklearn.cluster import KMeans

        found_labels = KMeans(n_clusters=int(k), n_init=4, random_state=seed).fit(unit[rows]).labels_
        _, first = np.unique(found_labels, return_index=True)  # groups numbered in order of first occurrence
        renumber = np.empty(int(k), dtype=np.int64)
        renumber[found_labels[np.sort(first)]] = np.arange(len(first))
        found_labels, note = renumber[found_labels], f"{k} groups by k-means (cosine), as asked"
    else:
        found = discover(x[rows], None)
        if found is None or found.k <= 1:
            note = found.note if found is not None else "the occurrences' vectors all point the same way"
            return Groups(np.zeros(n, dtype=np.int64), 1, note, len(rows))
        found_labels, note = found.labels, found.note
    labels = np.full(n, -1, dtype=np.int64)
    labels[rows] = found_labels
    k_found = int(found_labels.max()) + 1
    centres = _unit(np.stack([unit[rows][found_labels == g].mean(axis=0) for g in range(k_found)]))
    rest = np.flatnonzero(labels < 0)
    if len(rest):
        labels[rest] = np.argmax(unit[rest] @ centres.T, axis=1)
    zero = np.linalg.norm(x, axis=1) == 0
    labels[zero] = 0
    return Groups(labels, k_found, note, len(rows))


def context_windows(word: CorpusWord, window: int = WINDOW) -> list[frozenset[str]]:
    """Per occurrence, the case-folded tokens with a letter within ``window`` tokens either side (not itself)."""
    out = []
    for i in range(word.n):
        toks, p = word.tokens_of(i), int(word.positions[i])
        near = toks[max(0, p - window) : p] + toks[p + 1 : p + 1 + window]
        out.append(frozenset(t.casefold() for t in near if any(ch.isalpha() for ch in t)))
    return out


def telling_words(
    windows: Sequence[frozenset[str]],
    labels: np.ndarray,
    exclude: frozenset[str] = frozenset(),
    top: int = 6,
    min_support: int = MIN_SUPPORT,
) -> dict[int, list[tuple[str, float]]]:
    """{group: [(context word, score), ...] best first} (the module docstring's score), at most ``top`` each,
    only positive scores; ``exclude``: words never shown (the word itself, its forms, stop words)."""
    labels = np.asarray(labels)
    n = len(labels)
    out: dict[int, list[tuple[str, float]]] = {}
    groups = sorted(set(labels.tolist()))
    totals: dict[str, int] = {}
    per_group: dict[int, dict[str, int]] = {g: {} for g in groups}
    for w, g in zip(windows, labels.tolist()):
        for c in w:
            if c in exclude:
                continue
            totals[c] = totals.get(c, 0) + 1
            per_group[g][c] = per_group[g].get(c, 0) + 1
    for g in groups:
        n_g = int(np.sum(labels == g))
        n_rest = n - n_g
        need = min_support if n_g >= 4 else 1
        scored = []
        for c, df in per_group[g].items():
            if df < need:
                continue
            rest = (totals[c] - df) / n_rest if n_rest else 0.0
            score = df / n_g - rest
            if score > 0:
                scored.append((c, score))
        scored.sort(key=lambda cs: (-cs[1], cs[0]))
        out[g] = scored[:top]
    return out


@one_blas_thread()
def examples(x: np.ndarray, labels: np.ndarray, per_group: int = 3) -> dict[int, list[int]]:
    """{group: the rows nearest its centre (the mean of its unit vectors), nearest first}: its typical uses."""
    unit = _unit(np.asarray(x, dtype=np.float32))
    out = {}
    for g in sorted(set(np.asarray(labels).tolist())):
        members = np.flatnonzero(labels == g)
        centre = unit[members].mean(axis=0)
        order = np.argsort(-(unit[members] @ centre), kind="stable")
        out[g] = members[order[:per_group]].tolist()
    return out


@one_blas_thread()
def nearest_rows(
    x: np.ndarray, query: np.ndarray, k: int = 8, skip: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` rows of ``x`` (n, D) nearest to ``query`` (D,) by cosine, best first (ties: lower row), without
    row ``skip`` (the query itself); (rows int64, cosines float32)."""
    q = np.asarray(query, dtype=np.float32)
    qn = float(np.linalg.norm(q))
    cos = _unit(np.asarray(x, dtype=np.float32)) @ (q / qn if qn > 0 else q)
    skipped = skip is not None and 0 <= skip < len(cos)
    if skipped:
        cos[skip] = -np.inf
    order = np.lexsort((np.arange(len(cos)), -cos))[: min(k, len(cos) - int(skipped))]
    return order.astype(np.int64), cos[order].astype(np.float32)


def group_name(g: int, k: int) -> str:
    """The legend's name of group ``g`` (0-based) of ``k``."""
    return f"group {g + 1}" if k > 1 else "occurrences (no clear groups)"


TYPED = "your sentences"  # the legend's name of the typed sentences' occurrences

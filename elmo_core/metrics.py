"""The probe metrics, one definition each: leave-one-out 1-nearest-neighbour with fractional ties, its
chance level, the most frequent sense, and the silhouette by sense. Used by the sense probes and the
explorer's separation scores alike.

Dims: n items, D vector size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

TIE_TOLERANCE = 1e-6  # cosine similarities this close count as a tie (identical layer-0 vectors)


def unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero); same shape and dtype as ``x``."""
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def nn_scores_from_similarity(sims: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Leave-one-out 1-NN from a similarity matrix.

    Args: sims float (n, n), larger = nearer (not modified); labels n labels.
    Returns: float64 (n,): for each item the fraction of its nearest other items (ties within
        TIE_TOLERANCE, so identical vectors give the expected score of a random pick) that share its label.
    """
    return nn_scores_from_same(sims, same_label(labels))


def same_label(labels: Sequence[str]) -> np.ndarray:
    """bool (n, n): whether items i and j carry the same label."""
    lab = np.asarray(labels, dtype=object)
    return lab[:, None] == lab[None, :]


def nn_scores_from_same(sims: np.ndarray, same: np.ndarray) -> np.ndarray:
    """``nn_scores_from_similarity`` with the labels compared beforehand (``same_label``), for callers that score
    many similarity matrices of the same items (the explorer's fit of s scores every weighting of a grid).

    Args: sims float (n, n), larger = nearer (not modified); same bool (n, n).
    Returns: float64 (n,), as ``nn_scores_from_similarity``.
    """
    sims = np.array(sims, copy=True)
    np.fill_diagonal(sims, -np.inf)
    tied = sims >= sims.max(axis=1, keepdims=True) - TIE_TOLERANCE
    return (tied & same).sum(axis=1) / tied.sum(axis=1)


def loo_nn_scores(vectors: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Leave-one-out 1-NN by cosine: ``nn_scores_from_similarity`` of float64 unit vectors (n, D)."""
    x = unit(np.asarray(vectors, dtype=np.float64))
    return nn_scores_from_similarity(x @ x.T, labels)


def chance_random_neighbour(labels: Sequence[str]) -> np.ndarray:
    """float64 (n,): (c_s - 1) / (n - 1), what leave-one-out 1-NN scores with random vectors on average."""
    lab = np.asarray(labels, dtype=object)
    senses, counts = np.unique(lab.astype(str), return_counts=True)
    count = dict(zip(senses, counts))
    own = np.array([count[str(s)] for s in lab], dtype=np.float64)
    return (own - 1) / (len(lab) - 1)


def loo_baseline_scores(labels: Sequence[str]) -> dict[str, np.ndarray]:
    """Per-item scores of the model-free baselines within one group (leave-one-out).

    Returns {"mfs": majority sense of the other items (ties: expected score of a random pick),
    "chance_random_neighbour": see ``chance_random_neighbour``, "chance_uniform": 1 / number of senses};
    each float64 (n,).
    """
    lab = np.asarray(labels)
    n = len(lab)
    senses, counts = np.unique(lab, return_counts=True)
    count = dict(zip(senses, counts))
    mfs = np.zeros(n)
    for i, s in enumerate(lab):
        others = {t: c - (t == s) for t, c in count.items()}
        top = max(others.values())
        winners = [t for t, c in others.items() if c == top]
        mfs[i] = (s in winners) / len(winners)
    return {
        "mfs": mfs,
        "chance_random_neighbour": chance_random_neighbour(labels),
        "chance_uniform": np.full(n, 1 / len(senses)),
    }


def silhouette_by_sense(vectors: np.ndarray, labels: Sequence[str]) -> float:
    """Silhouette of the sense labels within one group, cosine distance (``sklearn.metrics.silhouette_score``).

    Args: vectors float (n, D); labels n sense labels.
    Returns: the mean silhouette in [-1, 1]; NaN when it is undefined (fewer than 2 senses, or as many senses
        as items). Identical vectors give 0 (sklearn's 0/0 convention); zero vectors are at distance 1 of all.
    """
    from sklearn.metrics import silhouette_score

    lab = np.asarray(labels)
    n_senses = len(np.unique(lab))
    if n_senses < 2 or n_senses >= len(lab):
        return float("nan")
    return float(silhouette_score(np.asarray(vectors, dtype=np.float64), lab, metric="cosine"))


def mean_over_groups(values: Sequence[float]) -> float | None:
    """The mean of per-group values, ignoring NaN (undefined groups); None when no group has a value."""
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if len(arr) else None

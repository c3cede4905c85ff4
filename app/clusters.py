"""Sense discovery without labels: group a word's occurrences into clusters and compare them with given labels.

The occurrences' vectors are clustered by average-linkage agglomerative clustering on cosine distances
(scikit-learn); the number of clusters is the one with the best cosine silhouette over 2..k_max, unless the
user fixes it. The explorer's "separation without labels" score is the silhouette of this same split, so the
Layers tab and the Senses tab never disagree about how many groups there are. No Streamlit here, and no import
of other app modules (``app.explore`` builds on this one).

Dims: n occurrences, D = 2P.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_CLUSTERS = 6  # the automatic choice tries 2..MAX_CLUSTERS clusters (fewer when there are few occurrences)
NO_CLUSTER = -1  # the cluster of an all-zero vector (no direction, so no cosine distance)


@dataclass(frozen=True)
class SenseClusters:
    """A split of n occurrences into k clusters.

    labels: int64 (n,), cluster numbers 0..k-1 in order of first occurrence (#1's cluster is 0), ``NO_CLUSTER``
    for all-zero vectors; silhouettes: {k: mean cosine silhouette} for every k tried; chosen_by: "silhouette" or
    "manual"; note: for the user.
    """

    labels: np.ndarray
    k: int
    silhouettes: dict[int, float]
    chosen_by: str
    note: str = ""

    @property
    def silhouette(self) -> float:
        """The silhouette of the chosen split."""
        return self.silhouettes[self.k]

    def members(self, cluster: int) -> list[int]:
        """Occurrence indices (0-based) in ``cluster``, in reading order."""
        return np.flatnonzero(self.labels == cluster).tolist()


@dataclass(frozen=True)
class Agreement:
    """How clusters match given sense labels, over the labelled occurrences.

    ari: adjusted Rand index (1 = the same partition, about 0 = no better than chance, can be negative);
    senses: the label names (rows); clusters: cluster numbers (columns, 0-based); counts: int64
    (len(senses), len(clusters)) contingency table; n: labelled occurrences counted.
    """

    ari: float
    senses: list[str]
    clusters: list[int]
    counts: np.ndarray
    n: int


def cosine_distances(x: np.ndarray) -> np.ndarray:
    """(n, n) float64 cosine distances 1 - cos, clipped to [0, 2], zero diagonal."""
    from sklearn.metrics.pairwise import cosine_distances as sk_cosine
    d = sk_cosine(np.asarray(x, dtype=np.float64))
    np.clip(d, 0.0, 2.0, out=d)
    np.fill_diagonal(d, 0.0)
    return d


def _renumber(found: np.ndarray) -> np.ndarray:
    """Cluster ids in order of first appearance, so colours stay put when nothing but the ids change."""
    order = {c: i for i, c in enumerate(dict.fromkeys(found.tolist()))}
    return np.array([order[c] for c in found.tolist()], dtype=np.int64)


def k_range(n: int, k_max: int = MAX_CLUSTERS) -> range:
    """The numbers of clusters a silhouette exists for with n points: 2..min(k_max, n - 1)."""
    return range(2, max(2, min(k_max, n - 1)) + 1) if n >= 3 else range(0)


def discover(x: np.ndarray, k: int | None = None, k_max: int = MAX_CLUSTERS,
             distances: np.ndarray | None = None) -> SenseClusters | None:
    """Cluster the rows of ``x`` (n, D) by cosine distance.

    Args:
        k: the number of clusters (manual override), clipped to the possible range; None: the k in 2..k_max with
            the best silhouette (the smaller k on a tie).
        distances: the (n, n) cosine distances of ``x`` when the caller already has them.
    Returns:
        The clusters, or None when there is nothing to split: fewer than 3 vectors with a direction, or all of
        them pointing the same way (e.g. layer 0 alone for one spelling).
    """
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics import silhouette_score
    x = np.asarray(x)
    n = len(x)
    keep = np.flatnonzero(np.any(x != 0, axis=1)) if n else np.zeros(0, dtype=np.int64)
    if len(keep) < 3:
        return None
    if distances is not None and len(keep) == n:
        dist = np.asarray(distances, dtype=np.float64)
    else:
        dist = cosine_distances(x[keep])
    if float(dist.max()) < 1e-9:
        return None
    ks = list(k_range(len(keep), k_max))
    chosen_by = "silhouette"
    notes = []
    if k is not None:
        clipped = int(min(max(k, ks[0]), ks[-1]))
        if clipped != k:
            allowed = f"only {ks[0]}" if ks[0] == ks[-1] else f"{ks[0]} to {ks[-1]}"
            notes.append(f"{k} clusters were asked for; {len(keep)} occurrences allow {allowed}, so {clipped}.")
        ks, chosen_by = [clipped], "manual"
    silhouettes: dict[int, float] = {}
    splits: dict[int, np.ndarray] = {}
    for kk in ks:
        found = AgglomerativeClustering(n_clusters=kk, metric="precomputed", linkage="average").fit_predict(dist)
        if len(set(found.tolist())) < 2:
            continue
        silhouettes[kk] = float(silhouette_score(dist, found, metric="precomputed"))
        splits[kk] = found
    if not silhouettes:
        return None
    best = max(silhouettes, key=lambda kk: (silhouettes[kk], -kk))
    labels = np.full(n, NO_CLUSTER, dtype=np.int64)
    labels[keep] = _renumber(splits[best])
    if len(keep) < n:
        notes.append(f"{n - len(keep)} all-zero vector(s) left out.")
    return SenseClusters(labels, best, silhouettes, chosen_by, " ".join(notes))


def agreement(clusters: SenseClusters, labels: Sequence[str | None]) -> Agreement | None:
    """The clusters against given sense labels, over occurrences that have a label and a cluster.

    Returns: None when fewer than 2 such occurrences or fewer than 2 distinct labels.
    Raises: ValueError when ``labels`` does not have one entry per occurrence.
    """
    from sklearn.metrics import adjusted_rand_score
    from sklearn.metrics.cluster import contingency_matrix
    if len(labels) != len(clusters.labels):
        raise ValueError(f"{len(labels)} labels for {len(clusters.labels)} occurrences")
    use = [i for i, lab in enumerate(labels) if lab and clusters.labels[i] != NO_CLUSTER]
    senses_of = [labels[i] for i in use]
    if len(use) < 2 or len(set(senses_of)) < 2:
        return None
    found = clusters.labels[use]
    senses = sorted(set(senses_of))
    cluster_ids = sorted(set(found.tolist()))
    # contingency_matrix orders rows and columns by sorted class value: the same order as senses / cluster_ids
    counts = contingency_matrix(senses_of, found).astype(np.int64)
    return Agreement(float(adjusted_rand_score(senses_of, found)), senses, cluster_ids, counts, len(use))

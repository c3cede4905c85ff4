"""Sense discovery without labels: group a word's occurrences into clusters and compare them with given labels.

The occurrences' vectors are clustered by average-linkage agglomerative clustering on cosine distances
(scikit-learn); the number of clusters is the one with the best cosine silhouette over 2..k_max, unless the
user fixes it. The automatic choice only counts splits whose every cluster has at least ``min_cluster_size(n)``
occurrences (average linkage likes to cut off one or two outliers, which lifts the silhouette without finding
a sense), and it answers "no clear clusters" (k = 1, one group) when even the best such split has a silhouette
below ``CLEAR_SILHOUETTE``. The explorer's "separation without labels" score is the silhouette of the best
such split, so the Layers tab and the Senses tab never disagree about how many groups there are. No Streamlit
here, and no import of other app modules (``app.explore.neighbours`` builds on this one).

Dims: n occurrences, D = 2P.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_CLUSTERS = 6  # the automatic choice tries 2..MAX_CLUSTERS clusters (fewer when there are few occurrences)
NO_CLUSTER = -1  # the cluster of an all-zero vector (no direction, so no cosine distance)
MIN_CLUSTER = 3  # the automatic choice never makes a cluster of fewer occurrences than this ...
MIN_CLUSTER_SHARE = 0.1  # ... nor of fewer than this share of them (a sense a tenth of the occurrences use counts)
# Below this silhouette the best split is no clear structure: Kaufman & Rousseeuw's rule of thumb ("Finding
# Groups in Data", 1990: 0.25 or less, no substantial structure). On the default model's 34-word sense probe and
# the six example sets (40 words, equal weights) even the true senses reach 0.05-0.14.
CLEAR_SILHOUETTE = 0.25


def min_cluster_size(n: int) -> int:
    """The smallest cluster the automatic choice accepts among ``n`` occurrences: max(3, ceil(n / 10))."""
    return max(MIN_CLUSTER, math.ceil(MIN_CLUSTER_SHARE * n - 1e-9))


@dataclass(frozen=True)
class SenseClusters:
    """A split of n occurrences into k clusters, or the answer "no clear clusters" (k = 1).

    labels: int64 (n,), cluster numbers 0..k-1 in order of first occurrence (#1's cluster is 0), ``NO_CLUSTER``
    for all-zero vectors (k = 1: all 0); silhouettes: {k: mean cosine silhouette} for every k tried whose every
    cluster is big enough; chosen_by: "silhouette" or "manual"; note: for the user; min_size: the smallest
    cluster the automatic choice accepted; too_small: {k: its smallest cluster} for the k left out for a
    cluster under ``min_size``.
    """

    labels: np.ndarray
    k: int
    silhouettes: dict[int, float]
    chosen_by: str
    note: str = ""
    min_size: int = 1
    too_small: dict[int, int] = dataclasses.field(default_factory=dict)

    @property
    def clear(self) -> bool:
        """Whether there are clusters: False for "no clear clusters" (one group)."""
        return self.k >= 2

    @property
    def best(self) -> int | None:
        """The k of the best split tried (also when its silhouette is too low to count), or None."""
        return max(self.silhouettes, key=lambda kk: (self.silhouettes[kk], -kk)) if self.silhouettes else None

    @property
    def silhouette(self) -> float | None:
        """The silhouette of the chosen split; with no clear clusters, of the best split tried (None: none)."""
        return (
            self.silhouettes[self.k]
            if self.k in self.silhouettes
            else (self.silhouettes[self.best] if self.best is not None else None)
        )

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


def discover(
    x: np.ndarray, k: int | None = None, k_max: int = MAX_CLUSTERS, distances: np.ndarray | None = None
) -> SenseClusters | None:
    """Cluster the rows of ``x`` (n, D) by cosine distance.

    Args:
        k: the number of clusters (manual override), clipped to the possible range; None: the k in 2..k_max with
            the best silhouette (the smaller k on a tie) among the splits whose clusters all hold at least
            ``min_cluster_size`` occurrences; k = 1 ("no clear clusters") when there is no such split or its
            silhouette is below ``CLEAR_SILHOUETTE``.
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
    min_size = min_cluster_size(len(keep))
    if k is not None:
        clipped = int(min(max(k, ks[0]), ks[-1]))
        if clipped != k:
            allowed = f"only {ks[0]}" if ks[0] == ks[-1] else f"{ks[0]} to {ks[-1]}"
            notes.append(f"{k} clusters were asked for; {len(keep)} occurrences allow {allowed}, so {clipped}.")
        ks, chosen_by, min_size = [clipped], "manual", 1
    else:
        ks = [kk for kk in ks if kk * min_size <= len(keep)]  # more clusters cannot all be big enough
    silhouettes: dict[int, float] = {}
    splits: dict[int, np.ndarray] = {}
    too_small: dict[int, int] = {}
    for kk in ks:
        found = AgglomerativeClustering(n_clusters=kk, metric="precomputed", linkage="average").fit_predict(dist)
        sizes = np.bincount(found)
        if len(sizes) < 2:
            continue
        if int(sizes.min()) < min_size:
            too_small[kk] = int(sizes.min())
            continue
        silhouettes[kk] = float(silhouette_score(dist, found, metric="precomputed"))
        splits[kk] = found
    if not silhouettes and chosen_by == "manual":
        return None
    best = max(silhouettes, key=lambda kk: (silhouettes[kk], -kk)) if silhouettes else None
    labels = np.full(n, NO_CLUSTER, dtype=np.int64)
    if chosen_by == "silhouette" and (best is None or silhouettes[best] < CLEAR_SILHOUETTE):
        labels[keep] = 0
        chosen = 1
    else:
        labels[keep] = _renumber(splits[best])
        chosen = best
    if len(keep) < n:
        notes.append(f"{n - len(keep):,} all-zero {'vector' if n - len(keep) == 1 else 'vectors'} left out.")
    return SenseClusters(labels, chosen, silhouettes, chosen_by, " ".join(notes), min_size, too_small)


def no_clear_clusters_note(found: SenseClusters) -> str:
    """Why the automatic choice found no clusters (plain text; "" when it found some)."""
    if found.clear:
        return ""
    parts = []
    if found.best is not None:
        parts.append(
            f"the best split, into {found.best}, has a silhouette of {found.silhouettes[found.best]:.2f}, "
            f"below {CLEAR_SILHOUETTE:.2f} (no clear structure)"
        )
    if found.too_small:
        ks = sorted(found.too_small)
        named = ", ".join(str(kk) for kk in ks[:-1]) + (" or " if len(ks) > 1 else "") + str(ks[-1])
        parts.append(f"a split into {named} leaves a cluster of fewer than {found.min_size} occurrences")
    if not parts:
        n = int(np.sum(found.labels != NO_CLUSTER))
        parts.append(f"{n} occurrences are too few for two clusters of at least {found.min_size}")
    return (
        "No clear clusters: " + "; ".join(parts) + ". The occurrences form one group in this mix; pick a "
        "number of clusters to split them anyway."
    )


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

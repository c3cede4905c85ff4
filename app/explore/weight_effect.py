"""Why moving a layer weight can change the map little: each layer's length and arrangement, and one line on it.

``layer_effect`` measures, for the occurrences on the page, each layer's mean vector length, how alike the layers
arrange the occurrences (the correlation of their pairwise cosine similarities), and how alike the equal-weights
mix and each layer alone arrange them; ``weight_note`` turns that into one line. The mix adds the raw layers (no
scaling), so a layer whose vectors are several times longer than the others' makes up most of the mix already at
equal weights. With the default model that is layer 2: on the six example sets its mean length is 77-88 against
25-34 (layer 0) and 14-16 (layer 1), so "top layer only" draws nearly the map of equal weights (on "bank" the two
PCA maps differ by 1% of the map's spread, layer 1 alone by half of it). ``scripts/senses_and_fit.py`` prints the
note for the example sets.

No Streamlit here. Dims: L + 1 layers, n occurrences, D = 2P.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALIKE = 0.98  # the equal-weights mix and one layer alone arrange the occurrences this alike: "mostly that layer"
SIMILAR = 0.95  # two layers arrange the occurrences this alike: shifting weight between them changes little
LONGER = 2.0  # a layer this many times longer than every other layer with context "outweighs" them


@dataclass(frozen=True)
class LayerEffect:
    """What decides how much the layer weights move the map, for one set of occurrences.

    lengths: mean vector length per layer (L + 1,); varies: per layer, whether its vectors differ between the
    occurrences at all (layer 0 of one spelling does not); similarity: float64 (L + 1, L + 1), the correlation
    of two layers' pairwise cosine similarities (1 on the diagonal, nan where a layer does not vary); alone:
    per layer, the correlation of the equal-weights mix's pairwise cosines with that layer's alone (nan: it
    does not vary).
    """

    lengths: tuple[float, ...]
    varies: tuple[bool, ...]
    similarity: np.ndarray
    alone: tuple[float, ...]


def _pairwise_cosines(x: np.ndarray) -> np.ndarray:
    """The upper triangle (without the diagonal) of the rows' cosine similarities, float64."""
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1)
    u = x / np.where(norms > 0, norms, 1.0)[:, None]
    return (u @ u.T)[np.triu_indices(len(x), 1)]


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    if a.std() < 1e-9 or b.std() < 1e-9:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def layer_effect(layers: np.ndarray) -> LayerEffect | None:
    """The ``LayerEffect`` of the occurrences' layers, float (L + 1, n, D); None for fewer than 3 occurrences
    (no pairs to compare). Raises: ValueError when ``layers`` is not 3-D."""
    layers = np.asarray(layers)
    if layers.ndim != 3:
        raise ValueError(f"layers must be (L + 1, n, D), got shape {layers.shape}")
    num_layers, n = layers.shape[:2]
    if n < 3:
        return None
    lengths = tuple(float(np.linalg.norm(layers[j].astype(np.float64), axis=1).mean()) for j in range(num_layers))
    cos = [_pairwise_cosines(layers[j]) for j in range(num_layers)]
    varies = tuple(bool(c.std() >= 1e-9) for c in cos)
    similarity = np.array(
        [[_correlation(cos[j], cos[k]) if j != k else 1.0 for k in range(num_layers)] for j in range(num_layers)]
    )
    equal = _pairwise_cosines(layers.astype(np.float64).mean(axis=0))
    alone = tuple(_correlation(equal, cos[j]) for j in range(num_layers))
    return LayerEffect(lengths, varies, similarity, alone)


def weight_note(effect: LayerEffect | None, layer_norm: bool = False) -> str:
    """One line on why moving a weight changes the map little here, or "" when nothing needs saying.

    In this order: one layer's arrangement already is the equal-weights mix's (``alone`` >= ``ALIKE``), because
    its vectors are ``LONGER`` times as long as the others' or because the layers are alike; else the two most
    alike layers when they arrange the occurrences alike (>= ``SIMILAR``).
    """
    if effect is None:
        return ""
    n = len(effect.lengths)
    alone = [(a, j) for j, a in enumerate(effect.alone) if not math.isnan(a)]
    if alone:
        a, j = max(alone)
        others = [k for k in range(n) if k != j]
        if a >= ALIKE and others:
            longest_other = max(effect.lengths[k] for k in others)
            if effect.lengths[j] >= LONGER * longest_other and not layer_norm:
                ratio = effect.lengths[j] / longest_other
                lengths = " and ".join(f"{effect.lengths[k]:.0f}" for k in others)
                return (
                    f"Layer {j}'s vectors are {ratio:.1f}× as long as the others' here (mean length "
                    f"{effect.lengths[j]:.0f} vs {lengths}), so even equal weights mostly mean layer {j} (same "
                    f"arrangement: {a:.2f}) and raising w_{j} moves the map little. Layer norm evens the lengths."
                )
            alike = [(effect.similarity[j, k], k) for k in others if not math.isnan(effect.similarity[j, k])]
            if alike:
                sim, k = max(alike)
                if sim >= SIMILAR:
                    lo, hi = sorted((j, k))
                    return (
                        f"Layers {lo} and {hi} are very similar here ({sim:.2f}), so shifting weight between "
                        "them moves the map little."
                    )
    pairs = [
        (effect.similarity[j, k], j, k)
        for j in range(n)
        for k in range(j + 1, n)
        if not math.isnan(effect.similarity[j, k])
    ]
    if pairs:
        sim, j, k = max(pairs)
        if sim >= SIMILAR:
            return (
                f"Layers {j} and {k} are very similar here ({sim:.2f}), so shifting weight between them moves "
                "the map little."
            )
    return ""

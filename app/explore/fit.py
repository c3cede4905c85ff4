"""The scalar mix's weights s fitted to the user's sense labels: the fit, its scores and what the page says of it.

The ELMo paper learns s (and γ) for each task together with the task's model (Peters et al. 2018,
section 3.2). Here the "task" is the user's labelled sentences and the "model" is the explorer's leave-one-out
nearest neighbour: ``fit_mix`` tries every s on a grid over the simplex (step ``GRID_STEP``, plus equal weights)
and keeps the one whose mix gives the highest leave-one-out 1-NN accuracy by cosine over the labelled
occurrences, each occurrence taking the sense of its nearest other occurrence, so no occurrence is scored
against itself and s cannot simply memorise the labels. Ties (frequent with a dozen sentences: accuracy moves
in steps of 1/n) go to the s nearest to equal weights, then to the first in grid order: the same input always
gives the same s. γ scales every vector alike, so it changes no cosine and is not fitted. The score is the
explorer's own "1-NN accuracy" of the mix (``app.explore.neighbours.knn_accuracy``; ties between neighbours count
fractionally), so the Similarity tab shows the same number once the sliders hold the fitted s. Being the best of
many tries on the same labels, that number flatters the fit; the nested score (``MixFit.nested``: s chosen
without each occurrence in turn, then tested on it) does not. On the default model's 34-word sense probe
(about 22 sentences a word) the fitted s scores 79.9% on average, the nested score 74.7%, equal weights 73.4%
and layer 2 alone 77.4%: from a couple of dozen sentences the fitted s is a noisy estimate.
The page sets s only when the labels support it (``unsupported``); else it says why.
``scripts/senses_and_fit.py`` prints the fit (and the Senses tab's clusters) for the example sets.

Why moving a weight can change the map little is ``app.explore.weight_effect``'s.

No Streamlit here. Dims: L + 1 layers, n occurrences, D = 2P.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from elmo_core import chance_random_neighbour, nn_scores_from_same, same_label

GRID_STEP = 0.1  # s_j on 0, 0.1, ..., 1 (66 weightings for three layers, 286 for four)
MAX_GRID = 5000  # a model with many layers gets a coarser grid rather than a slow button
MIN_LABELLED = 3  # leave-one-out 1-NN needs at least this many labelled occurrences ...
MIN_SENSES = 2  # ... of at least this many senses
NESTED_MAX = 60  # the honest (nested) score is computed up to this many labelled occurrences (n fits of the grid)
MIN_REPEATED = 2  # a fit is set only when at least this many labels each mark two occurrences or more ...
CHANCE_MARGIN = 0.1  # ... and its nested score (else its score) beats chance by this much


@dataclass(frozen=True)
class MixFit:
    """The fitted weights and their score.

    s: float64 (L + 1,), sums to 1, the best weighting on the grid; accuracy: its leave-one-out 1-NN accuracy in
    [0, 1]; equal: the accuracy with equal weights; layers: the accuracy of each layer alone (L + 1,); chance: the
    expected accuracy of a random neighbour; n: labelled occurrences scored; tried: weightings tried; tied: how
    many of them reach ``accuracy`` (many: the labels do not pin s down); step: the grid's step; nested: what
    choosing s is worth on a sentence it was not chosen on (each occurrence in turn is set aside, s is fitted on
    the others and the occurrence takes the label of its nearest other one in that mix), None above
    ``NESTED_MAX`` labelled occurrences. ``accuracy`` is the best of many tries on the same labels, so it flatters
    the fitted s; ``nested`` does not.
    """

    s: np.ndarray
    accuracy: float
    equal: float
    layers: tuple[float, ...]
    chance: float
    n: int
    tried: int
    tied: int
    step: float
    nested: float | None = None


def simplex_grid(num_layers: int, step: float = GRID_STEP) -> np.ndarray:
    """float64 (G, num_layers): every s with entries on multiples of ``step`` that sums to 1, in lexicographic
    order of the integer counts (largest s_0 last), followed by equal weights when they are not on the grid.

    Raises: ValueError for fewer than 1 layer or a step that does not divide 1.
    """
    if num_layers < 1:
        raise ValueError(f"a mix needs at least one layer, got {num_layers}")
    parts = round(1 / step)
    if parts < 1 or abs(parts * step - 1) > 1e-9:
        raise ValueError(f"the grid step must divide 1 (0.1, 0.25, ...), got {step}")
    rows = []
    # compositions of `parts` into num_layers non-negative integers (stars and bars)
    for bars in combinations(range(parts + num_layers - 1), num_layers - 1):
        edges = (-1, *bars, parts + num_layers - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(num_layers)])
    grid = np.array(rows, dtype=np.float64) / parts
    equal = np.full((1, num_layers), 1.0 / num_layers)
    if not np.any(np.all(np.abs(grid - equal) < 1e-12, axis=1)):
        grid = np.concatenate([grid, equal])
    return grid


def grid_step_for(num_layers: int, step: float = GRID_STEP, max_points: int = MAX_GRID) -> float:
    """``step``, or a coarser one (1/parts with fewer parts) when its grid would exceed ``max_points``."""
    parts = round(1 / step)
    while parts > 1 and math.comb(parts + num_layers - 1, num_layers - 1) > max_points:
        parts -= 1
    return 1.0 / parts


def labelled(labels: Sequence[str | None]) -> list[int]:
    """The indices of the occurrences that carry a label."""
    return [i for i, lab in enumerate(labels) if lab]


def can_fit(labels: Sequence[str | None]) -> bool:
    """Whether ``fit_mix`` can score these labels: at least 3 labelled occurrences of at least 2 senses."""
    given = labelled(labels)
    return len(given) >= MIN_LABELLED and len({labels[i] for i in given}) >= MIN_SENSES


def _grams(layers: np.ndarray) -> np.ndarray:
    """float64 (L + 1, L + 1, n, n): the dot products of every layer's vectors with every layer's."""
    h = np.asarray(layers, dtype=np.float64)
    return np.einsum("jad,kbd->jkab", h, h, optimize=True)


def _similarities(grams: np.ndarray, s: np.ndarray) -> np.ndarray:
    """float64 (n, n) cosine similarities of the mix sum_j s_j h_j from the layers' Gram blocks (a zero vector
    has similarity 0 to everything, as ``app.explore.neighbours.cosine_matrix`` gives it)."""
    num_layers, n = grams.shape[0], grams.shape[2]
    dots = (np.outer(s, s).reshape(-1) @ grams.reshape(num_layers * num_layers, n * n)).reshape(n, n)
    norms = np.sqrt(np.clip(np.diag(dots), 0.0, None))
    safe = np.where(norms > 0, norms, 1.0)
    sims = dots / safe[:, None] / safe[None, :]
    sims[norms == 0, :] = 0.0
    sims[:, norms == 0] = 0.0
    return sims


def _accuracy_of(grams: np.ndarray, s: np.ndarray, same: np.ndarray) -> float:
    """Leave-one-out 1-NN accuracy of the mix sum_j s_j h_j from the layers' Gram blocks (cosine); same: ``same_label``."""
    return float(np.mean(nn_scores_from_same(_similarities(grams, s), same)))


def _best(scores: np.ndarray, grid: np.ndarray) -> tuple[int, int]:
    """(index of the best weighting, how many tie with it): ties go to the one nearest equal weights, then to the
    first in grid order."""
    best_rows = np.flatnonzero(scores >= scores.max() - 1e-12)
    distance = np.round(np.linalg.norm(grid[best_rows] - 1.0 / grid.shape[1], axis=1), 12)
    return int(best_rows[np.argmin(distance)]), len(best_rows)  # argmin: the first of equals


def _nested(sims: np.ndarray, grid: np.ndarray, labels: Sequence[str]) -> float:
    """Leave-one-out of the whole fit: for each occurrence i, s is chosen on the others (their own leave-one-out
    score), then i is scored by its nearest other occurrence in that mix. sims: (G, n, n), one per weighting."""
    n = sims.shape[1]
    same = same_label(labels)
    hits = []
    for i in range(n):
        rest = np.flatnonzero(np.arange(n) != i)
        if len({labels[j] for j in rest}) < MIN_SENSES:  # the others cannot choose an s: equal weights
            g = int(np.argmin(np.linalg.norm(grid - 1.0 / grid.shape[1], axis=1)))
        else:
            sub = np.ix_(rest, rest)
            g = _best(np.array([np.mean(nn_scores_from_same(m[sub], same[sub])) for m in sims]), grid)[0]
        hits.append(nn_scores_from_same(sims[g], same)[i])
    return float(np.mean(hits))


def fit_mix(layers: np.ndarray, labels: Sequence[str | None], step: float = GRID_STEP) -> MixFit:
    """The layer weights s that best separate the labelled senses by leave-one-out 1-NN (cosine).

    Args:
        layers: float (L + 1, n, D), every layer's vectors of the n occurrences (layer-normed when the page's
            mix is: ``app.explore.frame.occurrence_layers``); float32 is fine, the scores are computed in float64.
        labels: n sense labels, None (or "") for an unlabelled occurrence, which is left out.
        step: the grid's step over the simplex (coarser for many layers, see ``grid_step_for``).
    Returns:
        The ``MixFit``: the best s on the grid (ties: nearest to equal weights, then first in grid order) with
        its accuracy, equal weights' and each single layer's.
    Raises:
        ValueError: ``layers`` is not 3-D, ``labels`` does not have one entry per occurrence, or there are fewer
        than 3 labelled occurrences or fewer than 2 senses (``can_fit``).
    """
    layers = np.asarray(layers)
    if layers.ndim != 3:
        raise ValueError(f"layers must be (L + 1, n, D), got shape {layers.shape}")
    if len(labels) != layers.shape[1]:
        raise ValueError(f"{len(labels)} labels for {layers.shape[1]} occurrences")
    if not can_fit(labels):
        raise ValueError(
            f"fitting s needs at least {MIN_LABELLED} labelled occurrences of at least {MIN_SENSES} senses"
        )
    given = labelled(labels)
    names = [str(labels[i]) for i in given]
    num_layers = layers.shape[0]
    step = grid_step_for(num_layers, step)
    grams = _grams(layers[:, given])
    grid = simplex_grid(num_layers, step)
    same = same_label(names)
    keep = len(given) <= NESTED_MAX  # the nested score reuses every weighting's similarities (G n^2 floats)
    sims = [_similarities(grams, s) for s in grid] if keep else None
    scores = np.array(
        [np.mean(nn_scores_from_same(m, same)) for m in sims] if keep else [_accuracy_of(grams, s, same) for s in grid]
    )
    best, tied = _best(scores, grid)
    single = tuple(_accuracy_of(grams, np.eye(num_layers)[j], same) for j in range(num_layers))
    equal = _accuracy_of(grams, np.full(num_layers, 1.0 / num_layers), same)
    nested = _nested(np.stack(sims), grid, names) if keep else None
    return MixFit(
        grid[best].copy(),
        float(scores[best]),
        equal,
        single,
        float(np.mean(chance_random_neighbour(names))),
        len(given),
        len(grid),
        tied,
        step,
        nested,
    )


def accuracy(layers: np.ndarray, labels: Sequence[str | None], s: Sequence[float]) -> float:
    """The leave-one-out 1-NN accuracy of the mix sum_j s_j h_j over the labelled occurrences (``fit_mix``'s
    score, for the s the sliders end up holding). Raises: ValueError as ``fit_mix``."""
    layers = np.asarray(layers)
    if layers.ndim != 3 or len(labels) != layers.shape[1] or len(s) != layers.shape[0]:
        raise ValueError(f"layers {layers.shape}, {len(labels)} labels and {len(s)} weights do not match")
    if not can_fit(labels):
        raise ValueError(f"scoring needs at least {MIN_LABELLED} labelled occurrences of at least {MIN_SENSES} senses")
    given = labelled(labels)
    return _accuracy_of(
        _grams(layers[:, given]), np.asarray(s, dtype=np.float64), same_label([str(labels[i]) for i in given])
    )


def _pct(v: float) -> str:
    return f"{100 * v:.0f}%"


def fit_message(fit: MixFit, s_set: Sequence[float], accuracy_set: float) -> str:
    """What the page says after fitting (plain text; the page escapes it): the s the sliders now hold (``s_set`` =
    softmax of their w, ``accuracy_set`` its score), against equal weights, chance and each layer alone, and the
    nested score (what the fit is worth on a sentence it did not see) when there is one."""
    alone = ", ".join(f"layer {j} {_pct(v)}" for j, v in enumerate(fit.layers))
    nested = (
        f" Chosen without each sentence in turn, then tested on it: {_pct(fit.nested)}."
        if fit.nested is not None
        else ""
    )
    if np.allclose(fit.s, 1.0 / len(fit.s)):
        tie = f" {fit.tied} of {fit.tried} weightings tie." if fit.tied > 1 else ""
        return (
            f"Equal weights are already the best s: leave-one-out 1-NN accuracy {_pct(fit.accuracy)} over "
            f"{fit.n} labelled occurrences (chance {_pct(fit.chance)}; alone: {alone}).{tie}{nested}"
        )
    tie = f" {fit.tied} of {fit.tried} weightings tie; the one nearest equal weights is set." if fit.tied > 1 else ""
    return (
        f"Fitted s = {' / '.join(f'{v:.2f}' for v in s_set)}: leave-one-out 1-NN accuracy "
        f"{_pct(accuracy_set)} over {fit.n} labelled occurrences, equal weights {_pct(fit.equal)} (chance "
        f"{_pct(fit.chance)}; alone: {alone}).{tie}{nested}"
    )


def unsupported(fit: MixFit, labels: Sequence[str | None]) -> str:
    """Why the labels cannot support setting ``fit.s`` (plain text; the weights stay), or "": fewer than
    ``MIN_REPEATED`` labels mark two occurrences or more (an occurrence whose label no other one carries is wrong in
    every mix), or the nested score (else the score) is not ``CHANCE_MARGIN`` above chance."""
    names = [str(labels[i]) for i in labelled(labels)]
    repeated = sum(names.count(name) >= 2 for name in set(names))
    honest = fit.accuracy if fit.nested is None else fit.nested
    if repeated >= MIN_REPEATED and honest >= fit.chance + CHANCE_MARGIN:
        return ""
    how = "" if fit.nested is None else " (chosen without each sentence in turn, then tested on it)"
    why = (
        f"of your {len(set(names))} labels, {('none', 'only one')[repeated]} marks two occurrences or more, and an "
        "occurrence whose label no other one carries is wrong in every mix"
        if repeated < MIN_REPEATED
        else f"the fitted s scores {_pct(honest)}{how} over {fit.n} labelled occurrences, not "
        f"{100 * CHANCE_MARGIN:.0f} points above chance ({_pct(fit.chance)})"
    )
    return f"Your labels do not support a fit, so the weights are unchanged: {why}. More sentences per label help."


def weights_for_s(s: Sequence[float], w_range: tuple[float, float], step: float) -> tuple[float, ...]:
    """Raw slider values w with softmax(w) as close to ``s`` as the sliders allow: log s, centred; when that
    leaves the range (an s_j of 0 has no logarithm), shifted so the largest is the range's top and the rest
    clipped at its bottom (an s_j of 0 becomes e^-(range width) times the largest, 4.5e-5 for -5..5); on the
    sliders' step.

    Raises: ValueError when s is empty, has a negative entry or sums to 0.
    """
    s = np.asarray(s, dtype=np.float64)
    if s.size == 0 or np.any(s < 0) or s.sum() <= 0:
        raise ValueError(f"layer weights must be non-negative and not all 0, got {s.tolist()}")
    lo, hi = w_range
    positive = s > 0
    logs = np.full(s.shape, -np.inf)
    logs[positive] = np.log(s[positive])
    w = logs - logs[positive].mean()
    if w.max() > hi or w.min() < lo:
        w = logs - logs.max() + hi
    w = np.clip(w, lo, hi)
    return tuple(float(round(round(v / step) * step, 10)) for v in w)

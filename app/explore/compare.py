"""Two models on the same sentences and word: one frame per model, their maps aligned, their scores side by side.

Each model's activations go through ``app.explore.frame.compute_frame`` with the same controls (the weights padded or
cut to the model's number of layers), so each side is exactly what the explorer would show for that model.
The second map is Procrustes-aligned onto the first (same occurrences, same order): a rotation or reflection
of a projection means nothing, so without it two equal arrangements could look different. No Streamlit here.

Dims: n occurrences; the models may differ in layers and D.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.explore import activations, inputs, mixing, projections
from app.explore.controls import Controls
from app.explore.frame import Frame, compute_frame, layer_name


@dataclass
class Side:
    """One model's view: name (as shown), key (its cache id), frame, aligned: the map was rotated onto the
    first side's."""

    name: str
    key: str
    frame: Frame
    aligned: bool = False


def side_name(choice_label: str) -> str:
    """A side's name from its Compare-tab choice label: "default (bundled)" -> "default"."""
    return choice_label.rsplit(" (", 1)[0]


def side_controls(controls: Controls, num_layers: int) -> Controls:
    """The page's controls for a model with ``num_layers`` layers: w padded with 0 or cut, no grey context
    words (``compare`` passes no click: a click on one side's map is not a query on the other)."""
    return dataclasses.replace(controls, weights=mixing.fit_weights(controls.weights, num_layers), context=False)


def compare(
    models: Sequence[tuple[str, str, activations.TokenTable]],
    occurrences: Sequence[inputs.Occurrence],
    controls: Controls,
    word: str,
    previous: Sequence[Side] = (),
) -> list[Side]:
    """The frames of each (name, key, table) for the same occurrences and controls, maps aligned to the first.

    Args:
        models: two or more models' activations of the same sentences (tables with the same lines).
        previous: the last result; a side with the same key warm-starts from its frame.
    Raises: ValueError when the tables do not hold the same sentences.
    """
    if len({tuple(ln.tokens for ln in table.lines) for _, _, table in models}) > 1:
        raise ValueError("the models' tables hold different sentences")
    before = {side.key: side.frame for side in previous}
    sides = []
    for name, key, table in models:
        frame = compute_frame(
            table, occurrences, side_controls(controls, table.num_layers), before.get(key), model_key=key, word=word
        )
        sides.append(Side(name, key, frame))
    first = sides[0].frame.coords
    for side in sides[1:]:
        coords = side.frame.coords
        if first is not None and coords is not None and not side.frame.same_vector and coords.shape == first.shape:
            # only what is drawn is rotated: the frame's layout (the next warm start) stays the model's own
            side.frame = dataclasses.replace(
                side.frame,
                projection=dataclasses.replace(
                    side.frame.projection, coords=projections.procrustes_align(coords, first)
                ),
            )
            side.aligned = True
    return sides


def score_rows(sides: Sequence[Side]) -> list[dict]:
    """A table of the separation scores: one row per layer (and the mix), two columns per model
    (1-NN accuracy when there are labels, and silhouette); None where a model has no such layer."""
    num = max(side.frame.s.shape[0] for side in sides)
    names = [layer_name(j, num) for j in range(num)] + ["ELMo mix (current s, γ)"]
    rows = []
    for r, name in enumerate(names):
        row: dict = {"layer": name}
        for side in sides:
            scores = side.frame.separation
            k = side.frame.s.shape[0]
            idx = r if r < k else (len(scores) - 1 if r == len(names) - 1 else None)
            score = scores[idx] if idx is not None and idx < len(scores) else None
            if any(s.knn_accuracy is not None for s in scores):
                row[f"{side.name}: 1-NN"] = _round(score.knn_accuracy if score else None)
            row[f"{side.name}: silhouette"] = _round(score.silhouette if score else None)
        rows.append(row)
    return rows


def score_note(sides: Sequence[Side]) -> str:
    """The note of the first side's scores (why a score is missing, say), "" when there is none."""
    scores = sides[0].frame.separation if sides else []
    return (scores[0].note or "") if scores else ""


def _round(v: float | None) -> float | None:
    return None if v is None or not np.isfinite(v) else round(float(v), 3)

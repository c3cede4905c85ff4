"""Small multiples: every layer's map next to the mix's, for one frame's occurrences (no Streamlit here).

Dims: n occurrences, L + 1 layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.explore import activations, projections
from app.explore.frame import METHOD_NAMES, Frame, layer_name, project_safely


@dataclass
class LayerMaps:
    """The map of every layer next to the mix's, for ``frame``'s occurrences.

    names: the panel titles (layers 0..L, then the mix); coords: per panel (n, 2), each layer's fit
    Procrustes-aligned (rotation, reflection, scale, shift) onto the mix's layout, so the panels share one
    orientation and scale and only the arrangement differs; notes: per panel ("" or why it looks as it does);
    method: the projection every panel used (the one the mix's map used); fits: the layers' unaligned fits,
    which do not depend on w or gamma (reused while ``key`` holds).
    """

    key: tuple
    method: str
    names: list[str]
    coords: list[np.ndarray]
    notes: list[str]
    fits: list[np.ndarray]


def layer_maps(table: activations.TokenTable, frame: Frame, previous: LayerMaps | None = None) -> LayerMaps | None:
    """Small multiples for a frame: each layer projected alone with the method of the frame's map, aligned
    to the mix's map (its occurrence points); on the fixed axes (``app.explore.live_map``), each layer is the
    point of the mix with s_j = 1 on the same axes, nothing refitted.

    Args:
        previous: the last result; its layer fits are reused when the points, layer norm and method are the
            same (a slider move changes only the mix panel and the alignment).
    Returns: None when the frame has no map (fewer than 3 occurrences).
    """
    if frame.coords is None:
        return None
    n = len(frame.rows)
    names = [layer_name(j, table.num_layers) for j in range(table.num_layers)] + ["ELMo mix (current s, γ)"]
    if frame.projection.method == "live" and frame.live is not None:
        # the fixed axes hold every layer already: layer j alone is the mix with s_j = 1, at the same γ
        live, gamma = frame.live, frame.controls.gamma
        coords = [live.a[:n] + gamma * live.c[j, :n] for j in range(table.num_layers)] + [frame.coords[:n]]
        key = (frame.signature[:2], frame.controls.layer_norm, "live")
        return LayerMaps(key, "live", names, coords, [""] * len(coords), [])
    method = frame.projection.method if frame.projection.method in ("pca", "umap", "tsne") else "pca"
    key = (frame.signature[:2], frame.controls.layer_norm, method)
    layers = table.layers(frame.controls.layer_norm)
    num_layers = table.num_layers
    mix = frame.coords[:n]
    fits, notes = [], []
    for j in range(num_layers):
        if previous is not None and previous.key == key:
            fits, notes = previous.fits, previous.notes[:num_layers]
            break
        x = layers[j][frame.rows]
        if projections.nearly_identical(x):
            fits.append(np.zeros((n, 2)))
            notes.append("one vector for all: one spot")
            continue
        found = project_safely(x, method, None)
        fits.append(found.coords if found.coords is not None else np.zeros((n, 2)))
        notes.append(
            found.note if found.method == method else f"{METHOD_NAMES.get(found.method, found.method)}: {found.note}"
        )
    aligned = []
    for fit in fits:
        if float(np.ptp(fit, axis=0).max()) == 0.0:
            aligned.append(np.repeat(mix.mean(axis=0, keepdims=True), n, axis=0))  # one spot, at the mix's centre
        else:
            aligned.append(projections.procrustes_align(fit, mix))
    mix_note = "one vector for all: one spot" if frame.same_vector else ""
    return LayerMaps(key, method, names, aligned + [mix], list(notes) + [mix_note], fits)

"""The explorer's page state that both pages touch: the layer-weight sliders and what survives a page switch.

One writer for the weights (``set_layer_weights``: the presets, the Layers page's "use these weights"), and
one list of the explorer's controls that are not in the URL but must survive Explorer -> Layers -> Explorer
(``KEPT``): Streamlit forgets a widget's value once the widget is not drawn, so the explorer saves them on
every run (``remember``) and puts back what was forgotten (``restore``) before drawing them. No Streamlit
import: ``state`` is ``st.session_state`` on the pages and a dict in the tests.
"""
from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping, Sequence

from app import explore as ex

W_RANGE = ex.W_RANGE  # the w sliders' range (the URL parser clips to it too)
W_STEP = 0.1
KEPT = ("nn_k", "nn_same_word", "query_occ", "color_by")  # controls outside the URL that outlive a page switch
_SAVED = "_explorer_kept"


def weight_key(j: int) -> str:
    """The session-state key of layer j's w slider."""
    return f"w_{j}"


def set_layer_weights(state: MutableMapping, w: Sequence[float]) -> tuple[float, ...]:
    """Put raw w into the sliders and into the remembered view (``_view``, which the explorer restores its
    widgets from when they were not drawn). Returns w clipped to ``W_RANGE``, as a tuple."""
    lo, hi = W_RANGE
    w = tuple(float(min(max(v, lo), hi)) for v in w)
    for j, value in enumerate(w):
        state[weight_key(j)] = value
    view = state.get("_view")
    if view is not None and dataclasses.is_dataclass(view):
        state["_view"] = dataclasses.replace(view, weights=w)
    return w


def set_preset(state: MutableMapping, preset: str, num_layers: int) -> tuple[float, ...]:
    """The "equal", "top" and "bottom" buttons (``explore.preset_weights``)."""
    return set_layer_weights(state, ex.preset_weights(preset, num_layers))


def remember(state: MutableMapping) -> None:
    """Save the kept controls' current values (call on every explorer run, after its widgets are drawn)."""
    state[_SAVED] = {key: state[key] for key in KEPT if key in state}


def restore(state: MutableMapping) -> None:
    """Put back kept controls that Streamlit forgot while another page was shown (before drawing them)."""
    for key, value in state.get(_SAVED, {}).items():
        if key not in state:
            state[key] = value

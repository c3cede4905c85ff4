"""The contexts map's live part: Vega-Lite params bound to the rail's sliders, and the expressions that redraw the map
of the mix they show while one is dragged, in the browser, with nothing sent to the server (no Streamlit here).

Each row of the map carries its released position (``x``, ``y``: the map the server drew for the released sliders)
and, from ``app.explore.live_map.LiveMap``, its fixed part (``ax``, ``ay``) and its per-layer coordinates (``x0``,
``y0``, ``x1``, ...). The params ``live_w0``.. and ``live_gamma`` are bound to the sliders' own ``<input>`` elements
(Vega's direct binding, listening to ``LIVE_EVENT``, which ``app/views/live_bridge.js`` dispatches as a slider's
value moves during a drag); s = softmax(w) is computed from them, and the drawn position (``px``, ``py``) is the
mix of the layers' points while any slider differs from its released value, else the released position. The
same spec without bindings (``bind=None``: the PNG and HTML export) draws the released map.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

LIVE_EVENT = "elmo-live"  # the DOM event the bridge dispatches on a slider's input while its value moves
DRAWN_X, DRAWN_Y = "px", "py"  # the drawn position's fields (the rows' x and y are the released map's)
MOVED = "live_moved"  # true while a slider differs from the value the map was drawn for
TOLERANCE = 1e-9


def layer_fields(num_layers: int) -> list[str]:
    """The rows' per-layer coordinate columns: x0, y0, x1, y1, ..."""
    return [f"{axis}{j}" for j in range(num_layers) for axis in "xy"]


def _num(name: str) -> str:
    return f"toNumber({name})"  # a bound input gives its value as a string


def live_params(
    weights: Sequence[float], gamma: float, bind: Sequence[str] | None, scales_with_gamma: bool, what: str
) -> list[dict]:
    """The params: one per raw weight w_j and γ, with the released values (bound to the CSS selectors ``bind``,
    L + 1 weights then γ, or unbound), s_j = softmax(w)_j, ``MOVED``, and the subtitle's live line.

    ``what``: the map's name for the subtitle ("fixed axes", "UMAP"); ``scales_with_gamma``: γ moves the points
    (the fixed-axes map) or not (a preview of a map of cosines).
    Raises: ValueError when ``bind`` does not name one element per weight and one for γ.
    """
    names = [f"live_w{j}" for j in range(len(weights))] + ["live_gamma"]
    values = [float(w) for w in weights] + [float(gamma)]
    if bind is not None and len(bind) != len(names):
        raise ValueError(f"{len(bind)} slider selectors for {len(names)} params")
    params = []
    for i, (name, value) in enumerate(zip(names, values, strict=True)):
        param = {"name": name, "value": value}
        if bind is not None:
            param["bind"] = {"element": bind[i], "event": LIVE_EVENT}
        params.append(param)
    total = " + ".join(f"exp({_num(n)})" for n in names[:-1])
    for j, name in enumerate(names[:-1]):
        params.append({"name": f"live_s{j}", "expr": f"exp({_num(name)}) / ({total})"})
    watched = list(zip(names, values, strict=True))[: None if scales_with_gamma else -1]  # γ moves no preview
    moved = " || ".join(f"abs({_num(n)} - {v!r}) > {TOLERANCE}" for n, v in watched)
    params.append({"name": MOVED, "expr": moved})
    shown_s = " + ' / ' + ".join(f"format(live_s{j}, '.2f')" for j in range(len(weights)))
    if scales_with_gamma:
        dragging = f"'dragging: s = ' + {shown_s} + ' · γ = ' + format({_num('live_gamma')}, '.1f')"
        released = json.dumps("drag a weight or γ: the map follows; the neighbours update when you let go")
    else:
        dragging = f"'dragging: s = ' + {shown_s} + {json.dumps(f' · a linear preview; {what} when you let go')}"
        released = json.dumps(f"drag a weight: a linear preview follows, and {what} is fitted when you let go")
    params.append({"name": "live_line", "expr": f"{MOVED} ? {dragging} : {released}"})
    return params


def position_transforms(released_s: Sequence[float], scales_with_gamma: bool) -> list[dict]:
    """The calculate transforms of the drawn position while ``MOVED`` (else the released one).

    The fixed-axes map (``scales_with_gamma``): a + γ Σ_j s_j c_j, the map itself. A preview: the released map
    moved by the linear map's displacement, x + Σ_j (s_j - r_j) c_j with r the released s, so that it starts
    exactly where the released map is (no jump when a drag begins) and follows the layers' linear picture."""
    out = []
    for axis, drawn in (("x", DRAWN_X), ("y", DRAWN_Y)):
        if scales_with_gamma:
            mix = " + ".join(f"live_s{j} * datum.{axis}{j}" for j in range(len(released_s)))
            live = f"datum.a{axis} + {_num('live_gamma')} * ({mix})"
        else:
            moves = " + ".join(f"(live_s{j} - {float(r)!r}) * datum.{axis}{j}" for j, r in enumerate(released_s))
            live = f"datum.{axis} + {moves}"
        out.append({"calculate": f"{MOVED} ? {live} : datum.{axis}", "as": drawn})
    return out


def released_position() -> list[dict]:
    """The drawn position of a map without live part: the released one."""
    return [{"calculate": "datum.x", "as": DRAWN_X}, {"calculate": "datum.y", "as": DRAWN_Y}]


def live_half_extent(reach, floor: float, num_layers: int) -> tuple[str, str]:
    """Vega expressions of the fixed-axes map's half width and height for the live s (``LiveMap.half_extent``)."""
    _, fixed, per_layer = reach
    out = []
    for axis in (0, 1):
        mix = " + ".join(f"live_s{j} * {float(per_layer[j, axis])!r}" for j in range(num_layers))
        out.append(f"max({float(fixed[axis])!r} + {mix}, {float(floor * per_layer[:, axis].max())!r})")
    return out[0], out[1]

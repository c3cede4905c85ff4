"""The contexts map's Vega-Lite spec apart from its rows: layers, legend, selections, scales, title (no Streamlit)."""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Sequence

import numpy as np

from app.render.figures import GREY, PALETTE

PICK = "pick"  # the point-selection parameter; its selection holds [{"idx": occurrence index}]
VIEW = "view"  # the pan and zoom of the map's scales (not sent to the server)
OCCURRENCE, OTHER, QUERY = "occurrence", "other words", "neighbours query"  # the rows' roles (legend names too)
OCCURRENCE_VIEW = "occurrences"  # the name of the occurrences' layer, which the selections listen to
TITLE_WIDTH_PX = 380  # a title line fits this width (a narrow column, the comparison's halves) at any type size
WIDE_TITLE_PX = 560  # from this chart width on (the map beside the rail at 1,024 px and wider) the wide lines
LEGEND_LABEL_PX = 320  # a legend label's limit (longer ones end in "…")
MAP_PAD_PX = 20  # the outermost points' distance from the plot's edge
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"  # what Altair 6 writes; Streamlit's and vl-convert's


def _number(field_name: str) -> str:
    """A Vega expression writing ``datum.<field_name>`` as Python's ``f"{v:.6f}"`` does (Vega's ``format`` writes
    a minus as U+2212, so the sign is written apart)."""
    return f"(datum.{field_name} < 0 ? '-' : '') + format(abs(datum.{field_name}), '.6f')"


# Each drawn mark's description for screen readers (its aria-label, as Vega-Lite's own names a point's
# coordinates): "series · head · x = .., y = ..", which the browser tests read. Computed by Vega from the row.
DESC = f"datum.series + ' · ' + datum.head + ' · x = ' + {_number('px')} + ', y = ' + {_number('py')}"


def domains(coords: np.ndarray, context_coords: np.ndarray | None) -> tuple[float, float, float, float]:
    """(cx, cy, rx, ry): the points' centre and half extents (a unit square around one spot)."""
    pts = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    if context_coords is not None and len(context_coords):
        pts = np.concatenate([pts, np.asarray(context_coords, dtype=np.float64).reshape(-1, 2)])
    pts = pts[np.isfinite(pts).all(axis=1)]
    if not len(pts):
        pts = np.zeros((1, 2))
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    cx, cy = float(hi[0] + lo[0]) / 2, float(hi[1] + lo[1]) / 2
    rx, ry = float(hi[0] - lo[0]) / 2, float(hi[1] - lo[1]) / 2
    if max(rx, ry) == 0:  # one spot (layer 0 only): a unit square around it
        rx = ry = 1.0
    return cx, cy, rx, ry


def square_scales(cx: float, cy: float, rx: float | str, ry: float | str) -> tuple[dict, dict]:
    """x and y scales with one unit per pixel on both axes, whatever width the page gives the chart (the plotly
    map's ``scaleanchor``): the domains are Vega expressions of the chart's width and height signals around the
    points' centre, every point ``MAP_PAD_PX`` inside the plot's edge. ``rx``, ``ry``: the half extents, numbers
    or Vega expressions (the live map's frame follows the weights while a slider moves)."""
    pad = MAP_PAD_PX
    rx, ry = (f"({v})" if isinstance(v, str) else repr(float(v)) for v in (rx, ry))
    # data units per pixel: every point at least ``pad`` px inside the plot (the query's ring reaches 14 px out)
    u = f"max({rx} / max(width / 2 - {pad}, 1), {ry} / max(height / 2 - {pad}, 1))"
    x = {
        "domainMin": {"expr": f"{cx!r} - {u} * width / 2"},
        "domainMax": {"expr": f"{cx!r} + {u} * width / 2"},
        "nice": False,
        "zero": False,
    }
    y = {
        "domainMin": {"expr": f"{cy!r} - {u} * height / 2"},
        "domainMax": {"expr": f"{cy!r} + {u} * height / 2"},
        "nice": False,
        "zero": False,
    }
    return x, y


def title_lines(title: str, font: int = 16, width_px: int = TITLE_WIDTH_PX) -> list[str] | str:
    """The title on one line, or broken into lines that fit ``width_px`` (default: the narrowest chart) at
    ``font`` px: at its " · " separators where it can, inside a part (at spaces, else anywhere) when one part is
    longer than a line."""
    limit = max(12, int(width_px / (0.55 * font)))  # characters: a proportional font's average width
    if len(title) <= limit:
        return title
    lines, line = [], ""
    for part in title.split(" · "):
        if line and len(line) + 3 + len(part) > limit:
            lines.append(line + " ·")
            line = ""
        pieces = textwrap.wrap(f"{line} · {part}" if line else part, limit, break_long_words=True) or [""]
        lines += pieces[:-1]
        line = pieces[-1]
    return lines + [line]


def title_text(title: str, font: int) -> tuple[list[str] | str | dict, list[dict]]:
    """The map title's ``text`` and the params it reads: the chart's width is known in the browser only, so a
    title that needs more lines on a narrow chart than on a wide one carries both sets of lines as param values
    (data, never code) and an expression of the width picks one."""
    narrow, wide = title_lines(title, font), title_lines(title, font, WIDE_TITLE_PX)
    if narrow == wide:
        return narrow, []
    params = [{"name": "title_narrow", "value": narrow}, {"name": "title_wide", "value": wide}]
    return {"expr": f"width < {WIDE_TITLE_PX} ? title_narrow : title_wide"}, params


def legend_columns(names: Sequence[str], font: int) -> dict:
    """A Vega expression for the legend's columns: as many entries side by side as fit the chart's width (known in
    the browser only), the widest entry's width (symbol, label up to ``LEGEND_LABEL_PX``, padding) estimated from the
    longest name; the entries wrap into rows instead of running past the chart's edge."""
    longest = max((len(n) for n in names), default=1)
    entry = 30 + 14 + min(LEGEND_LABEL_PX, int(0.6 * font * longest) + 4)
    return {"expr": f"max(1, min({max(1, len(names))}, floor((width + 14) / {entry})))"}


@functools.lru_cache(maxsize=256)
def skeleton(names: tuple[str, ...], many: bool, has_other: bool, has_query: bool, height: int, font: int) -> dict:
    """Everything of the spec that a slider move leaves as it is: the layers (grey other words, the occurrences,
    the query's ring), colours, legend, tooltips, selections, height and type. Shared: never changed in place."""
    axis = {"domain": False, "grid": True, "gridColor": "#eeeeee", "labels": False, "ticks": False, "title": None}
    legend = {
        "columnPadding": 14,
        "direction": "horizontal",
        "labelFontSize": font,
        "labelLimit": LEGEND_LABEL_PX,
        "orient": "bottom",
        "symbolSize": 140,
        "titleFontSize": font,
    }
    tooltip = [
        {"field": "head", "title": "title", "type": "nominal"},
        {"field": "text", "title": "sentence", "type": "nominal"},
    ]
    desc = {"field": "desc", "type": "nominal"}
    layers = []
    if has_other:
        grey = {
            "mark": {"type": "circle", "clip": True, "opacity": 1, "size": 30},
            "encoding": {"description": desc, "tooltip": tooltip},
            "transform": [{"filter": f"(datum.role === '{OTHER}')"}],
        }
        if many:
            grey["mark"]["color"] = GREY
        else:
            grey["encoding"]["color"] = {"field": "series", "legend": None, "type": "nominal"}
        layers.append(grey)
    if many:
        color = {
            "field": "line",
            "legend": {"gradientLength": 260, **legend, "title": "sentence"},
            "scale": {"scheme": "turbo"},
            "type": "quantitative",
        }
    else:
        domain = list(names) + ([OTHER] if has_other else [])
        palette = [PALETTE[g % len(PALETTE)] for g in range(len(names))] + ([GREY] if has_other else [])
        color = {
            "field": "series",
            "legend": {**legend, "columns": legend_columns(domain, font), "title": None},
            "scale": {"domain": domain, "range": palette},
            "type": "nominal",
        }
    layers.append(
        {
            "mark": {
                "type": "circle",
                "clip": True,  # a live mix may carry points past the fixed axes
                "cursor": "pointer",
                "opacity": 1,
                "size": 150,
                "stroke": "white",
                "strokeWidth": 1,
            },
            "encoding": {"color": color, "description": desc, "tooltip": tooltip},
            "name": OCCURRENCE_VIEW,
            "transform": [{"filter": f"(datum.role === '{OCCURRENCE}')"}],
        }
    )
    if has_query:
        layers.append(
            {
                "mark": {
                    "type": "point",
                    "clip": True,
                    "color": "black",
                    "filled": False,
                    "opacity": 1,
                    "shape": "circle",
                    "size": 560,
                    "strokeWidth": 2.5,
                },
                "encoding": {
                    "description": desc,
                    "shape": {
                        "field": "role",
                        "type": "nominal",
                        "legend": {
                            **legend,
                            "symbolFillColor": "transparent",
                            "symbolStrokeColor": "black",
                            "symbolStrokeWidth": 2,
                            "title": None,
                        },
                        "scale": {"domain": [QUERY], "range": ["circle"]},
                    },
                },
                "transform": [{"filter": f"(datum.role === '{QUERY}')"}],
            }
        )
    params = [
        # a click on an occurrence selects its index: the page reads it back as the neighbours query
        {
            "name": PICK,
            "select": {"type": "point", "clear": False, "fields": ["idx"], "on": "click", "toggle": False},
            "views": [OCCURRENCE_VIEW],
        },
        # drag to pan, shift + wheel to zoom (a plain wheel scrolls the page), double-click to go back
        {
            "name": VIEW,
            "select": {"type": "interval", "zoom": "wheel![event.shiftKey]"},
            "bind": "scales",
            "views": [OCCURRENCE_VIEW],
        },
    ]
    return {
        "$schema": SCHEMA,
        "config": {
            "view": {"continuousWidth": 300, "continuousHeight": 300, "stroke": "#dddddd"},
            "legend": {"labelFontSize": font, "titleFontSize": font},
            "title": {"fontSize": font + 2},
        },
        "transform": [{"calculate": DESC, "as": "desc"}],
        "encoding": {
            "x": {"axis": axis, "field": "px", "type": "quantitative"},  # map_live.DRAWN_X: released or live
            "y": {"axis": axis, "field": "py", "type": "quantitative"},
        },
        "layer": layers,
        "params": params,
        "resolve": {"legend": {"color": "independent", "shape": "independent"}},
        "height": height,
        "width": "container",
    }

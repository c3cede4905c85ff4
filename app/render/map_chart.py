"""The contexts map as a Vega-Lite chart: data in, a ``MapChart`` (a plain Vega-Lite spec and its rows) out (no
Streamlit).

The explorer draws its contexts map with this (``st.vega_lite_chart(chart.data, chart.spec, ...)``): Streamlit's
Vega-Lite chunk is about a fifth of plotly.js, which a fresh session otherwise downloads and compiles before its
first map (docs/performance.md, "The contexts map's renderer"). One table holds every drawn point, one row each,
with a ``role``: the word's occurrences, the sentences' other words (grey) and the neighbours query (a ring over its
occurrence). A click on an occurrence selects the point-selection parameter ``app.render.map_spec.PICK`` with the
field ``idx`` (the occurrence's index), which ``app.session.widgets.clicked_occurrence`` reads back. Text here is
plain text: Vega draws titles and legends as text and its tooltip escapes what it shows, so user text goes through
``app.render.safe.vega`` only (no HTML entities).

A slider move redraws the map, so a move costs little here: the spec is a plain dict (no Altair chart object and
no schema validation), its layers, legend and selections built once per look (``app.render.map_spec.skeleton``:
colours, legend names, height, type size) and shared; the hover text of every point is made once per set of points
(``app.render.map_texts``, kept per sentence table); a move adds the coordinates, the title and the
scales' centre and extent. Each mark's description for screen readers (its ``aria-label``) is computed by Vega
from the row (a ``calculate`` transform), so it is not sent. PNG and HTML export (``chart_png``, ``chart_html``)
draw the same spec with its rows inline (``MapChart.to_dict``) through vl-convert.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from app.explore.frame import METHOD_NAMES
from app.explore.inputs import Line, Occurrence
from app.explore.live_map import FLOOR, LiveMap
from app.render import map_live
from app.render.figures import MAX_LEGEND_SENTENCES
from app.render.map_spec import OCCURRENCE, OTHER, QUERY, domains, skeleton, square_scales, title_text
from app.render.map_texts import MapTexts, map_texts, texts_of
from app.render.safe import script_json, vega

FONT = 14  # px: legend, tooltip (``TOOLTIP_CSS``); the title is 2 px larger
COLUMNS = ("x", "y", "role", "series", "idx", "line", "head", "text")  # the rows' columns, in order

# Streamlit styles Vega's tooltip at 0.75 rem (12 px) and cuts its values after 5 lines; the map's hover text is
# read from a projector: 15 px, a wider box, up to 8 lines. The page adds this once (``st.html``).
TOOLTIP_CSS = (
    "<style>#vg-tooltip-element{font-size:15px !important;max-width:34rem !important}"
    "#vg-tooltip-element h2{font-size:15px !important}"
    "#vg-tooltip-element td.value{max-width:26rem !important;-webkit-line-clamp:8 !important;"
    "line-clamp:8 !important}</style>"
)


@dataclass(frozen=True)
class MapChart:
    """The contexts map: ``spec``, a Vega-Lite spec without data (shared parts: do not change it in place), and
    ``data``, its rows (one per drawn point; columns ``COLUMNS``) as an Arrow table, which Streamlit sends as it
    is. ``names``: the legend's entries in order."""

    spec: dict
    data: pa.Table
    names: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """One self-contained Vega-Lite spec: ``spec`` with the rows inline (what the PNG and HTML files draw)."""
        return {**self.spec, "data": {"values": self.data.to_pylist()}}

    def rows(self):
        """The rows as a pandas DataFrame (tests, the export)."""
        return self.data.to_pandas()


def _table(
    coords: np.ndarray,
    texts: MapTexts,
    color_by: str,
    selected: int | None,
    context_coords: np.ndarray | None,
    clusters: Sequence[int] | None,
    live: LiveMap | None = None,
) -> tuple[pa.Table, list[str]]:
    """The map's rows (``COLUMNS``) and its legend's names in order.

    Occurrence rows come first, one per occurrence in legend order; then the other words (``idx`` -1) and the
    query's ring (a copy of its occurrence's row). ``series`` is the legend name ("other words" for the grey ones);
    ``line`` the 1-based sentence number (the colour when there are too many sentences for a legend); ``head`` and
    ``text`` the hover text; with ``live``, each row's fixed part (``ax``, ``ay``) and per-layer coordinates
    (``app.render.map_live.layer_fields``)."""
    n = len(texts.occurrences)
    c = texts.colouring(color_by, clusters)
    coords = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    xs, ys = [coords[c.order, 0]], [coords[c.order, 1]]
    role, series, idx = [OCCURRENCE] * n, list(c.series), c.order.tolist()
    points = [np.asarray(c.order, dtype=np.int64)]  # each row's point in ``live``
    line = [texts.occ_line[i] for i in idx]
    head, text = list(c.heads), [texts.occ_text[i] for i in idx]
    m = 0 if context_coords is None else len(context_coords)
    if m:
        if m != len(texts.ctx_text):
            raise ValueError(f"{m} other words' coordinates but {len(texts.ctx_text)} other words")
        ctx = np.asarray(context_coords, dtype=np.float64).reshape(-1, 2)
        points.append(np.arange(n, n + m, dtype=np.int64))
        xs.append(ctx[:, 0])
        ys.append(ctx[:, 1])
        role += [OTHER] * m
        series += [OTHER] * m
        idx += [-1] * m
        line += texts.ctx_line
        head += texts.ctx_head
        text += texts.ctx_text
    if selected is not None and 0 <= selected < n:
        occ = texts.occurrences[selected]
        points.append(np.array([selected], dtype=np.int64))
        xs.append(coords[selected : selected + 1, 0])
        ys.append(coords[selected : selected + 1, 1])
        role.append(QUERY)
        series.append(QUERY)
        idx.append(int(selected))
        line.append(occ.line + 1)
        head.append(f"#{selected + 1} · sentence {occ.line + 1}")
        text.append("")
    columns = {
        "x": pa.array(np.concatenate(xs), pa.float64()),
        "y": pa.array(np.concatenate(ys), pa.float64()),
        "role": pa.array(role, pa.string()),
        "series": pa.array(series, pa.string()),
        "idx": pa.array(idx, pa.int64()),
        "line": pa.array(line, pa.int64()),
        "head": pa.array(head, pa.string()),
        "text": pa.array(text, pa.string()),
    }
    if live is not None:
        columns.update(_live_columns(live, np.concatenate(points)))
    return pa.table(columns), c.names


def _live_columns(live: LiveMap, points: np.ndarray) -> dict:
    """The rows' fixed parts and per-layer coordinates (float32: the page draws pixels, and it halves the bytes)."""
    if len(points) and int(points.max()) >= len(live.a):
        raise ValueError(f"the live map has {len(live.a)} points; the map draws point {int(points.max())}")
    cols = {"ax": live.a[points, 0], "ay": live.a[points, 1]}
    for j in range(live.c.shape[0]):
        cols[f"x{j}"], cols[f"y{j}"] = live.c[j][points, 0], live.c[j][points, 1]
    return {name: pa.array(np.asarray(v, dtype=np.float32), pa.float32()) for name, v in cols.items()}


def map_rows(
    coords: np.ndarray,
    occurrences: Sequence[Occurrence],
    lines: Sequence[Line],
    color_by: str = "label",
    selected: int | None = None,
    context_coords: np.ndarray | None = None,
    context_rows: Sequence[tuple[int, int]] = (),
    clusters: Sequence[int] | None = None,
):
    """The map's rows as a pandas DataFrame (columns ``COLUMNS``) and its legend's names in order: what
    ``contexts_chart`` sends (see ``_table``)."""
    table, names = _table(
        coords,
        map_texts(occurrences, lines, context_rows if context_coords is not None else ()),
        color_by,
        selected,
        context_coords,
        clusters,
    )
    return table.to_pandas(), names


def contexts_chart(
    coords: np.ndarray,
    occurrences: Sequence[Occurrence],
    lines: Sequence[Line],
    color_by: str = "label",
    selected: int | None = None,
    context_coords: np.ndarray | None = None,
    context_rows: Sequence[tuple[int, int]] = (),
    title: str = "",
    clusters: Sequence[int] | None = None,
    height: int = 520,
    font: int = FONT,
    texts: MapTexts | None = None,
    live: LiveMap | None = None,
    released: tuple[Sequence[float], float] | None = None,
    bind: Sequence[str] | None = None,
    what: str = "",
) -> MapChart:
    """The contexts map: the target word's occurrences coloured by sense label (or sentence, spelling, cluster),
    the other words in grey, the neighbours query ringed; a legend under the plot, the title above it.

    Args:
        coords: (n, 2) map coordinates of the occurrences.
        selected: index of the occurrence used as the neighbours query (drawn with a ring).
        context_coords: (m, 2) coordinates of the other tokens; ``context_rows`` holds their (line, position).
        title: plain text (``app.render.safe.vega``); long titles break into lines.
        clusters: (n,) cluster number per occurrence (-1: none), for ``color_by="cluster"`` (None there: this mix
            has no clear clusters, and the legend says so).
        height: the chart's height in px (its width is the page's).
        font: legend and axis type in px (the title 2 px larger); presentation mode passes a larger one.
        texts: the points' hover text (``map_texts`` of the same occurrences, lines and context rows), when kept
            from an earlier move; made here when None.
        live: the map of every mix (``app.explore.live_map``; rows: the occurrences, then the other words), with
            ``released``, the raw weights and γ the map was drawn for: the page then redraws the map while a slider
            bound by ``bind`` (CSS selectors of the weight sliders' and γ's inputs; None: none, as in a file)
            moves (``app.render.map_live``); ``what``: the map's name in its live line ("UMAP").
    A click on an occurrence selects ``map_spec.PICK`` = [{"idx": its index}].
    """
    has_context = context_coords is not None and len(context_coords) > 0
    if texts is None:
        texts = map_texts(occurrences, lines, context_rows if has_context else ())
    if live is not None and released is None:
        raise ValueError("a live map needs the released weights and γ")
    table, names = _table(coords, texts, color_by, selected, context_coords if has_context else None, clusters, live)
    many = color_by == "sentence" and len(names) > MAX_LEGEND_SENTENCES
    has_query = selected is not None and 0 <= selected < len(texts.occurrences)
    spec = dict(skeleton(tuple(names), many, has_context, has_query, int(height), int(font)))
    if live is None:
        spec["transform"] = [*map_live.released_position(), *spec["transform"]]
    else:
        weights = list(released[0]) or [0.0] * live.c.shape[0]
        e = np.exp(np.asarray(weights, dtype=np.float64) - max(weights))
        spec["params"] = [
            *spec["params"],
            *map_live.live_params(weights, released[1], bind, live.scales_with_gamma, what),
        ]
        spec["transform"] = [*map_live.position_transforms(e / e.sum(), live.scales_with_gamma), *spec["transform"]]
    if live is not None and live.reach is not None:  # fixed axes: a frame of the weights alone, never of γ
        centre = live.reach[0]
        rx, ry = map_live.live_half_extent(live.reach, FLOOR, live.c.shape[0])
        xscale, yscale = square_scales(float(centre[0]), float(centre[1]), rx, ry)
    else:
        xscale, yscale = square_scales(*domains(coords, context_coords if has_context else None))
    spec["encoding"] = {
        "x": {**spec["encoding"]["x"], "scale": xscale},
        "y": {**spec["encoding"]["y"], "scale": yscale},
    }
    if title:
        text, params = title_text(title, font + 2)
        if params:  # the skeleton is shared: a new list, never an append to its own
            spec["params"] = [*spec.get("params", []), *params]
        spec["title"] = {
            "text": text,
            "anchor": "start",
            "fontSize": font + 2,
            "fontWeight": "normal",
            "offset": 10,
        }
        if live is not None:
            spec["title"].update(subtitle={"expr": "live_line"}, subtitleFontSize=font, subtitleColor="#555555")
    return MapChart(spec, table, tuple(names))


def frame_chart(
    frame,
    occurrences: Sequence[Occurrence],
    table,
    color_by: str,
    title: str = "",
    height: int = 520,
    font: int = FONT,
    bind: Sequence[str] | None = None,
) -> MapChart | None:
    """The contexts map of an ``app.explore.frame.Frame``; None when the frame has no map. ``title``: plain text.

    The occurrences are clustered (``frame.cluster_labels``) only when the map is coloured by cluster: the hover
    text names a point's cluster then, and only then. ``bind``: the sliders' CSS selectors (see ``contexts_chart``;
    None: the released map only, as in a file)."""
    if frame.coords is None:
        return None
    n = len(occurrences)
    context = frame.coords[n:] if len(frame.context_rows) else None
    clusters = frame.cluster_labels if color_by == "cluster" else None
    return contexts_chart(
        frame.coords[:n],
        occurrences,
        table.lines,
        color_by,
        selected=frame.query,
        context_coords=context,
        clusters=clusters,
        title=title,
        height=height,
        font=font,
        texts=texts_of(frame, occurrences, table),
        live=frame.live if bind is not None else None,
        released=(frame.controls.weights or (0.0,) * len(frame.s), frame.controls.gamma),
        bind=bind,
        what=METHOD_NAMES.get(frame.projection.method, frame.projection.method),
    )


def comparison_charts(
    sides, occurrences: Sequence[Occurrence], table, color_by: str, font: int = FONT
) -> list[MapChart | None]:
    """The contexts map of each side of ``app.explore.compare.compare`` (None for a side without a map), 420 px high. Each
    side clusters on its own, so "cluster" colours by label instead (the same colour then means the same on both)."""
    color_by = "label" if color_by == "cluster" else color_by
    return [
        frame_chart(
            side.frame,
            occurrences,
            table,
            color_by,
            height=420,
            font=font,
            title=vega(side.name) + (" (aligned to the left map)" if side.aligned else ""),
        )
        for side in sides
    ]


# The HTML export's page. The spec is written into its last script by ``app.render.safe.script_json`` (vl-convert's own
# page writes it unescaped: a label "</script><script>..." would end that script and run its own).
_PAGE_HEAD = (
    '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="UTF-8">\n<title>Contexts map</title>\n'
    "<style>#vega-chart{width:100%}</style>\n"
    '<script type="text/javascript">'
)
_PAGE_BODY = '</script>\n</head>\n<body>\n<div id="vega-chart"></div>\n<script type="text/javascript">\nvegaEmbed("#vega-chart", '
_PAGE_END = ', {"renderer": "svg"}).catch(console.error);\n</script>\n</body>\n</html>\n'
_SCRIPT_END = re.compile(r"</script|<!--", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (vl-convert's bundle; seconds to make, so made once)."""
    import vl_convert as vlc

    bundle = vlc.javascript_bundle()
    if _SCRIPT_END.search(bundle):  # would end or confuse the inline script it goes into
        raise RuntimeError("the Vega bundle cannot be written into an inline script")
    return bundle


def chart_html(chart: MapChart) -> bytes:
    """The chart as one HTML page with Vega, Vega-Lite and vega-embed inside (no network), for the Export tab: the
    self-contained spec (``MapChart.to_dict``) as ``app.render.safe.script_json`` writes it, so the page has two
    scripts, the bundle and the call that draws the chart, whatever the labels and sentences hold. Needs
    vl-convert-python (its JavaScript bundle); the first call in a process takes a few seconds."""
    page = _PAGE_HEAD + _bundle() + _PAGE_BODY + script_json(chart.to_dict()) + _PAGE_END
    return page.encode("utf-8")


def chart_png(chart: MapChart, scale: float = 2.0) -> bytes:
    """The chart as a PNG drawn on the server (vl-convert), title and legend included, at ``scale`` x."""
    import vl_convert as vlc

    spec = {**chart.to_dict(), "width": 760}  # a page-wide chart has no width of its own outside the page
    return vlc.vegalite_to_png(spec, scale=scale)

"""The contexts map as a Vega-Lite chart: data in, a ``MapChart`` (a plain Vega-Lite spec and its rows) out (no
Streamlit).

The explorer draws its contexts map with this (``st.vega_lite_chart(chart.data, chart.spec, ...)``): Streamlit's
Vega-Lite chunk is about a fifth of plotly.js, which a fresh session otherwise downloads and compiles before its
first map (docs/performance.md, "The contexts map's renderer"). One table holds every drawn point, one row each,
with a ``role``: the word's occurrences, the sentences' other words (grey) and the neighbours query (a ring over its
occurrence). A click on an occurrence selects the point-selection parameter ``PICK`` with the field ``idx`` (the
occurrence's index), which ``app.session.state.clicked_occurrence`` reads back. Text here is plain text: Vega draws titles
and legends as text and its tooltip escapes what it shows, so user text goes through ``app.render.safe.vega`` only (no
HTML entities).

A slider move redraws the map, so a move costs little here: the spec is a plain dict (no Altair chart object and
no schema validation), its layers, legend and selections built once per look (``_skeleton``: colours, legend
names, height, type size) and shared; the hover text of every point is made once per set of points
(``MapTexts``, kept per sentence table by ``frame_chart``); a move adds the coordinates, the title and the
scales' centre and extent. Each mark's description for screen readers (its ``aria-label``) is computed by Vega
from the row (a ``calculate`` transform), so it is not sent. PNG and HTML export (``chart_png``, ``chart_html``)
draw the same spec with its rows inline (``MapChart.to_dict``) through vl-convert.
"""
from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from app.explore.inputs import Line, Occurrence
from app.render.figures import GREY, MAX_LEGEND_SENTENCES, PALETTE, _label_of, cluster_of
from app.render.safe import vega

PICK = "pick"  # the point-selection parameter; its selection holds [{"idx": occurrence index}]
VIEW = "view"  # the pan and zoom of the map's scales (not sent to the server)
OCCURRENCE, OTHER, QUERY = "occurrence", "other words", "neighbours query"  # the rows' roles (legend names too)
OCCURRENCE_VIEW = "occurrences"  # the name of the occurrences' layer, which the selections listen to
NO_CLEAR_CLUSTERS = "no clear clusters"  # the legend when the map is coloured by cluster and this mix has none
FONT = 14  # px: legend, tooltip (``TOOLTIP_CSS``); the title is 2 px larger
TITLE_LINE = 90  # characters: a longer title breaks at its " · " separators
MAP_PAD_PX = 20  # the outermost points' distance from the plot's edge
HOVER_WINDOW = 20  # tokens either side of the word in the hover text
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"  # what Altair 6 writes; Streamlit's and vl-convert's
COLUMNS = ("x", "y", "role", "series", "idx", "line", "head", "text")  # the rows' columns, in order

# Streamlit styles Vega's tooltip at 0.75 rem (12 px) and cuts its values after 5 lines; the map's hover text is
# read from a projector: 15 px, a wider box, up to 8 lines. The page adds this once (``st.html``).
TOOLTIP_CSS = ("<style>#vg-tooltip-element{font-size:15px !important;max-width:34rem !important}"
               "#vg-tooltip-element h2{font-size:15px !important}"
               "#vg-tooltip-element td.value{max-width:26rem !important;-webkit-line-clamp:8 !important;"
               "line-clamp:8 !important}</style>")


def _number(field_name: str) -> str:
    """A Vega expression writing ``datum.<field_name>`` as Python's ``f"{v:.6f}"`` does (Vega's ``format`` writes
    a minus as U+2212, so the sign is written apart)."""
    return f"(datum.{field_name} < 0 ? '-' : '') + format(abs(datum.{field_name}), '.6f')"


# Each drawn mark's description for screen readers (its aria-label, as Vega-Lite's own names a point's
# coordinates): "series · head · x = .., y = ..", which the browser tests read. Computed by Vega from the row.
DESC = f"datum.series + ' · ' + datum.head + ' · x = ' + {_number('x')} + ', y = ' + {_number('y')}"


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


def hover_text(tokens: Sequence[str], position: int, window: int = HOVER_WINDOW) -> str:
    """The sentence around the token at ``position`` as plain text, the token marked «like this»."""
    lo, hi = max(0, position - window), min(len(tokens), position + window + 1)
    words = [vega(t) for t in tokens[lo:hi]]
    words[position - lo] = f"«{words[position - lo]}»"
    return ("… " if lo > 0 else "") + " ".join(words) + (" …" if hi < len(tokens) else "")


def _head(i: int, occ: Occurrence, clusters: Sequence[int] | None) -> str:
    parts = [f"#{i + 1}"] + ([vega(occ.label)] if occ.label else []) + [f"sentence {occ.line + 1}"]
    if clusters is not None and clusters[i] >= 0:
        parts.append(f"cluster {clusters[i] + 1}")
    return " · ".join(parts)


def _groups(occurrences: Sequence[Occurrence], color_by: str, clusters: Sequence[int] | None) -> dict[str, list[int]]:
    """Legend name -> occurrence indices, in legend order (as ``figures.small_multiples`` groups them). Coloured
    by cluster without clusters (this mix has no clear ones): one group, ``NO_CLEAR_CLUSTERS``."""
    if color_by == "cluster" and clusters is None:
        return {NO_CLEAR_CLUSTERS: list(range(len(occurrences)))} if len(occurrences) else {}
    groups: dict[str, list[int]] = {}
    for i, occ in enumerate(occurrences):
        groups.setdefault(vega(_label_of(occ, color_by, cluster_of(clusters, i))), []).append(i)
    if color_by == "cluster":  # cluster 1, 2, ... in order, whatever occurrence comes first
        groups = dict(sorted(groups.items(), key=lambda kv: (not kv[0].startswith("cluster "), len(kv[0]), kv[0])))
    return groups


@dataclass(frozen=True)
class _Colouring:
    """The occurrences' rows in legend order for one colouring: their order, legend names and hover titles."""

    order: np.ndarray  # int64 (n,): occurrence index per row
    series: list[str]
    heads: list[str]
    names: list[str]  # the legend's entries in order


@dataclass
class MapTexts:
    """The text of every drawn point, which does not change while the sliders move: made once per set of points
    (``map_texts``) and reused by every move's chart. ``occ_text``/``occ_line``: per occurrence, its hover
    sentence and its 1-based sentence number; ``ctx_*``: per other word, its hover title, sentence and number.
    The colourings (legend order, names, hover titles) are kept per colour-by and clusters."""

    occurrences: tuple[Occurrence, ...]
    occ_text: list[str]
    occ_line: list[int]
    ctx_head: list[str]
    ctx_text: list[str]
    ctx_line: list[int]
    _colourings: dict = field(default_factory=dict, repr=False)

    def colouring(self, color_by: str, clusters: Sequence[int] | None) -> _Colouring:
        key = (color_by, None if clusters is None else tuple(int(c) for c in clusters))
        found = self._colourings.get(key)
        if found is None:
            groups = _groups(self.occurrences, color_by, clusters)
            order = [i for idx in groups.values() for i in idx]
            series = [name for name, idx in groups.items() for _ in idx]
            heads = [_head(i, self.occurrences[i], clusters) for i in order]
            found = _Colouring(np.asarray(order, dtype=np.int64), series, heads, list(groups))
            if len(self._colourings) >= 16:  # colour by cluster: one per split the sliders passed through
                self._colourings.clear()
            self._colourings[key] = found
        return found


def map_texts(occurrences: Sequence[Occurrence], lines: Sequence[Line],
              context_rows: Sequence[tuple[int, int]] = ()) -> MapTexts:
    """The hover text of the occurrences and of the other words at ``context_rows`` ((line, position) each)."""
    ctx = [(int(li), int(pos)) for li, pos in context_rows]
    return MapTexts(tuple(occurrences),
                    [hover_text(lines[o.line].tokens, o.position) for o in occurrences],
                    [o.line + 1 for o in occurrences],
                    [f"“{vega(lines[li].tokens[pos])}” · sentence {li + 1}" for li, pos in ctx],
                    [hover_text(lines[li].tokens, pos) for li, pos in ctx],
                    [li + 1 for li, _ in ctx])


def _table(coords: np.ndarray, texts: MapTexts, color_by: str, selected: int | None,
           context_coords: np.ndarray | None, clusters: Sequence[int] | None) -> tuple[pa.Table, list[str]]:
    """The map's rows (``COLUMNS``) and its legend's names in order.

    Occurrence rows come first, one per occurrence in legend order; then the other words (``idx`` -1) and the
    query's ring (a copy of its occurrence's row). ``series`` is the legend name ("other words" for the grey ones);
    ``line`` the 1-based sentence number (the colour when there are too many sentences for a legend); ``head`` and
    ``text`` the hover text."""
    n = len(texts.occurrences)
    c = texts.colouring(color_by, clusters)
    coords = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    xs, ys = [coords[c.order, 0]], [coords[c.order, 1]]
    role, series, idx = [OCCURRENCE] * n, list(c.series), c.order.tolist()
    line = [texts.occ_line[i] for i in idx]
    head, text = list(c.heads), [texts.occ_text[i] for i in idx]
    m = 0 if context_coords is None else len(context_coords)
    if m:
        if m != len(texts.ctx_text):
            raise ValueError(f"{m} other words' coordinates but {len(texts.ctx_text)} other words")
        ctx = np.asarray(context_coords, dtype=np.float64).reshape(-1, 2)
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
        xs.append(coords[selected:selected + 1, 0])
        ys.append(coords[selected:selected + 1, 1])
        role.append(QUERY)
        series.append(QUERY)
        idx.append(int(selected))
        line.append(occ.line + 1)
        head.append(f"#{selected + 1} · sentence {occ.line + 1}")
        text.append("")
    table = pa.table({"x": pa.array(np.concatenate(xs), pa.float64()), "y": pa.array(np.concatenate(ys), pa.float64()),
                      "role": pa.array(role, pa.string()), "series": pa.array(series, pa.string()),
                      "idx": pa.array(idx, pa.int64()), "line": pa.array(line, pa.int64()),
                      "head": pa.array(head, pa.string()), "text": pa.array(text, pa.string())})
    return table, c.names


def map_rows(coords: np.ndarray, occurrences: Sequence[Occurrence], lines: Sequence[Line], color_by: str = "label",
             selected: int | None = None, context_coords: np.ndarray | None = None,
             context_rows: Sequence[tuple[int, int]] = (), clusters: Sequence[int] | None = None):
    """The map's rows as a pandas DataFrame (columns ``COLUMNS``) and its legend's names in order: what
    ``contexts_chart`` sends (see ``_table``)."""
    table, names = _table(coords, map_texts(occurrences, lines, context_rows if context_coords is not None else ()),
                          color_by, selected, context_coords, clusters)
    return table.to_pandas(), names


def _domains(coords: np.ndarray, context_coords: np.ndarray | None) -> tuple[float, float, float, float]:
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


def _square_scales(cx: float, cy: float, rx: float, ry: float) -> tuple[dict, dict]:
    """x and y scales with one unit per pixel on both axes, whatever width the page gives the chart (the plotly
    map's ``scaleanchor``): the domains are Vega expressions of the chart's width and height signals around the
    points' centre, every point ``MAP_PAD_PX`` inside the plot's edge."""
    pad = MAP_PAD_PX
    # data units per pixel: every point at least ``pad`` px inside the plot (the query's ring reaches 14 px out)
    u = f"max({rx!r} / max(width / 2 - {pad}, 1), {ry!r} / max(height / 2 - {pad}, 1))"
    x = {"domainMin": {"expr": f"{cx!r} - {u} * width / 2"}, "domainMax": {"expr": f"{cx!r} + {u} * width / 2"},
         "nice": False, "zero": False}
    y = {"domainMin": {"expr": f"{cy!r} - {u} * height / 2"}, "domainMax": {"expr": f"{cy!r} + {u} * height / 2"},
         "nice": False, "zero": False}
    return x, y


def _title_lines(title: str) -> list[str] | str:
    """The title on one line, or broken at its " · " separators into lines of at most ``TITLE_LINE`` characters."""
    if len(title) <= TITLE_LINE:
        return title
    lines, line = [], ""
    for part in title.split(" · "):
        if line and len(line) + 3 + len(part) > TITLE_LINE:
            lines.append(line + " ·")
            line = part
        else:
            line = f"{line} · {part}" if line else part
    return lines + [line]


@functools.lru_cache(maxsize=256)
def _skeleton(names: tuple[str, ...], many: bool, has_other: bool, has_query: bool, height: int, font: int) -> dict:
    """Everything of the spec that a slider move leaves as it is: the layers (grey other words, the occurrences,
    the query's ring), colours, legend, tooltips, selections, height and type. Shared: never changed in place."""
    axis = {"domain": False, "grid": True, "gridColor": "#eeeeee", "labels": False, "ticks": False, "title": None}
    legend = {"columnPadding": 14, "direction": "horizontal", "labelFontSize": font, "labelLimit": 320,
              "orient": "bottom", "symbolSize": 140, "titleFontSize": font}
    tooltip = [{"field": "head", "title": "title", "type": "nominal"},
               {"field": "text", "title": "sentence", "type": "nominal"}]
    desc = {"field": "desc", "type": "nominal"}
    layers = []
    if has_other:
        grey = {"mark": {"type": "circle", "opacity": 1, "size": 30},
                "encoding": {"description": desc, "tooltip": tooltip},
                "transform": [{"filter": f"(datum.role === '{OTHER}')"}]}
        if many:
            grey["mark"]["color"] = GREY
        else:
            grey["encoding"]["color"] = {"field": "series", "legend": None, "type": "nominal"}
        layers.append(grey)
    if many:
        color = {"field": "line", "legend": {"gradientLength": 260, **legend, "title": "sentence"},
                 "scale": {"scheme": "turbo"}, "type": "quantitative"}
    else:
        domain = list(names) + ([OTHER] if has_other else [])
        palette = [PALETTE[g % len(PALETTE)] for g in range(len(names))] + ([GREY] if has_other else [])
        color = {"field": "series", "legend": {**legend, "title": None}, "scale": {"domain": domain, "range": palette},
                 "type": "nominal"}
    layers.append({"mark": {"type": "circle", "cursor": "pointer", "opacity": 1, "size": 150, "stroke": "white",
                            "strokeWidth": 1},
                   "encoding": {"color": color, "description": desc, "tooltip": tooltip},
                   "name": OCCURRENCE_VIEW,
                   "transform": [{"filter": f"(datum.role === '{OCCURRENCE}')"}]})
    if has_query:
        layers.append({"mark": {"type": "point", "color": "black", "filled": False, "opacity": 1, "shape": "circle",
                                "size": 560, "strokeWidth": 2.5},
                       "encoding": {"description": desc,
                                    "shape": {"field": "role", "type": "nominal",
                                              "legend": {**legend, "symbolFillColor": "transparent",
                                                         "symbolStrokeColor": "black", "symbolStrokeWidth": 2,
                                                         "title": None},
                                              "scale": {"domain": [QUERY], "range": ["circle"]}}},
                       "transform": [{"filter": f"(datum.role === '{QUERY}')"}]})
    params = [
        # a click on an occurrence selects its index: the page reads it back as the neighbours query
        {"name": PICK, "select": {"type": "point", "clear": False, "fields": ["idx"], "on": "click", "toggle": False},
         "views": [OCCURRENCE_VIEW]},
        # drag to pan, shift + wheel to zoom (a plain wheel scrolls the page), double-click to go back
        {"name": VIEW, "select": {"type": "interval", "zoom": "wheel![event.shiftKey]"}, "bind": "scales",
         "views": [OCCURRENCE_VIEW]},
    ]
    return {
        "$schema": SCHEMA,
        "config": {"view": {"continuousWidth": 300, "continuousHeight": 300, "stroke": "#dddddd"},
                   "legend": {"labelFontSize": font, "titleFontSize": font}, "title": {"fontSize": font + 2}},
        "transform": [{"calculate": DESC, "as": "desc"}],
        "encoding": {"x": {"axis": axis, "field": "x", "type": "quantitative"},
                     "y": {"axis": axis, "field": "y", "type": "quantitative"}},
        "layer": layers,
        "params": params,
        "resolve": {"legend": {"color": "independent", "shape": "independent"}},
        "height": height,
        "width": "container",
    }


def contexts_chart(coords: np.ndarray, occurrences: Sequence[Occurrence], lines: Sequence[Line],
                   color_by: str = "label", selected: int | None = None, context_coords: np.ndarray | None = None,
                   context_rows: Sequence[tuple[int, int]] = (), title: str = "",
                   clusters: Sequence[int] | None = None, height: int = 520, font: int = FONT,
                   texts: MapTexts | None = None) -> MapChart:
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
    A click on an occurrence selects ``PICK`` = [{"idx": its index}].
    """
    has_context = context_coords is not None and len(context_coords) > 0
    if texts is None:
        texts = map_texts(occurrences, lines, context_rows if has_context else ())
    table, names = _table(coords, texts, color_by, selected, context_coords if has_context else None, clusters)
    many = color_by == "sentence" and len(names) > MAX_LEGEND_SENTENCES
    has_query = selected is not None and 0 <= selected < len(texts.occurrences)
    spec = dict(_skeleton(tuple(names), many, has_context, has_query, int(height), int(font)))
    xscale, yscale = _square_scales(*_domains(coords, context_coords if has_context else None))
    spec["encoding"] = {"x": {**spec["encoding"]["x"], "scale": xscale}, "y": {**spec["encoding"]["y"], "scale": yscale}}
    if title:
        spec["title"] = {"text": _title_lines(title), "anchor": "start", "fontSize": font + 2, "fontWeight": "normal",
                         "offset": 10}
    return MapChart(spec, table, tuple(names))


# ---- the page's maps: hover text kept per sentence table while the sliders move ---------------------------------
_TEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # TokenTable -> {(occurrences, rows): MapTexts}
_TEXTS_LOCK = threading.Lock()
_TEXTS_PER_TABLE = 4  # sets of points kept per table (context words on and off, another word)


def _context_positions(frame, table) -> list[tuple[int, int]]:
    rows = np.asarray(frame.context_rows, dtype=np.int64)
    lines = table.line_of_row[rows]
    return list(zip(lines.tolist(), (rows - table.offsets[lines]).tolist()))


def _texts_of(frame, occurrences: Sequence[Occurrence], table) -> MapTexts:
    """The hover text of the frame's points, made once per table, occurrences and other words."""
    key = (tuple(occurrences), np.asarray(frame.context_rows, dtype=np.int64).tobytes())
    with _TEXTS_LOCK:
        kept = _TEXTS.get(table)
        found = kept.get(key) if kept is not None else None
    if found is not None:
        return found
    found = map_texts(occurrences, table.lines, _context_positions(frame, table))
    with _TEXTS_LOCK:
        kept = _TEXTS.setdefault(table, {})
        if len(kept) >= _TEXTS_PER_TABLE:
            kept.pop(next(iter(kept)))
        kept[key] = found
    return found


def frame_chart(frame, occurrences: Sequence[Occurrence], table, color_by: str, title: str = "", height: int = 520,
                font: int = FONT) -> MapChart | None:
    """The contexts map of an ``app.explore.frame.Frame``; None when the frame has no map. ``title``: plain text.

    The occurrences are clustered (``frame.cluster_labels``) only when the map is coloured by cluster: the hover
    text names a point's cluster then, and only then."""
    if frame.coords is None:
        return None
    n = len(occurrences)
    context = frame.coords[n:] if len(frame.context_rows) else None
    clusters = frame.cluster_labels if color_by == "cluster" else None
    return contexts_chart(frame.coords[:n], occurrences, table.lines, color_by, selected=frame.query,
                          context_coords=context, clusters=clusters, title=title, height=height, font=font,
                          texts=_texts_of(frame, occurrences, table))


def comparison_charts(sides, occurrences: Sequence[Occurrence], table, color_by: str,
                      font: int = FONT) -> list[MapChart | None]:
    """The contexts map of each side of ``app.explore.compare.compare`` (None for a side without a map), 420 px high. Each
    side clusters on its own, so "cluster" colours by label instead (the same colour then means the same on both)."""
    color_by = "label" if color_by == "cluster" else color_by
    return [frame_chart(side.frame, occurrences, table, color_by, height=420, font=font,
                        title=vega(side.name) + (" (aligned to the left map)" if side.aligned else ""))
            for side in sides]


def chart_html(chart: MapChart) -> bytes:
    """The chart as one HTML page with Vega, Vega-Lite and vega-embed inside (no network), for the Export tab.
    Needs vl-convert-python (its JavaScript bundles); the first call in a process takes a few seconds."""
    import vl_convert as vlc
    return vlc.vegalite_to_html(chart.to_dict(), bundle=True).encode("utf-8")


def chart_png(chart: MapChart, scale: float = 2.0) -> bytes:
    """The chart as a PNG drawn on the server (vl-convert), title and legend included, at ``scale`` x."""
    import vl_convert as vlc
    spec = {**chart.to_dict(), "width": 760}  # a page-wide chart has no width of its own outside the page
    return vlc.vegalite_to_png(spec, scale=scale)

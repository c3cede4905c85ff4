"""The contexts map as a Vega-Lite chart (Altair): data in, an ``alt.LayerChart`` out (no Streamlit).

The explorer draws its contexts map with this (``st.altair_chart``): Streamlit's Vega-Lite chunk is about a fifth of
plotly.js, which a fresh session otherwise downloads and compiles before its first map (docs/performance.md, "The
contexts map's renderer"). One table holds every drawn point, one row each, with a ``role``: the word's
occurrences, the sentences' other words (grey) and the neighbours query (a ring over its occurrence). A click on an
occurrence selects the point-selection parameter ``PICK`` with the field ``idx`` (the occurrence's index), which
``app.state.clicked_occurrence`` reads back. Text here is plain text: Vega draws titles and legends as text and its
tooltip escapes what it shows, so user text goes through ``app.safe.vega`` only (no HTML entities).
"""
from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from app.inputs import Line, Occurrence
from app.figures import GREY, MAX_LEGEND_SENTENCES, PALETTE, _label_of, cluster_of
from app.safe import vega

PICK = "pick"  # the point-selection parameter; its selection holds [{"idx": occurrence index}]
VIEW = "view"  # the pan and zoom of the map's scales (not sent to the server)
OCCURRENCE, OTHER, QUERY = "occurrence", "other words", "neighbours query"  # the rows' roles (legend names too)
FONT = 14  # px: legend, tooltip (``TOOLTIP_CSS``); the title is 2 px larger
TITLE_LINE = 90  # characters: a longer title breaks at its " · " separators
MAP_PAD_PX = 20  # the outermost points' distance from the plot's edge
HOVER_WINDOW = 20  # tokens either side of the word in the hover text

# Streamlit styles Vega's tooltip at 0.75 rem (12 px) and cuts its values after 5 lines; the map's hover text is
# read from a projector: 15 px, a wider box, up to 8 lines. The page adds this once (``st.html``).
TOOLTIP_CSS = ("<style>#vg-tooltip-element{font-size:15px !important;max-width:34rem !important}"
               "#vg-tooltip-element h2{font-size:15px !important}"
               "#vg-tooltip-element td.value{max-width:26rem !important;-webkit-line-clamp:8 !important;"
               "line-clamp:8 !important}</style>")


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
    """Legend name -> occurrence indices, in legend order (as ``figures.small_multiples`` groups them)."""
    groups: dict[str, list[int]] = {}
    for i, occ in enumerate(occurrences):
        groups.setdefault(vega(_label_of(occ, color_by, cluster_of(clusters, i))), []).append(i)
    if color_by == "cluster":  # cluster 1, 2, ... in order, whatever occurrence comes first
        groups = dict(sorted(groups.items(), key=lambda kv: (not kv[0].startswith("cluster "), len(kv[0]), kv[0])))
    return groups


def map_rows(coords: np.ndarray, occurrences: Sequence[Occurrence], lines: Sequence[Line], color_by: str = "label",
             selected: int | None = None, context_coords: np.ndarray | None = None,
             context_rows: Sequence[tuple[int, int]] = (), clusters: Sequence[int] | None = None
             ) -> tuple[pd.DataFrame, list[str]]:
    """The map's table (columns x, y, role, series, idx, line, head, text, desc) and its legend's names in order.

    Occurrence rows come first, one per occurrence in legend order; then the other words (``idx`` -1) and the
    query's ring (a copy of its occurrence's row). ``series`` is the legend name ("other words" for the grey ones);
    ``line`` the 1-based sentence number (the colour when there are too many sentences for a legend); ``head`` and
    ``text`` the hover text; ``desc`` each drawn mark's description for screen readers (its ``aria-label``, as
    Vega-Lite's own names a point's coordinates): "series · head · x = .., y = ..", which the browser tests read."""
    if color_by == "cluster" and clusters is None:
        color_by = "label"
    groups = _groups(occurrences, color_by, clusters)
    rows = []
    for name, idx in groups.items():
        for i in idx:
            occ = occurrences[i]
            rows.append((float(coords[i, 0]), float(coords[i, 1]), OCCURRENCE, name, i, occ.line + 1,
                         _head(i, occ, clusters), hover_text(lines[occ.line].tokens, occ.position)))
    if context_coords is not None and len(context_coords):
        for (x, y), (li, pos) in zip(np.asarray(context_coords, dtype=float), context_rows):
            rows.append((float(x), float(y), OTHER, OTHER, -1, li + 1,
                         f"“{vega(lines[li].tokens[pos])}” · sentence {li + 1}", hover_text(lines[li].tokens, pos)))
    if selected is not None and 0 <= selected < len(occurrences):
        occ = occurrences[selected]
        rows.append((float(coords[selected, 0]), float(coords[selected, 1]), QUERY, QUERY, selected, occ.line + 1,
                     f"#{selected + 1} · sentence {occ.line + 1}", ""))
    rows = [row + (f"{row[3]} · {row[6]} · x = {row[0]:.6f}, y = {row[1]:.6f}",) for row in rows]
    frame = pd.DataFrame(rows, columns=["x", "y", "role", "series", "idx", "line", "head", "text", "desc"])
    return frame, list(groups)


def _square_domains(frame: pd.DataFrame) -> tuple[alt.Scale, alt.Scale]:
    """x and y scales with one unit per pixel on both axes, whatever width the page gives the chart (the plotly
    map's ``scaleanchor``): the domains are Vega expressions of the chart's width and height signals around the
    points' centre, every point ``MAP_PAD_PX`` inside the plot's edge."""
    xs, ys = frame["x"].to_numpy(float), frame["y"].to_numpy(float)
    finite = np.isfinite(xs) & np.isfinite(ys)
    if not finite.any():
        xs, ys = np.zeros(1), np.zeros(1)
    else:
        xs, ys = xs[finite], ys[finite]
    cx, cy = float(xs.max() + xs.min()) / 2, float(ys.max() + ys.min()) / 2
    rx, ry = float(xs.max() - xs.min()) / 2, float(ys.max() - ys.min()) / 2
    if max(rx, ry) == 0:  # one spot (layer 0 only): a unit square around it
        rx = ry = 1.0
    pad = MAP_PAD_PX
    # data units per pixel: every point at least ``pad`` px inside the plot (the query's ring reaches 14 px out)
    u = f"max({rx!r} / max(width / 2 - {pad}, 1), {ry!r} / max(height / 2 - {pad}, 1))"
    x = alt.Scale(domainMin=alt.ExprRef(f"{cx!r} - {u} * width / 2"), domainMax=alt.ExprRef(f"{cx!r} + {u} * width / 2"),
                  nice=False, zero=False)
    y = alt.Scale(domainMin=alt.ExprRef(f"{cy!r} - {u} * height / 2"),
                  domainMax=alt.ExprRef(f"{cy!r} + {u} * height / 2"), nice=False, zero=False)
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


def contexts_chart(coords: np.ndarray, occurrences: Sequence[Occurrence], lines: Sequence[Line],
                   color_by: str = "label", selected: int | None = None, context_coords: np.ndarray | None = None,
                   context_rows: Sequence[tuple[int, int]] = (), title: str = "",
                   clusters: Sequence[int] | None = None, height: int = 520, font: int = FONT) -> alt.LayerChart:
    """The contexts map: the target word's occurrences coloured by sense label (or sentence, spelling, cluster),
    the other words in grey, the neighbours query ringed; a legend under the plot, the title above it.

    Args:
        coords: (n, 2) map coordinates of the occurrences.
        selected: index of the occurrence used as the neighbours query (drawn with a ring).
        context_coords: (m, 2) coordinates of the other tokens; ``context_rows`` holds their (line, position).
        title: plain text (``app.safe.vega``); long titles break into lines.
        clusters: (n,) cluster number per occurrence (-1: none), for ``color_by="cluster"``.
        height: the chart's height in px (its width is the page's).
        font: legend and axis type in px (the title 2 px larger); presentation mode passes a larger one.
    A click on an occurrence selects ``PICK`` = [{"idx": its index}].
    """
    frame, names = map_rows(coords, occurrences, lines, color_by, selected, context_coords, context_rows, clusters)
    many = color_by == "sentence" and len(names) > MAX_LEGEND_SENTENCES
    has_other = bool((frame["role"] == OTHER).any())
    xscale, yscale = _square_domains(frame)
    axis = alt.Axis(labels=False, ticks=False, domain=False, title=None, grid=True, gridColor="#eeeeee")
    x, y = alt.X("x:Q", scale=xscale, axis=axis), alt.Y("y:Q", scale=yscale, axis=axis)
    legend = dict(orient="bottom", direction="horizontal", labelFontSize=font, titleFontSize=font,
                  labelLimit=320, symbolSize=140, columnPadding=14)
    tooltip = [alt.Tooltip("head:N", title="title"), alt.Tooltip("text:N", title="sentence")]
    desc = alt.Description("desc:N")
    base = alt.Chart(frame).encode(x=x, y=y)
    layers = []
    if has_other:
        grey = base.transform_filter(alt.datum.role == OTHER)
        if many:
            layers.append(grey.mark_circle(size=30, color=GREY, opacity=1).encode(tooltip=tooltip, description=desc))
        else:
            layers.append(grey.mark_circle(size=30, opacity=1).encode(
                color=alt.Color("series:N", legend=None), tooltip=tooltip, description=desc))
    if many:
        color = alt.Color("line:Q", scale=alt.Scale(scheme="turbo"),
                          legend=alt.Legend(title="sentence", gradientLength=260, **legend))
    else:
        domain = names + ([OTHER] if has_other else [])
        palette = [PALETTE[g % len(PALETTE)] for g in range(len(names))] + ([GREY] if has_other else [])
        color = alt.Color("series:N", scale=alt.Scale(domain=domain, range=palette),
                          legend=alt.Legend(title=None, **legend))
    pick = alt.selection_point(name=PICK, fields=["idx"], on="click", clear=False, toggle=False)
    # drag to pan, shift + wheel to zoom (a plain wheel scrolls the page), double-click to go back
    view = alt.selection_interval(name=VIEW, bind="scales", zoom="wheel![event.shiftKey]")
    layers.append(base.transform_filter(alt.datum.role == OCCURRENCE).mark_circle(
        size=150, opacity=1, stroke="white", strokeWidth=1, cursor="pointer").encode(
        color=color, tooltip=tooltip, description=desc).add_params(pick, view))
    if (frame["role"] == QUERY).any():
        layers.append(base.transform_filter(alt.datum.role == QUERY).mark_point(
            shape="circle", filled=False, size=560, strokeWidth=2.5, color="black", opacity=1).encode(
            description=desc,
            shape=alt.Shape("role:N", scale=alt.Scale(domain=[QUERY], range=["circle"]),
                            legend=alt.Legend(title=None, symbolFillColor="transparent", symbolStrokeColor="black",
                                              symbolStrokeWidth=2, **legend))))
    chart = alt.layer(*layers).properties(height=height, width="container")
    if title:
        chart = chart.properties(title=alt.TitleParams(_title_lines(title), anchor="start", fontSize=font + 2,
                                                       fontWeight="normal", offset=10))
    return (chart.resolve_legend(color="independent", shape="independent")
            .configure_view(stroke="#dddddd")
            .configure_legend(labelFontSize=font, titleFontSize=font)
            .configure_title(fontSize=font + 2))


def frame_chart(frame, occurrences: Sequence[Occurrence], table, color_by: str, title: str = "", height: int = 520,
                font: int = FONT) -> alt.LayerChart | None:
    """The contexts map of an ``app.frame.Frame``; None when the frame has no map. ``title``: plain text."""
    if frame.coords is None:
        return None
    n = len(occurrences)
    context = frame.coords[n:] if len(frame.context_rows) else None
    context_pos = [(int(table.line_of_row[r]), int(r - table.offsets[table.line_of_row[r]])) for r in frame.context_rows]
    clusters = frame.cluster_labels  # None when there are no clear clusters: no "cluster" in the hover text
    return contexts_chart(frame.coords[:n], occurrences, table.lines, color_by, selected=frame.query,
                          context_coords=context, context_rows=context_pos, clusters=clusters, title=title,
                          height=height, font=font)


def comparison_charts(sides, occurrences: Sequence[Occurrence], table, color_by: str,
                      font: int = FONT) -> list[alt.LayerChart | None]:
    """The contexts map of each side of ``app.compare.compare`` (None for a side without a map), 420 px high. Each
    side clusters on its own, so "cluster" colours by label instead (the same colour then means the same on both)."""
    color_by = "label" if color_by == "cluster" else color_by
    return [frame_chart(side.frame, occurrences, table, color_by, height=420, font=font,
                        title=vega(side.name) + (" (aligned to the left map)" if side.aligned else ""))
            for side in sides]


def chart_html(chart: alt.TopLevelMixin) -> bytes:
    """The chart as one HTML page with Vega, Vega-Lite and vega-embed inside (no network), for the Export tab.
    Needs vl-convert-python (its JavaScript bundles); the first call in a process takes a few seconds."""
    return chart.to_html(inline=True).encode("utf-8")


def chart_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """The chart as a PNG drawn on the server (vl-convert), title and legend included, at ``scale`` x."""
    import vl_convert as vlc
    spec = chart.properties(width=760).to_dict()  # a page-wide chart has no width of its own outside the page
    return vlc.vegalite_to_png(spec, scale=scale)

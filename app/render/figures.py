"""Plotly figure builders for the explorer. Pure functions: data in, ``go.Figure`` out (no Streamlit)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from app.explore.inputs import Line, Occurrence
from app.explore.neighbours import Separation
from app.render.hover import hover_head, hover_text
from app.render.safe import plot

PALETTE = qualitative.D3 + qualitative.Set2
MAX_LEGEND_SENTENCES = 20  # colour by sentence with a legend up to this many sentences, else a colour scale
GREY = "rgba(150, 150, 150, 0.45)"
MAX_HEATMAP_TICKS = 40  # the similarity heatmaps name their rows up to this many occurrences
HEATMAP_ROW_PX = 18  # room per named row: the 14-px labels do not touch
READABLE_FONT = 14  # px, the least for chart text a class reads off a projector: labels, values, hover text


def _label_of(occ: Occurrence, by: str, cluster: int | None = None) -> str:
    """The legend group of an occurrence: its sense label, its sentence, its spelling as written or its
    cluster (``cluster``: 0-based, -1 for none)."""
    if by == "cluster":
        return f"cluster {cluster + 1}" if cluster is not None and cluster >= 0 else "no cluster (zero vector)"
    if by == "spelling":
        return occ.token
    return (occ.label or "(no label)") if by == "label" else f"sentence {occ.line + 1}"


def cluster_of(clusters: Sequence[int] | None, i: int) -> int | None:
    return None if clusters is None else int(clusters[i])


def cluster_colour(cluster: int) -> str:
    """The colour of sense cluster ``cluster`` (0-based) in the Senses tab's list; grey for no cluster (-1)."""
    return PALETTE[cluster % len(PALETTE)] if cluster >= 0 else GREY


def similarity_heatmaps(panels: Sequence[tuple[str, np.ndarray]], tick_labels: Sequence[str]) -> go.Figure:
    """Side-by-side cosine similarity matrices (one per layer and the mix) on one shared colour scale.

    The scale runs from the smallest value in any panel to 1, so panels are comparable.
    """
    k = len(panels)
    # the panel titles on two lines ("layer 2<br>(biLSTM, top)"): four fit side by side at 14 px
    fig = make_subplots(
        rows=1, cols=k, subplot_titles=[plot(t).replace(" (", "<br>(", 1) for t, _ in panels], horizontal_spacing=0.02
    )
    zmin = min(float(np.min(m)) for _, m in panels) if panels else 0.0
    zmin = min(zmin, 0.99)
    rows = len(tick_labels)
    show_ticks = rows <= MAX_HEATMAP_TICKS
    ticks = [plot(t) for t in tick_labels]  # unique labels ("river #3"), used as categorical axis values
    for c, (title, m) in enumerate(panels, start=1):
        fig.add_trace(
            go.Heatmap(
                z=np.asarray(m, dtype=np.float32),
                x=ticks,
                y=ticks,
                zmin=zmin,
                zmax=1.0,
                colorscale="Viridis",
                showscale=c == k,
                colorbar=dict(
                    title=dict(text="cos", side="right", font=dict(size=READABLE_FONT)),
                    len=0.9,
                    thickness=14,
                    tickfont=dict(size=READABLE_FONT),
                ),
                hovertemplate="%{y}<br>vs %{x}<br>cos = %{z:.3f}<extra>" + plot(title) + "</extra>",
            ),
            row=1,
            col=c,
        )
        # every row named (plotly thins category labels that it thinks too close); the panels are not kept
        # square, so their height, not the page width, gives each row its HEATMAP_ROW_PX
        fig.update_yaxes(
            autorange="reversed",
            row=1,
            col=c,
            showticklabels=show_ticks and c == 1,
            tickfont=dict(size=READABLE_FONT),
            type="category",
            tickmode="array",
            tickvals=ticks,
            ticks="",
            showgrid=False,
        )
        fig.update_xaxes(showticklabels=False, row=1, col=c, type="category", ticks="", showgrid=False)
    plot_px = HEATMAP_ROW_PX * rows if show_ticks else 240
    fig.update_layout(
        height=max(280, min(640, plot_px + 90)),
        margin=dict(l=10, r=10, t=80, b=10),
        font=dict(size=READABLE_FONT),
        hoverlabel=dict(font_size=READABLE_FONT),
    )
    fig.update_annotations(font_size=READABLE_FONT)
    return fig


def _bar_values(values: Sequence[float | None]) -> dict:
    """A score bar trace's values and labels: each value inside its bar's top end, above a bar too short to hold
    it (a silhouette of 0.00 would otherwise show nothing), and "n/a" at 0 where there is no score."""
    return dict(
        y=[0.0 if v is None else v for v in values],
        text=["n/a" if v is None else f"{v:.2f}" for v in values],
        texttemplate="%{text}",
        textposition=["outside" if v is None or abs(v) < 0.15 else "inside" for v in values],
        insidetextanchor="end",
        cliponaxis=False,
        textangle=0,
        textfont=dict(size=READABLE_FONT),
        hovertemplate="%{x}: %{text}<extra>%{fullData.name}</extra>",
    )


def separation_chart(names: Sequence[str], scores: Sequence[Separation]) -> go.Figure:
    """Bars per layer (and the mix): 1-NN accuracy when labels exist, with chance level, plus silhouette.
    Each value inside its bar's top end (above the bar when the bar is too short); the chance line passes
    behind the bars and is labelled right of the plot, so it crosses no value and covers no bar."""
    fig = go.Figure()
    has_knn = any(s.knn_accuracy is not None for s in scores)
    x = [plot(n) for n in names]
    if has_knn:
        fig.add_trace(
            go.Bar(
                x=x,
                name="1-NN accuracy (leave-one-out)",
                marker_color=PALETTE[0],
                **_bar_values([s.knn_accuracy for s in scores]),
            )
        )
    fig.add_trace(
        go.Bar(x=x, name="silhouette (cosine)", marker_color=PALETTE[1], **_bar_values([s.silhouette for s in scores]))
    )
    chance = next((s.chance for s in scores if s.chance is not None), None)
    if chance is not None:
        fig.add_hline(y=chance, line_dash="dot", line_color="grey", layer="below")
        fig.add_annotation(
            x=1.0,
            xref="paper",
            xanchor="left",
            y=chance,
            yref="y",
            showarrow=False,
            text=f"1-NN<br>chance {chance:.2f}",
            align="left",
            font=dict(size=READABLE_FONT, color="grey"),
        )
    fig.update_layout(
        barmode="group",
        height=320,
        margin=dict(l=10, r=90 if chance is not None else 10, t=30, b=10),
        # each size named: Streamlit's chart theme sets the legend's and the ticks' own (12 px)
        font=dict(size=READABLE_FONT),
        hoverlabel=dict(font_size=READABLE_FONT),
        uniformtext=dict(minsize=READABLE_FONT, mode="show"),
        xaxis=dict(tickfont=dict(size=READABLE_FONT)),
        yaxis=dict(
            range=[min(0.0, *(s.silhouette or 0 for s in scores)) - 0.12, 1.12], tickfont=dict(size=READABLE_FONT)
        ),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, font=dict(size=READABLE_FONT)),
    )
    return fig


# ---- the explorer's figures of one frame (the page and the speed benchmark draw the same; the contexts map is
# app.render.map_chart's Vega-Lite chart) ----------------------------------------------------------------------------------
def small_multiples(
    maps,
    occurrences: Sequence[Occurrence],
    lines: Sequence[Line],
    color_by: str = "label",
    clusters: Sequence[int] | None = None,
    title: str = "",
) -> go.Figure:
    """One panel per layer and the mix (``app.explore.layer_maps.LayerMaps``), side by side on shared axes (the panels are
    aligned to the mix's layout, so equal positions mean the same place). Colours as in the contexts map,
    one legend for all panels."""
    k = len(maps.names)
    titles = [
        plot(name) + (f"<br><sup>{plot(note)}</sup>" if note else "") for name, note in zip(maps.names, maps.notes)
    ]
    fig = make_subplots(
        rows=1, cols=k, subplot_titles=titles, horizontal_spacing=0.015, shared_xaxes="all", shared_yaxes="all"
    )
    if color_by == "cluster" and clusters is None:
        color_by = "label"
    groups: dict[str, list[int]] = {}
    for i, occ in enumerate(occurrences):
        groups.setdefault(_label_of(occ, color_by, cluster_of(clusters, i)), []).append(i)
    many = len(groups) > MAX_LEGEND_SENTENCES
    for c, coords in enumerate(maps.coords, start=1):
        for g, (name, idx) in enumerate(groups.items()):
            marker = dict(size=8, line=dict(width=0.5, color="white"))
            if many:
                marker.update(color=[occurrences[i].line for i in idx], colorscale="Turbo")
            else:
                marker.update(color=PALETTE[g % len(PALETTE)])
            fig.add_trace(
                go.Scatter(
                    x=coords[idx, 0],
                    y=coords[idx, 1],
                    mode="markers",
                    name=plot(name if not many else "occurrences"),
                    legendgroup=name,
                    showlegend=c == 1 and not (many and g),
                    marker=marker,
                    customdata=[[i] for i in idx],
                    text=[
                        hover_head(i, occurrences[i], clusters, "plotly")
                        + "<br>"
                        + hover_text(lines[occurrences[i].line].tokens, occurrences[i].position, 25, "plotly")
                        for i in idx
                    ],
                    hovertemplate="%{text}<extra>" + plot(maps.names[c - 1]) + "</extra>",
                ),
                row=1,
                col=c,
            )
    fig.update_xaxes(showticklabels=False, showgrid=True, gridcolor="#eee", zeroline=False)
    fig.update_yaxes(showticklabels=False, showgrid=True, gridcolor="#eee", zeroline=False)
    fig.update_annotations(font_size=READABLE_FONT)  # the panels' titles, read off a projector like the main map's
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=READABLE_FONT + 2)),
        height=380,
        margin=dict(l=10, r=10, t=120 if title else 90, b=10),
        plot_bgcolor="white",
        font=dict(size=READABLE_FONT),
        legend=dict(orientation="h", yanchor="top", y=-0.02, x=0, font=dict(size=READABLE_FONT)),
        hoverlabel=dict(align="left", font_size=READABLE_FONT),
        dragmode="pan",
    )
    return fig


def frame_heatmaps(frame, occurrences: Sequence[Occurrence]) -> go.Figure | None:
    """The per-layer similarity matrices of a frame; None with fewer than 2 occurrences."""
    if not frame.panels:
        return None
    ticks = [f"{occurrences[i].label or ''} #{i + 1}".strip() for i in frame.shown]
    return similarity_heatmaps(list(zip(frame.panel_names, frame.panels)), ticks)


def frame_separation(frame) -> go.Figure | None:
    """The separation chart of a frame; None when no layer has a score."""
    if not frame.separation or all(s.silhouette is None and s.knn_accuracy is None for s in frame.separation):
        return None
    return separation_chart(frame.panel_names, frame.separation)


def side_separation(frame) -> go.Figure | None:
    """A Compare-tab side's separation chart: half the page wide, so short names ("layer 0", "mix") and the
    legend under the bars; None when no layer has a score."""
    if frame_separation(frame) is None:
        return None
    short = [f"layer {j}" for j in range(len(frame.separation) - 1)] + ["mix"]
    fig = separation_chart(short, frame.separation)
    fig.update_layout(height=300, legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))  # clear of the ticks
    return fig


PROJECTOR_MAP_HEIGHT = 480  # px, presentation mode's map (520 elsewhere): the rail and the whole map fit 1,024 x 768
PROJECTOR_FONT = 15  # presentation mode: the charts' type, up from plotly's 12 px (the page's type goes to 19 px)


def for_projector(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` with larger type for presentation mode: legend, hover, value and y-axis text at
    ``PROJECTOR_FONT`` px, the title 4 px larger. The x tick labels and text given its own size (heatmap
    rows, panel titles) keep theirs: they were sized to fit their place."""
    out = go.Figure(fig)
    as_they_were = fig.layout.font.size or 12  # plotly's default
    out.update_layout(font=dict(size=PROJECTOR_FONT), legend=dict(font=dict(size=PROJECTOR_FONT)))
    for axis in out.select_xaxes():  # x tick labels as they were: taller ones ran into a legend under the plot
        if axis.tickfont.size is None:
            axis.tickfont.size = as_they_were
    if out.layout.title.text:
        out.update_layout(title=dict(font=dict(size=PROJECTOR_FONT + 4)))
    return out

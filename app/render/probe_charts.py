"""The Layers page's figures (plotly): accuracy per layer for one probe task, and the learned layer weights s per
task. Text from the results file goes through ``app.render.safe.plot``. No Streamlit here.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import plotly.graph_objects as go

from app.explore.probes import baseline_name, mixing_tasks, pct, task_colour, task_label
from app.render.safe import plot
from elmo_core import ProbeReport, TaskResult

# room above the plot for the title below the plotly toolbar, on the right for the baseline labels, below for
# the three-line tick labels (value, name, the paper's value)
MARGIN = dict(l=10, r=84, t=80, b=10)
TASK_HEIGHT = 400
LABEL_GAP_PX = 15  # baseline labels closer than this (11-px type) would overlap: they are moved apart
LABEL_CHARS = 14  # the longest one-line baseline label that fits MARGIN["r"] (84 px of 11-px type)
PAPER_COLOUR = "#d62728"


def _right_labels(
    fig: go.Figure, lines: Sequence[tuple[float, str]], y_range: tuple[float, float], plot_px: float
) -> None:
    """Labels of dotted lines outside the plot, right of their ends, so they cover no bar, marker or title.
    Labels of lines closer than ``LABEL_GAP_PX`` are shifted apart (in the lines' order), so two baselines of
    similar value ("mfs 27.4", "chance 25.0") stay readable; each label names its value.

    Args: lines: (y in data units, text); y_range: the y axis range; plot_px: the plot area's height in pixels.
    """
    px_per_unit = plot_px / max(y_range[1] - y_range[0], 1e-9)
    placed: list[float] = []  # label centres in pixels from the axis bottom, bottom to top
    order = sorted(range(len(lines)), key=lambda i: lines[i][0])
    for k, i in enumerate(order):
        want = (lines[i][0] - y_range[0]) * px_per_unit
        if placed:  # two-line labels ("bag of context<br>62.9") need half a line more on each side
            gap = LABEL_GAP_PX * (_line_count(lines[order[k - 1]][1]) + _line_count(lines[i][1])) / 2
            want = max(want, placed[-1] + gap)
        placed.append(want)
    overflow = placed[-1] - plot_px if placed else 0
    if overflow > 0:  # pushed past the top: the whole stack moves down, keeping its gaps
        placed = [p - overflow for p in placed]
    for i, centre in zip(order, placed):
        y, text = lines[i]
        fig.add_annotation(
            x=1.0,
            xref="paper",
            xanchor="left",
            y=y,
            yref="y",
            text=text,
            showarrow=False,
            yshift=centre - (y - y_range[0]) * px_per_unit,
            font=dict(size=11, color="#666"),
        )


def _line_count(text: str) -> int:
    return text.count("<br>") + 1


def baseline_label(name: str, value: float) -> str:
    """A dotted line's label right of the plot: "chance 42.8", or the name over the value when one line would
    not fit the right margin ("bag of context<br>62.9"), the name itself wrapped at spaces when it is longer than
    a line ("layer-0 bag of<br>context<br>75.6"). ``name``: plain text (escaped here)."""
    one = f"{name} {value:.1f}"
    if len(one) <= LABEL_CHARS:
        return plot(one)
    return "<br>".join(plot(part) for part in textwrap.wrap(name, LABEL_CHARS)) + f"<br>{value:.1f}"


PAPER_OFFSET = 0.4  # the paper's diamonds sit right of their bar
BAR_WIDTH = 0.55


def task_figure(result: TaskResult) -> go.Figure:
    """Accuracy per layer and for the learned mix (bars), baselines (dotted lines behind the bars, labelled
    outside the plot, moved apart when close), the paper's layer 1 and 2 values (red diamonds right of their
    bars). No number stands inside the plot, where a line or a marker could cross it: each bar's value, its
    name and the paper's value are its three-line tick label. The x axis is numeric (bar j at x = j)."""
    n = len(result.layers)
    mix = [pct(result.mix_learned)] if result.has_mix else []  # a task that trains nothing has no mix bar
    names = [f"layer {j}" for j in range(n)] + ["learned mix"] * len(mix)
    values = [pct(v) for v in result.layers] + mix
    colour = task_colour(result.task)
    fig = go.Figure(
        go.Bar(
            x=list(range(len(names))),
            y=values,
            marker_color=[colour] * n + ["#2ca02c"] * len(mix),
            name="ours",
            width=BAR_WIDTH,
            customdata=names,
            hovertemplate="%{customdata}: %{y:.1f}%<extra></extra>",
        )
    )
    paper = result.paper
    ys = [pct(paper.layer_1), pct(paper.layer_2)] if paper is not None else []
    if ys:
        fig.add_trace(
            go.Scatter(
                x=[1 + PAPER_OFFSET, 2 + PAPER_OFFSET],
                y=ys,
                mode="markers",
                marker=dict(symbol="diamond", size=11, color=PAPER_COLOUR),
                name="paper (other data and model)",
                customdata=["layer 1", "layer 2"],
                hovertemplate="paper, %{customdata}: %{y:.1f}<extra></extra>",
            )
        )
    paper_at = {1: ys[0], 2: ys[1]} if ys else {}
    # short lines: at 1,024 px a tick has about 50 px ("learned mix" is "mix" here, the diamond stands for "paper")
    short = [f"layer {j}" for j in range(n)] + ["mix"] * len(mix)
    ticks = [
        f"<b>{v:.1f}</b><br>{name}"
        + (f"<br><span style='color:{PAPER_COLOUR}'>◆ {paper_at[j]:.1f}</span>" if j in paper_at else "")
        for j, (name, v) in enumerate(zip(short, values))
    ]
    top = max(values + [pct(v) for v in result.baselines.values()] + ys)
    y_range = (0.0, min(105.0, top + 6))
    lines = []
    for name, value in result.baselines.items():
        fig.add_hline(y=pct(value), line_dash="dot", line_color="#888", layer="below")
        # names come from the results file
        lines.append((pct(value), baseline_label(baseline_name(result.task, name), pct(value))))
    tick_px = 3 * 15 + 8
    _right_labels(fig, lines, y_range, TASK_HEIGHT - MARGIN["t"] - MARGIN["b"] - tick_px)
    fig.update_layout(
        title=plot(result.title),
        yaxis_title=plot(f"{result.metric} (%)"),
        yaxis_range=list(y_range),
        height=TASK_HEIGHT,
        margin=MARGIN,
        showlegend=False,
        xaxis=dict(
            tickmode="array",
            tickvals=list(range(len(names))),
            ticktext=ticks,
            tickangle=0,
            range=[-0.5, len(names) - 0.5],
            tickfont=dict(size=11),
        ),
    )
    return fig


def weights_figure(report: ProbeReport) -> go.Figure:
    """The learned s per task, grouped by layer (tasks that learn no mix are left out); each bar's value inside its
    top end, the equal-weights line behind the bars (so the line crosses no value)."""
    fig = go.Figure()
    for task, result in mixing_tasks(report).items():
        s = result.s
        fig.add_trace(
            go.Bar(
                x=[f"s_{j} (layer {j})" for j in range(len(s))],
                y=[round(v, 3) for v in s],
                name=plot(task_label(task)),
                marker_color=task_colour(task),
                text=[f"{v:.2f}" for v in s],
                textposition="auto",
                insidetextanchor="end",
                textfont=dict(size=11),
                hovertemplate="%{x}: %{y:.3f}<extra>" + plot(task_label(task)) + "</extra>",
            )
        )
    n = max((len(r.s) for r in mixing_tasks(report).values()), default=3)
    fig.add_hline(y=1 / n, line_dash="dot", line_color="#888", layer="below")
    height = 380
    _right_labels(fig, [(1 / n, f"equal 1/{n}")], (0.0, 1.05), height - MARGIN["t"] - 80)
    fig.update_layout(
        title="Learned layer weights s (each task's s sums to 1)",
        barmode="group",
        yaxis_range=[0, 1.05],
        height=height,
        margin=MARGIN,
        legend=dict(orientation="h", y=-0.15),
    )
    return fig

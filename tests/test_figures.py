"""app/figures.py: the plotly figures carry the data and escape what users wrote."""
from __future__ import annotations

import numpy as np

from app import explore as ex
from app import figures


def test_figures_carry_the_data():
    from app import figures
    lines = [ex.Line("", "x", ("a", "bank", "<b>")), ex.Line("", "y", ("bank", "z")), ex.Line("", "x", ("bank",))]
    occ = ex.find_occurrences(lines, "bank")
    coords = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    fig = figures.contexts_map(coords, occ, lines, "label", selected=1)
    traces = {t.name: t for t in fig.data}
    assert set(traces) == {"x", "y", "neighbours query"}
    assert list(traces["x"].x) == [0.0, 4.0] and [c[0] for c in traces["x"].customdata] == [0, 2]
    assert "<b>bank</b>" in traces["x"].text[0] and "&lt;b&gt;" in traces["x"].text[0]
    assert list(traces["neighbours query"].x) == [2.0]
    # a legend of many lines (colour by sentence) under the plot, the title on its top edge: neither runs into
    # the other nor into the toolbar
    titled = figures.contexts_map(coords, occ, lines, "sentence", title="t")
    assert (titled.layout.legend.yanchor, titled.layout.legend.y) == ("top", -0.02)
    assert (titled.layout.title.yref, titled.layout.title.y, titled.layout.title.yanchor) == ("paper", 1.0, "bottom")
    assert figures.hover_sentence(("a", "b"), 1) == "a <b>b</b>"
    heat = figures.similarity_heatmaps([("layer 0", np.eye(3)), ("mix", np.ones((3, 3)))], ["a", "b", "c"])
    assert len(heat.data) == 2 and heat.data[0].zmin == 0.0
    bars = figures.separation_chart(["l0", "mix"], [ex.Separation(0.1, 0.5, 0.4), ex.Separation(0.6, 1.0, 0.4)])
    assert list(bars.data[0].y) == [0.5, 1.0]
    # the chance line passes behind the bars, its label right of the plot (x = 1 in paper units): it crosses
    # no value label and covers no bar
    assert [sh.layer for sh in bars.layout.shapes] == ["below"] and bars.layout.shapes[0].y0 == 0.4
    (label,) = bars.layout.annotations
    assert (label.xref, label.x, label.xanchor, label.y) == ("paper", 1.0, "left", 0.4) and "chance 0.40" in label.text
    assert all(t.insidetextanchor == "end" for t in bars.data)
    assert list(bars.data[1].text) == ["0.10", "0.60"] and list(bars.data[1].textposition) == ["outside", "inside"]
    # a silhouette of 0 still shows its value (above the bar), and a missing one says "n/a" rather than nothing
    gaps = figures.separation_chart(["l0", "l1", "mix"], [ex.Separation(None, 0.5, 0.4), ex.Separation(0.0, 0.7, 0.4),
                                                          ex.Separation(0.3, 0.9, 0.4)])
    sil = gaps.data[1]
    assert list(sil.y) == [0.0, 0.0, 0.3] and list(sil.text) == ["n/a", "0.00", "0.30"]
    assert list(sil.textposition) == ["outside", "outside", "inside"] and sil.cliponaxis is False



def test_heatmaps_name_every_row_with_room_for_each():
    """12 occurrences (the bank example): all 12 rows labelled, not every other one as plotly's automatic
    ticks gave at 1,024 px, and the plot area tall enough for 12 labels of 9 px, whatever the page width."""
    ticks = [f"{'river' if i < 6 else 'money'} #{i + 1}" for i in range(12)]
    heat = figures.similarity_heatmaps([(f"layer {j}", np.eye(12)) for j in range(3)] + [("mix", np.eye(12))], ticks)
    assert list(heat.layout.yaxis.tickvals) == ticks and heat.layout.yaxis.showticklabels
    assert heat.layout.yaxis.scaleanchor is None  # not kept square: a narrow page would squeeze the rows
    plot_px = heat.layout.height - heat.layout.margin.t - heat.layout.margin.b
    assert plot_px >= 12 * 11, plot_px
    many = figures.similarity_heatmaps([("mix", np.eye(50))], [f"#{i + 1}" for i in range(50)])
    assert not many.layout.yaxis.showticklabels and many.layout.height <= 560

def test_figures_escape_names_ticks_and_titles():
    lines = [ex.Line("a bank", "<b>x</b>", ("a", "bank")), ex.Line("the bank", "<i>y</i>", ("the", "bank"))]
    occ = ex.find_occurrences(lines, "bank")
    fig = figures.contexts_map(np.zeros((2, 2)), occ, lines)
    assert {t.name for t in fig.data if t.name != "neighbours query"} == {"&lt;b&gt;x&lt;/b&gt;", "&lt;i&gt;y&lt;/i&gt;"}
    heat = figures.similarity_heatmaps([("<b>t</b>", np.eye(2))], ["<b>x</b> #1", "<i>y</i> #2"])
    assert list(heat.data[0].x) == ["&lt;b&gt;x&lt;/b&gt; #1", "&lt;i&gt;y&lt;/i&gt; #2"]
    assert heat.layout.annotations[0].text == "&lt;b&gt;t&lt;/b&gt;"


def test_cluster_colours_and_a_compare_side_chart(bank):
    from app.frame import Controls, compute_frame

    assert figures.cluster_colour(0) == figures.PALETTE[0] and figures.cluster_colour(-1) == figures.GREY
    assert figures.cluster_colour(len(figures.PALETTE)) == figures.PALETTE[0]
    table, occ = bank
    frame = compute_frame(table, occ, Controls((0.0, 0.0, 0.0)), word="bank")
    fig = figures.side_separation(frame)
    assert list(fig.data[0].x) == ["layer 0", "layer 1", "layer 2", "mix"] and fig.layout.height == 300
    assert fig.layout.legend.y < 0  # under the bars: the chart is half the page wide
    layer0 = compute_frame(table, occ[:2], Controls((0.0, 0.0, 0.0)), word="bank")
    assert figures.side_separation(layer0) is None  # two occurrences: no score, no chart


def test_charts_for_a_projector_get_larger_type_where_there_is_room():
    from app import figures
    bars = figures.separation_chart(["l0", "mix"], [ex.Separation(0.1, 0.5, 0.4), ex.Separation(0.6, 1.0, 0.4)])
    big = figures.for_projector(bars)
    assert big.layout.font.size == figures.PROJECTOR_FONT and big.layout.legend.font.size == figures.PROJECTOR_FONT
    assert big.layout.xaxis.tickfont.size == 12  # a legend under the plot must not cover them
    assert bars.layout.font.size is None  # a copy: the page's stored figure (the HTML export) is unchanged
    heat = figures.for_projector(figures.similarity_heatmaps([("mix", np.eye(3))], ["a", "b", "c"]))
    assert heat.layout.yaxis.tickfont.size == 9  # the rows keep the size that fits them

"""app/render/figures.py and app/render/map_chart.py: the figures carry the data and keep what users wrote literal."""

from __future__ import annotations

import numpy as np

from app.explore import inputs, neighbours
from app.explore.controls import Controls
from app.explore.frame import compute_frame
from app.explore.layer_maps import layer_maps
from app.render import figures, map_chart, map_spec


def _layers(spec: dict) -> dict[str, dict]:
    """The contexts map's layers by the role they draw (their filter on ``role``)."""
    out = {}
    for layer in spec["layer"]:
        role = layer["transform"][0]["filter"].split("'")[1]
        out[role] = layer
    return out


def test_the_contexts_map_carries_the_data():
    lines = [
        inputs.Line("", "x", ("a", "bank", "<b>")),
        inputs.Line("", "y", ("bank", "z")),
        inputs.Line("", "x", ("bank",)),
    ]
    occ = inputs.find_occurrences(lines, "bank")
    coords = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    rows, names = map_chart.map_rows(coords, occ, lines, "label", selected=1)
    assert names == ["x", "y"]  # the legend, in order of first appearance
    points = rows[rows.role == map_spec.OCCURRENCE]
    assert list(points.series) == ["x", "x", "y"] and list(points.idx) == [0, 2, 1]
    assert list(points.x) == [0.0, 4.0, 2.0] and list(points.y) == [1.0, 5.0, 3.0]
    # hover: the occurrence, its label and sentence, then the sentence with the word marked, as plain text
    assert points.iloc[0]["head"] == "#1 · x · sentence 1" and points.iloc[0]["text"] == "a «bank» <b>"
    ring = rows[rows.role == map_spec.QUERY]
    assert list(ring.idx) == [1] and list(ring.x) == [2.0]
    chart = map_chart.contexts_chart(coords, occ, lines, "label", selected=1, title="t")
    spec = chart.to_dict()
    layers = _layers(spec)
    assert set(layers) == {map_spec.OCCURRENCE, map_spec.QUERY}  # no other words asked for: no grey layer
    colour = layers[map_spec.OCCURRENCE]["encoding"]["color"]
    assert colour["scale"]["domain"] == ["x", "y"] and colour["scale"]["range"] == figures.PALETTE[:2]
    assert colour["legend"]["orient"] == "bottom" and colour["legend"]["labelFontSize"] >= 14  # readable
    assert [t["field"] for t in layers[map_spec.OCCURRENCE]["encoding"]["tooltip"]] == ["head", "text"]
    # a click on an occurrence selects its index: the page reads it back as the neighbours query
    params = {p["name"]: p for p in spec["params"]}
    pick = params[map_spec.PICK]
    assert pick["select"]["fields"] == ["idx"] and pick["select"]["on"] == "click"
    # drag pans, shift + wheel zooms (a plain wheel scrolls the page on), double-click resets
    view = params[map_spec.VIEW]
    assert view["bind"] == "scales" and view["select"]["zoom"] == "wheel![event.shiftKey]"
    assert spec["title"]["text"] == "t" and spec["title"]["fontSize"] >= 16 and spec["height"] == 520
    # colour by sentence: one colour per sentence, a legend entry each
    by_sentence = _layers(map_chart.contexts_chart(coords, occ, lines, "sentence").to_dict())
    assert by_sentence[map_spec.OCCURRENCE]["encoding"]["color"]["scale"]["domain"] == [
        "sentence 1",
        "sentence 2",
        "sentence 3",
    ]


def test_the_contexts_map_other_words_many_sentences_and_square_scales():
    lines = [inputs.Line("", "", ("the", "bank", f"w{i}")) for i in range(figures.MAX_LEGEND_SENTENCES + 1)]
    occ = inputs.find_occurrences(lines, "bank")
    n = len(occ)
    coords = np.stack([np.arange(n, dtype=float), np.zeros(n)], axis=1)
    chart = map_chart.contexts_chart(
        coords,
        occ,
        lines,
        "sentence",
        context_coords=np.array([[0.5, 8.0], [1.5, -2.0]]),
        context_rows=[(0, 0), (3, 2)],
    )
    spec = chart.to_dict()
    layers = _layers(spec)
    # too many sentences for a legend: one colour scale over the sentence numbers; the other words in grey
    colour = layers[map_spec.OCCURRENCE]["encoding"]["color"]
    assert (
        colour["field"] == "line" and colour["scale"]["scheme"] == "turbo" and colour["legend"]["title"] == "sentence"
    )
    assert layers[map_spec.OTHER]["mark"]["color"] == figures.GREY
    rows, _ = map_chart.map_rows(
        coords,
        occ,
        lines,
        "sentence",
        context_coords=np.array([[0.5, 8.0], [1.5, -2.0]]),
        context_rows=[(0, 0), (3, 2)],
    )
    grey = rows[rows.role == map_spec.OTHER]
    assert list(grey.idx) == [-1, -1] and list(grey.text) == ["«the» bank w0", "the bank «w3»"]
    # one unit per pixel on both axes, whatever width the page gives: the domains are expressions of the chart's
    # width and height around the points' centre (x: 0..20, y: -2..8)
    x = spec["encoding"]["x"]["scale"]  # the layers share the axes
    y = spec["encoding"]["y"]["scale"]
    assert x["domainMin"]["expr"].startswith("10.0 - ") and "width" in x["domainMin"]["expr"]
    assert y["domainMax"]["expr"].startswith("3.0 + ") and "height" in y["domainMax"]["expr"]
    assert x["zero"] is False and x["nice"] is False


def test_the_contexts_map_keeps_user_text_literal():
    """Vega draws text as text and its tooltip escapes it: labels, sentences and titles reach the chart as the
    characters the user wrote (no HTML entities, which Vega would show as such), control characters replaced."""
    lines = [
        inputs.Line("a bank", "<b>x</b>", ("a", "bank", "<i>")),
        inputs.Line("the bank", "y&amp;\x07z", ("the", "bank")),
    ]
    occ = inputs.find_occurrences(lines, "bank")
    rows, names = map_chart.map_rows(np.zeros((2, 2)), occ, lines)
    assert names == ["<b>x</b>", "y&amp; z"]  # a bell character is no legend text
    assert rows.iloc[0]["text"] == "a «bank» <i>" and rows.iloc[0]["head"] == "#1 · <b>x</b> · sentence 1"
    chart = map_chart.contexts_chart(np.zeros((2, 2)), occ, lines, title="“<b>” · m")
    assert chart.to_dict()["title"]["text"] == "“<b>” · m"


def test_the_plotly_figures_carry_the_data():
    heat = figures.similarity_heatmaps([("layer 0", np.eye(3)), ("mix", np.ones((3, 3)))], ["a", "b", "c"])
    assert len(heat.data) == 2 and heat.data[0].zmin == 0.0
    bars = figures.separation_chart(
        ["l0", "mix"], [neighbours.Separation(0.1, 0.5, 0.4), neighbours.Separation(0.6, 1.0, 0.4)]
    )
    assert list(bars.data[0].y) == [0.5, 1.0]
    # the chance line passes behind the bars, its label right of the plot (x = 1 in paper units): it crosses
    # no value label and covers no bar
    assert [sh.layer for sh in bars.layout.shapes] == ["below"] and bars.layout.shapes[0].y0 == 0.4
    (label,) = bars.layout.annotations
    assert (label.xref, label.x, label.xanchor, label.y) == ("paper", 1.0, "left", 0.4) and "chance 0.40" in label.text
    assert all(t.insidetextanchor == "end" for t in bars.data)
    assert list(bars.data[1].text) == ["0.10", "0.60"] and list(bars.data[1].textposition) == ["outside", "inside"]
    # a silhouette of 0 still shows its value (above the bar), and a missing one says "n/a" rather than nothing
    gaps = figures.separation_chart(
        ["l0", "l1", "mix"],
        [
            neighbours.Separation(None, 0.5, 0.4),
            neighbours.Separation(0.0, 0.7, 0.4),
            neighbours.Separation(0.3, 0.9, 0.4),
        ],
    )
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
    heat = figures.similarity_heatmaps([("<b>t</b>", np.eye(2))], ["<b>x</b> #1", "<i>y</i> #2"])
    assert list(heat.data[0].x) == ["&lt;b&gt;x&lt;/b&gt; #1", "&lt;i&gt;y&lt;/i&gt; #2"]
    assert heat.layout.annotations[0].text == "&lt;b&gt;t&lt;/b&gt;"


def test_cluster_colours_and_a_compare_side_chart(bank):
    assert figures.cluster_colour(0) == figures.PALETTE[0] and figures.cluster_colour(-1) == figures.GREY
    assert figures.cluster_colour(len(figures.PALETTE)) == figures.PALETTE[0]
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    fig = figures.side_separation(frame)
    assert list(fig.data[0].x) == ["layer 0", "layer 1", "layer 2", "mix"] and fig.layout.height == 300
    assert fig.layout.legend.y < 0  # under the bars: the chart is half the page wide
    layer0 = compute_frame(table, occ[:2], Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    assert figures.side_separation(layer0) is None  # two occurrences: no score, no chart


def test_charts_for_a_projector_get_larger_type_where_there_is_room():
    from app.render import figures

    bars = figures.separation_chart(
        ["l0", "mix"], [neighbours.Separation(0.1, 0.5, 0.4), neighbours.Separation(0.6, 1.0, 0.4)]
    )
    big = figures.for_projector(bars)
    assert big.layout.font.size == figures.PROJECTOR_FONT and big.layout.legend.font.size == figures.PROJECTOR_FONT
    # a legend under the plot must not cover them: the x tick labels keep the chart's own size
    assert big.layout.xaxis.tickfont.size == bars.layout.font.size == figures.READABLE_FONT
    assert bars.layout.font.size == figures.READABLE_FONT  # a copy: the page's stored figure is unchanged
    heat = figures.similarity_heatmaps([("mix", np.eye(3))], ["a", "b", "c"])
    assert heat.layout.yaxis.tickfont.size == figures.READABLE_FONT and heat.layout.hoverlabel.font.size >= 14
    assert figures.for_projector(heat).layout.yaxis.tickfont.size == figures.READABLE_FONT  # rows keep their size


def test_the_layers_side_by_side_are_readable_on_a_projector(bank):
    table, occ = bank
    frame = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    fig = figures.small_multiples(layer_maps(table, frame), occ, table.lines, title="bank")
    assert len(fig.layout.annotations) == 4  # one title a panel: layers 0-2 and the mix
    assert {a.font.size for a in fig.layout.annotations} == {figures.READABLE_FONT}
    assert fig.layout.legend.font.size == fig.layout.hoverlabel.font.size == figures.READABLE_FONT == 14
    assert fig.layout.title.font.size == 16

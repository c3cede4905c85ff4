"""app/render/map_chart.py: the contexts map as a plain Vega-Lite spec and its rows, what a slider move rebuilds (and what
it does not), the clusters read only when the map is coloured by cluster, and the PNG and HTML files."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from app.explore import inputs
from app.explore.controls import Controls
from app.explore.frame import compute_frame
from app.render import figures, map_chart, map_live, map_spec, map_texts

TITLE = "“bank” · default · s = 0.33 / 0.33 / 0.33 · γ = 1 · PCA"


def _lines():
    lines = [
        inputs.Line("", "river", ("we", "sat", "on", "the", "bank")),
        inputs.Line("", "money", ("a", "bank", "loan")),
        inputs.Line("", "river", ("the", "bank", "flooded")),
        inputs.Line("", None, ("bank", "<b>")),
    ]
    return lines, inputs.find_occurrences(lines, "bank")


def _layers(spec: dict) -> dict[str, dict]:
    return {layer["transform"][0]["filter"].split("'")[1]: layer for layer in spec["layer"]}


def test_the_spec_keeps_hover_click_legend_title_grey_points_ring_and_equal_axes():
    lines, occ = _lines()
    coords = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [-2.0, -1.0]])
    chart = map_chart.contexts_chart(
        coords,
        occ,
        lines,
        "label",
        selected=2,
        context_coords=np.array([[1.0, 9.0]]),
        context_rows=[(0, 0)],
        title=TITLE,
    )
    spec = chart.spec
    json.dumps(spec)  # plain JSON: no Altair object, nothing left to validate or convert
    assert "data" not in spec and "datasets" not in spec  # the rows travel apart (``chart.data``)
    layers = _layers(spec)
    assert list(layers) == [map_spec.OTHER, map_spec.OCCURRENCE, map_spec.QUERY]  # grey under, the ring on top
    # click-to-pick: the point selection ``pick`` on the occurrences' index, which app.session.widgets.clicked_occurrence reads back
    params = {p["name"]: p for p in spec["params"]}
    title_params = {p["name"] for p in map_spec.title_text(TITLE, 16)[1]}  # the title's lines for each width
    assert set(params) == {"pick", "view"} | title_params and map_spec.PICK == "pick"
    assert params["pick"]["select"] == {
        "type": "point",
        "clear": False,
        "fields": ["idx"],
        "on": "click",
        "toggle": False,
    }
    assert params["pick"]["views"] == [layers[map_spec.OCCURRENCE]["name"]] == ["occurrences"]
    assert params["view"]["bind"] == "scales" and params["view"]["select"]["zoom"] == "wheel![event.shiftKey]"
    # hover: the title and the sentence, on the occurrences and the grey words, not the ring
    tooltip = [
        {"field": "head", "title": "title", "type": "nominal"},
        {"field": "text", "title": "sentence", "type": "nominal"},
    ]
    assert (
        layers[map_spec.OCCURRENCE]["encoding"]["tooltip"] == tooltip == layers[map_spec.OTHER]["encoding"]["tooltip"]
    )
    assert "tooltip" not in layers[map_spec.QUERY]["encoding"]
    assert "font-size:15px" in map_chart.TOOLTIP_CSS and "#vg-tooltip-element{" in map_chart.TOOLTIP_CSS
    # legend: under the plot at 14 px, the labels in order of first appearance, then the grey "other words"
    colour = layers[map_spec.OCCURRENCE]["encoding"]["color"]
    assert colour["scale"] == {
        "domain": ["river", "money", "(no label)", map_spec.OTHER],
        "range": figures.PALETTE[:3] + [figures.GREY],
    }
    assert (
        colour["legend"]["orient"] == "bottom"
        and colour["legend"]["labelFontSize"] == 14 == colour["legend"]["titleFontSize"]
    )
    assert spec["config"]["legend"] == {"labelFontSize": 14, "titleFontSize": 14} and spec["config"]["title"] == {
        "fontSize": 16
    }
    ring = layers[map_spec.QUERY]
    assert ring["mark"]["filled"] is False and ring["mark"]["color"] == "black" and ring["mark"]["size"] == 560
    assert ring["encoding"]["shape"]["scale"] == {"domain": [map_spec.QUERY], "range": ["circle"]}
    assert layers[map_spec.OTHER]["mark"]["size"] == 30 and layers[map_spec.OCCURRENCE]["mark"]["size"] == 150
    # the title above, 16 px; the chart as wide as the page, 520 px high
    assert spec["title"] == {
        "text": map_spec.title_text(TITLE, 16)[0],
        "anchor": "start",
        "fontSize": 16,
        "fontWeight": "normal",
        "offset": 10,
    }
    assert (spec["width"], spec["height"]) == ("container", 520)
    # one unit per pixel on both axes around the points' centre (x: -2..4, y: -1..9, the grey word included)
    x, y = spec["encoding"]["x"]["scale"], spec["encoding"]["y"]["scale"]
    unit = "max(3.0 / max(width / 2 - 20, 1), 5.0 / max(height / 2 - 20, 1))"
    assert (
        x["domainMin"]["expr"] == f"1.0 - {unit} * width / 2" and x["domainMax"]["expr"] == f"1.0 + {unit} * width / 2"
    )
    assert (
        y["domainMin"]["expr"] == f"4.0 - {unit} * height / 2"
        and y["domainMax"]["expr"] == f"4.0 + {unit} * height / 2"
    )
    assert x["zero"] is False and x["nice"] is False and spec["encoding"]["x"]["axis"]["labels"] is False
    # presentation mode: larger type everywhere
    big = map_chart.contexts_chart(coords, occ, lines, "label", selected=2, title=TITLE, font=20, height=400).spec
    assert big["title"]["fontSize"] == 22 and big["height"] == 400
    assert _layers(big)[map_spec.OCCURRENCE]["encoding"]["color"]["legend"]["labelFontSize"] == 20


def test_the_rows_one_per_occurrence_grey_words_and_the_ring():
    lines, occ = _lines()
    coords = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [-2.0, -1.0]])
    context = np.array([[1.0, 9.0], [0.5, -0.5]])
    chart = map_chart.contexts_chart(
        coords, occ, lines, "label", selected=1, context_coords=context, context_rows=[(0, 0), (1, 2)]
    )
    rows = chart.data.to_pylist()
    assert chart.data.column_names == list(map_chart.COLUMNS)
    occurrences = [r for r in rows if r["role"] == map_spec.OCCURRENCE]
    assert len(occurrences) == len(occ) == 4 and sorted(r["idx"] for r in occurrences) == [0, 1, 2, 3]
    assert [r["series"] for r in occurrences] == ["river", "river", "money", "(no label)"]  # legend order
    assert [(r["x"], r["y"]) for r in occurrences] == [(0.0, 1.0), (4.0, 5.0), (2.0, 3.0), (-2.0, -1.0)]
    assert occurrences[0]["head"] == "#1 · river · sentence 1" and occurrences[0]["text"] == "we sat on the «bank»"
    assert occurrences[3]["text"] == "«bank» <b>"  # plain text: Vega's tooltip escapes it
    grey = [r for r in rows if r["role"] == map_spec.OTHER]
    assert [(r["x"], r["y"], r["idx"], r["series"], r["line"]) for r in grey] == [
        (1.0, 9.0, -1, map_spec.OTHER, 1),
        (0.5, -0.5, -1, map_spec.OTHER, 2),
    ]
    assert [r["head"] for r in grey] == ["“we” · sentence 1", "“loan” · sentence 2"]
    assert [r["text"] for r in grey] == ["«we» sat on the bank", "a bank «loan»"]
    (ring,) = [r for r in rows if r["role"] == map_spec.QUERY]
    assert (ring["idx"], ring["x"], ring["y"], ring["head"]) == (1, 2.0, 3.0, "#2 · sentence 2")
    assert len(rows) == 4 + 2 + 1
    # the self-contained spec of the files carries the same rows inline
    assert chart.to_dict()["data"] == {"values": rows} and "data" not in chart.spec


def test_screen_reader_descriptions_are_computed_by_vega_as_before():
    """Each mark's aria-label, "series · head · x = .., y = ..", comes from a ``calculate`` in the spec (not sent);
    Vega writes it as Python's ``.6f`` would, with a plain minus (the browser tests parse it)."""
    vlc = pytest.importorskip("vl_convert")
    lines, occ = _lines()
    coords = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [-2.25, -1.0]])
    chart = map_chart.contexts_chart(coords, occ, lines, "label", selected=1)
    assert chart.spec["transform"] == [*map_live.released_position(), {"calculate": map_spec.DESC, "as": "desc"}]
    svg = vlc.vegalite_to_svg({**chart.to_dict(), "width": 500})
    labels = re.findall(r'aria-label="([^"]*)"', svg)
    expected = [f"{r['series']} · {r['head']} · x = {r['x']:.6f}, y = {r['y']:.6f}" for r in chart.data.to_pylist()]
    assert [lab for lab in labels if " · x = " in lab] == [e.replace("<", "&lt;") for e in expected]
    assert "(no label) · #4 · sentence 4 · x = -2.250000, y = -1.000000" in expected


def test_many_sentences_one_colour_scale_and_grey_other_words():
    lines = [inputs.Line("", "", ("the", "bank", f"w{i}")) for i in range(figures.MAX_LEGEND_SENTENCES + 1)]
    occ = inputs.find_occurrences(lines, "bank")
    coords = np.stack([np.arange(len(occ), dtype=float), np.zeros(len(occ))], axis=1)
    chart = map_chart.contexts_chart(
        coords, occ, lines, "sentence", context_coords=np.array([[0.5, 8.0]]), context_rows=[(0, 0)]
    )
    layers = _layers(chart.spec)
    colour = layers[map_spec.OCCURRENCE]["encoding"]["color"]
    assert (
        colour["field"] == "line" and colour["scale"] == {"scheme": "turbo"} and colour["legend"]["title"] == "sentence"
    )
    assert layers[map_spec.OTHER]["mark"]["color"] == figures.GREY and "color" not in layers[map_spec.OTHER]["encoding"]
    assert map_spec.QUERY not in layers  # no query given: no ring
    assert chart.data.num_rows == len(occ) + 1


def test_a_move_reuses_the_skeleton_and_clusters_only_when_coloured_by_cluster(bank):
    table, occ = bank
    a = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0), context=True), word="bank")
    b = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 1.0, 0.0), context=True), a, word="bank")
    first = map_chart.frame_chart(a, occ, table, "label", title="one")
    second = map_chart.frame_chart(b, occ, table, "label", title="two")
    assert first.spec["layer"] is second.spec["layer"] and first.spec["params"] is second.spec["params"]
    assert (first.spec["title"]["text"], second.spec["title"]["text"]) == ("one", "two")
    n, c = len(occ), len(b.context_rows)
    assert second.data.num_rows == n + c + 1 and c > 0
    roles = second.data.column("role").to_pylist()
    assert roles.count(map_spec.OCCURRENCE) == n and roles.count(map_spec.OTHER) == c
    rows = second.rows()
    points = rows[rows.role == map_spec.OCCURRENCE]
    np.testing.assert_allclose(points[["x", "y"]].to_numpy(), b.coords[points.idx.to_numpy()])
    grey = rows[rows.role == map_spec.OTHER]
    np.testing.assert_allclose(grey[["x", "y"]].to_numpy(), b.coords[n:])
    assert first.data.column("head").to_pylist() == second.data.column("head").to_pylist()  # the same hover text
    # colour by label: the clusters are not computed, and the hover text names none
    assert "clusters" not in a.__dict__ and "clusters" not in b.__dict__
    assert not any("cluster" in h for h in second.data.column("head").to_pylist())
    # colour by cluster: this mix's clusters, in the legend and the hover text (or "no clear clusters")
    by_cluster = map_chart.frame_chart(b, occ, table, "cluster")
    assert "clusters" in b.__dict__
    series = set(by_cluster.data.column("series").to_pylist()) - {map_spec.OTHER, map_spec.QUERY}
    if b.cluster_labels is None:
        assert series == {map_texts.NO_CLEAR_CLUSTERS}
    else:
        assert series == {f"cluster {k + 1}" for k in set(b.cluster_labels.tolist()) if k >= 0}


def test_the_png_and_html_files_draw_the_same_spec():
    pytest.importorskip("vl_convert")
    lines, occ = _lines()
    chart = map_chart.contexts_chart(
        np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [-2.0, -1.0]]), occ, lines, "label", selected=1, title=TITLE
    )
    png = map_chart.chart_png(chart, scale=1.0)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert 760 <= width <= 800 and 520 <= height <= 640  # 760 px of plot, the title above and the legend under
    page = map_chart.chart_html(chart).decode("utf-8")
    assert "vegaEmbed" in page and "river" in page and "we sat on the «bank»" in page
    assert not re.search(r"""<script[^>]+src=["']https?:""", page)  # works offline: no script from a network

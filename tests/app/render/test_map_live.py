"""app.render.map_live: the live map's params and expressions, drawn by Vega itself (vl-convert) for a dragged
slider's values, against the positions app.explore.live_map computes in Python."""

from __future__ import annotations

import re

import numpy as np
import pytest

from app.explore import inputs, live_map, mixing
from app.render import map_chart, map_live

BIND = [f".st-key-w{j} input[type=range]" for j in range(3)] + [".st-key-g input[type=range]"]


def _setup(seed: int = 0):
    lines = [inputs.Line("", lab, ("the", "bank", f"w{i}")) for i, lab in enumerate(["river", "money"] * 3)]
    occ = inputs.find_occurrences(lines, "bank")
    rng = np.random.default_rng(seed)
    layers = rng.normal(size=(3, len(occ), 16)).astype(np.float32)
    layers[0] = layers[0][0]  # layer 0 is context-free: one spelling, one vector
    return lines, occ, layers


def _drawn(chart, dragged: dict[str, float]) -> np.ndarray:
    """Where Vega draws the occurrences when the bound params hold ``dragged`` (a slider mid-drag)."""
    vlc = pytest.importorskip("vl_convert")
    spec = chart.to_dict()
    spec["params"] = [
        {k: v for k, v in {**p, "value": dragged.get(p["name"], p.get("value"))}.items() if k != "bind"}
        if p["name"].startswith("live_") and "value" in p
        else p
        for p in spec["params"]
    ]
    svg = vlc.vegalite_to_svg({**spec, "width": 500})
    found = re.findall(r'aria-label="[^"]*? · #\d+ · [^"]*? · x = (\S+), y = (\S+)"', svg)  # the occurrences
    return np.array([[float(x), float(y)] for x, y in found])


def test_the_params_are_bound_to_the_sliders_and_nothing_else():
    lines, occ, layers = _setup()
    live = live_map.fixed_axes(layers, len(occ))
    released = (0.0, 0.5, 1.0)
    chart = map_chart.contexts_chart(
        live.coords(mixing.softmax(released), 1.0),
        occ,
        lines,
        live=live,
        released=(released, 1.0),
        bind=BIND,
        title="t",
    )
    bound = {p["name"]: p["bind"] for p in chart.spec["params"] if "bind" in p and p["name"].startswith("live_")}
    assert bound == {
        name: {"element": sel, "event": map_live.LIVE_EVENT}
        for name, sel in zip(["live_w0", "live_w1", "live_w2", "live_gamma"], BIND, strict=True)
    }
    assert chart.spec["title"]["subtitle"] == {"expr": "live_line"}
    assert set(chart.data.column_names) >= {"ax", "ay", "x0", "y0", "x1", "y1", "x2", "y2"}
    assert str(chart.data.schema.field("x2").type) == "float"  # float32: half the bytes of the exact columns
    with pytest.raises(ValueError, match="4 params"):
        map_chart.contexts_chart(
            live.coords(mixing.softmax(released), 1.0), occ, lines, live=live, released=(released, 1.0), bind=BIND[:2]
        )


@pytest.mark.parametrize("w, gamma", [((0.0, 0.5, 1.0), 1.0), ((2.0, -1.0, 0.0), 0.3), ((0.0, 0.0, 5.0), 2.5)])
def test_vega_draws_the_fixed_axes_map_of_the_dragged_mix(w, gamma):
    lines, occ, layers = _setup()
    live = live_map.fixed_axes(layers, len(occ))
    released = (0.0, 0.5, 1.0)
    chart = map_chart.contexts_chart(
        live.coords(mixing.softmax(released), 1.0), occ, lines, live=live, released=(released, 1.0), bind=BIND
    )
    dragged = {"live_w0": w[0], "live_w1": w[1], "live_w2": w[2], "live_gamma": gamma}
    drawn = _drawn(chart, dragged)
    order = np.array([r["idx"] for r in chart.data.to_pylist() if r["role"] == "occurrence"])
    np.testing.assert_allclose(drawn, live.coords(mixing.softmax(w), gamma)[order], atol=2e-5 * np.abs(drawn).max())


def test_released_values_draw_the_released_map_and_a_preview_moves_from_it():
    lines, occ, layers = _setup(1)
    released = (0.0, 1.0, 0.0)
    s = mixing.softmax(released)
    exact = np.random.default_rng(2).normal(size=(len(occ), 2))  # a UMAP: not linear in anything
    live = live_map.preview(layers, len(occ), s, exact)
    chart = map_chart.contexts_chart(exact, occ, lines, live=live, released=(released, 1.0), bind=BIND, what="UMAP")
    order = np.array([r["idx"] for r in chart.data.to_pylist() if r["role"] == "occurrence"])
    np.testing.assert_allclose(_drawn(chart, {}), exact[order], atol=1e-6)  # not moved: the exact map
    np.testing.assert_allclose(_drawn(chart, {"live_gamma": 2.0}), exact[order], atol=1e-6)  # γ moves no cosine
    w = (0.0, 1.0, 2.0)  # w_2 dragged from 0 to 2
    moved = exact + live.coords(mixing.softmax(w), 1.0) - live.coords(s, 1.0)  # the preview's displacement
    np.testing.assert_allclose(_drawn(chart, {"live_w2": 2.0}), moved[order], atol=2e-5 * np.abs(moved).max())


def test_a_file_draws_the_released_map_without_bindings():
    lines, occ, layers = _setup()
    live = live_map.fixed_axes(layers, len(occ))
    chart = map_chart.contexts_chart(
        live.coords(mixing.softmax((0, 0, 0)), 1.0), occ, lines, live=live, released=((0, 0, 0), 1.0), bind=None
    )
    assert not any("bind" in p for p in chart.spec["params"] if p["name"].startswith("live_"))
    vlc = pytest.importorskip("vl_convert")
    assert b"<svg" in vlc.vegalite_to_svg({**chart.to_dict(), "width": 400}).encode()

"""The bridge between the rail's sliders and the live map: a Streamlit component (version 2, its JavaScript in
``live_bridge.js`` beside this file, shipped in the package: no network) that lets the map's Vega params follow a
slider while it is dragged. Streamlit's slider tells the server only on release; the bridge makes each step of the
drag an event on the slider's own input, which the map's bound params read (``app.render.map_live``)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app.session import keys

_JS = (Path(__file__).with_name("live_bridge.js")).read_text(encoding="utf-8")
_bridge = st.components.v2.component("elmo_live_bridge", js=_JS, html="<span></span>", isolate_styles=False)


def slider_inputs(num_layers: int, weight_key=keys.weight_key, gamma_key: str = keys.GAMMA) -> list[str]:
    """CSS selectors of the weight sliders' inputs (w_0 .. w_L) and γ's, in the order of the map's live params;
    ``weight_key(j)`` and ``gamma_key``: the sliders' widget keys (default: the explorer's rail)."""
    names = [weight_key(j) for j in range(num_layers)] + [gamma_key]
    return [f".st-key-{name} input[type=range]" for name in names]


def bridge(
    num_layers: int, weight_key=keys.weight_key, gamma_key: str = keys.GAMMA, key: str = keys.key("live_bridge")
) -> list[str]:
    """Mount the bridge for a rail's sliders (invisible) and return their selectors for the map's spec (default:
    the explorer's rail; the Corpus page passes its own keys and its own component ``key``)."""
    selectors = slider_inputs(num_layers, weight_key, gamma_key)
    _bridge(data={"selectors": selectors}, key=key)
    return selectors

"""The Corpus page's widget values across pages: Streamlit drops a page's widget state while another page is open,
so the page keeps its sliders, γ, groups and typed sentences and puts them back; and the weight presets."""

from __future__ import annotations

import streamlit as st

from app.explore import mixing
from app.session import keys

ss = st.session_state
KEPT = "_corpus_kept"  # the page's widget values, put back when the page is opened again


def restore(num_layers: int | None) -> None:
    """Put back the page's widget values that Streamlit dropped while another page was open (``None``: the typed
    sentences only, before the layers are known), and fill the sliders' first values."""
    kept = ss.get(KEPT) or {}
    names = [keys.CORPUS_TYPED] if num_layers is None else [keys.corpus_weight_key(j) for j in range(num_layers)]
    for name in names + ([keys.CORPUS_GAMMA, keys.CORPUS_GROUPS] if num_layers is not None else []):
        if name not in ss and name in kept:
            ss[name] = kept[name]
    if num_layers is None:
        return
    for j in range(num_layers):
        ss.setdefault(keys.corpus_weight_key(j), 0.0)
    ss.setdefault(keys.CORPUS_GAMMA, 1.0)


def keep(num_layers: int) -> None:
    names = [keys.corpus_weight_key(j) for j in range(num_layers)]
    names += [keys.CORPUS_GAMMA, keys.CORPUS_TYPED, keys.CORPUS_GROUPS]
    ss[KEPT] = {name: ss[name] for name in names if name in ss}


def preset(name: str, num_layers: int) -> None:
    for j, w in enumerate(mixing.preset_weights(name, num_layers)):
        ss[keys.corpus_weight_key(j)] = w


# ---- the source and the word ---------------------------------------------------------------------------------

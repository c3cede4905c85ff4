"""app/render/hover.py: one hover text, escaped for Vega-Lite or for plotly."""

from __future__ import annotations

import pytest

from app.render.hover import hover_text


def test_one_text_two_escapings():
    assert hover_text(("a", "b"), 1, escaping="plotly") == "a <b>b</b>"
    assert hover_text(("a", "b"), 1) == "a «b»"
    tokens = ("<i>", "x", "&")
    assert hover_text(tokens, 1) == "<i> «x» &"  # Vega draws text as text
    assert hover_text(tokens, 1, escaping="plotly") == "&lt;i&gt; <b>x</b> &amp;"
    assert hover_text(tuple("abcdef"), 3, window=1) == "… c «d» e …"
    with pytest.raises(ValueError):
        hover_text(("a",), 0, escaping="html")

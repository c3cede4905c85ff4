"""app/render/map_spec.py: the contexts map's spec apart from its rows (its layers and scales: test_map_chart.py)."""

from __future__ import annotations

from app.render import map_spec


def test_a_long_title_breaks_at_its_separators():
    long = " · ".join(["word"] * 40)
    assert all(len(line) <= map_spec.TITLE_LINE + 2 for line in map_spec.title_lines(long))
    assert map_spec.title_lines("short · title") == "short · title"  # one line when it fits

"""The Corpus page's map: the explorer's contexts map (``app.render.map_chart``) with marks sized for many points,
so that hundreds or thousands of occurrences stay readable (smaller, translucent, no outline). No Streamlit here."""

from __future__ import annotations

from app.render.map_chart import MapChart
from app.render.map_spec import OCCURRENCE_VIEW

FULL_SIZE_POINTS = 120  # up to this many points the explorer's marks (150 px², white outline)
MIN_SIZE = 16  # px²: the smallest mark (about 4.5 px across)


def mark_for(points: int) -> dict:
    """The occurrences' mark settings for ``points`` drawn points: size falls as 1/sqrt(points) from the
    explorer's 150 px² to ``MIN_SIZE``; from 400 points translucent and without an outline."""
    if points <= FULL_SIZE_POINTS:
        return {}
    size = max(MIN_SIZE, round(150 * (FULL_SIZE_POINTS / points) ** 0.5))
    mark = {"size": size}
    if points >= 400:
        mark.update(opacity=0.65, strokeWidth=0)
    return mark


def dense(chart: MapChart, points: int) -> MapChart:
    """``chart`` with its occurrences' marks sized for ``points`` points (``mark_for``); the shared spec is not
    changed in place (its layers list and the occurrences' layer are copied)."""
    change = mark_for(points)
    if not change:
        return chart
    layers = []
    for layer in chart.spec.get("layer", []):
        if layer.get("name") == OCCURRENCE_VIEW:
            layer = {**layer, "mark": {**layer["mark"], **change}}
        layers.append(layer)
    return MapChart({**chart.spec, "layer": layers}, chart.data, chart.names)

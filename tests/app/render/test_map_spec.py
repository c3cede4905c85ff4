"""app/render/map_spec.py: the contexts map's spec apart from its rows (its layers and scales: test_map_chart.py)."""

from __future__ import annotations

from app.render import map_spec


def test_a_long_title_breaks_into_lines_that_fit_the_narrowest_chart():
    """A 390 px chart cut its title at 90 characters a line: every line now fits ``TITLE_WIDTH_PX``."""
    limit = int(map_spec.TITLE_WIDTH_PX / (0.55 * 16))
    long = " · ".join(["word"] * 40)
    assert all(len(line) <= limit + 2 for line in map_spec.title_lines(long, 16))
    title = "“bank” · elmo_2x4096_512_2048cnn_2xhighway_5.5B · s = 0.33 / 0.33 / 0.33 · γ = 1, layer norm · PCA"
    lines = map_spec.title_lines(title, 16)
    assert all(len(line) <= limit + 2 for line in lines) and " ".join(lines) == title.replace(" · ", " · ")
    assert all(len(line) <= limit for line in map_spec.title_lines("w" * 500, 16))  # one long word: cut anywhere
    assert map_spec.title_lines("short · title") == "short · title"  # one line when it fits


def test_the_legend_wraps_into_as_many_columns_as_the_width_holds():
    """A legend of 8 labels ran past a 1,400 px chart's edge: its columns are now a function of the width."""
    names = ["river bank (land beside water)"] * 8
    expr = map_spec.legend_columns(names, 14)["expr"]
    entry = int(expr.rsplit("/", 1)[1].strip(" )"))
    assert 8 * entry > 1400 and entry <= 30 + 14 + map_spec.LEGEND_LABEL_PX
    assert expr.startswith("max(1, min(8, floor((width + 14) /")  # no user text in the expression


def test_a_title_that_fits_a_wide_chart_on_one_line_keeps_it_there():
    """Broken for the narrowest chart only, a usual title took two lines beside the rail at 1,024 px and wider:
    the width picks the lines in the browser, from both sets carried as data."""
    title = "“spring” · default · s = 0.33 / 0.33 / 0.33 · γ = 1 · PCA"
    text, params = map_spec.title_text(title, 16)
    assert text == {"expr": f"width < {map_spec.WIDE_TITLE_PX} ? title_narrow : title_wide"}  # no user text
    values = {p["name"]: p["value"] for p in params}
    assert values["title_wide"] == title and values["title_narrow"] == map_spec.title_lines(title, 16)
    assert len(values["title_narrow"]) == 2
    assert map_spec.title_text("short · title", 16) == ("short · title", [])  # one line everywhere: no params

"""The text of the contexts map's points (``app.render.map_chart``), made once per set of points and reused by every
slider move: hover sentences, hover titles, legend order per colouring. User text goes through
``app.render.safe.vega`` only (Vega draws text as text and escapes its tooltip). No Streamlit here.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from app.explore.inputs import Line, Occurrence
from app.render.figures import _label_of, cluster_of
from app.render.hover import hover_head, hover_text
from app.render.safe import vega

HOVER_WINDOW = 20  # tokens either side of the word in the hover text
NO_CLEAR_CLUSTERS = "no clear clusters"  # the legend when the map is coloured by cluster and this mix has none


def _groups(occurrences: Sequence[Occurrence], color_by: str, clusters: Sequence[int] | None) -> dict[str, list[int]]:
    """Legend name -> occurrence indices, in legend order (as ``figures.small_multiples`` groups them). Coloured
    by cluster without clusters (this mix has no clear ones): one group, ``NO_CLEAR_CLUSTERS``."""
    if color_by == "cluster" and clusters is None:
        return {NO_CLEAR_CLUSTERS: list(range(len(occurrences)))} if len(occurrences) else {}
    groups: dict[str, list[int]] = {}
    for i, occ in enumerate(occurrences):
        groups.setdefault(vega(_label_of(occ, color_by, cluster_of(clusters, i))), []).append(i)
    if color_by == "cluster":  # cluster 1, 2, ... in order, whatever occurrence comes first
        groups = dict(sorted(groups.items(), key=lambda kv: (not kv[0].startswith("cluster "), len(kv[0]), kv[0])))
    return groups


@dataclass(frozen=True)
class _Colouring:
    """The occurrences' rows in legend order for one colouring: their order, legend names and hover titles."""

    order: np.ndarray  # int64 (n,): occurrence index per row
    series: list[str]
    heads: list[str]
    names: list[str]  # the legend's entries in order


@dataclass
class MapTexts:
    """The text of every drawn point, which does not change while the sliders move: made once per set of points
    (``map_texts``) and reused by every move's chart. ``occ_text``/``occ_line``: per occurrence, its hover
    sentence and its 1-based sentence number; ``ctx_*``: per other word, its hover title, sentence and number.
    The colourings (legend order, names, hover titles) are kept per colour-by and clusters."""

    occurrences: tuple[Occurrence, ...]
    occ_text: list[str]
    occ_line: list[int]
    ctx_head: list[str]
    ctx_text: list[str]
    ctx_line: list[int]
    _colourings: dict = field(default_factory=dict, repr=False)

    def colouring(self, color_by: str, clusters: Sequence[int] | None) -> _Colouring:
        key = (color_by, None if clusters is None else tuple(int(c) for c in clusters))
        found = self._colourings.get(key)
        if found is None:
            groups = _groups(self.occurrences, color_by, clusters)
            order = [i for idx in groups.values() for i in idx]
            series = [name for name, idx in groups.items() for _ in idx]
            heads = [hover_head(i, self.occurrences[i], clusters) for i in order]
            found = _Colouring(np.asarray(order, dtype=np.int64), series, heads, list(groups))
            if len(self._colourings) >= 16:  # colour by cluster: one per split the sliders passed through
                self._colourings.clear()
            self._colourings[key] = found
        return found


def map_texts(
    occurrences: Sequence[Occurrence], lines: Sequence[Line], context_rows: Sequence[tuple[int, int]] = ()
) -> MapTexts:
    """The hover text of the occurrences and of the other words at ``context_rows`` ((line, position) each)."""
    ctx = [(int(li), int(pos)) for li, pos in context_rows]
    return MapTexts(
        tuple(occurrences),
        [hover_text(lines[o.line].tokens, o.position, HOVER_WINDOW) for o in occurrences],
        [o.line + 1 for o in occurrences],
        [f"“{vega(lines[li].tokens[pos])}” · sentence {li + 1}" for li, pos in ctx],
        [hover_text(lines[li].tokens, pos, HOVER_WINDOW) for li, pos in ctx],
        [li + 1 for li, _ in ctx],
    )


# ---- kept per sentence table while the sliders move ------------------------------------------------------------
_TEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # TokenTable -> {(occurrences, rows): MapTexts}
_TEXTS_LOCK = threading.Lock()
_TEXTS_PER_TABLE = 4  # sets of points kept per table (context words on and off, another word)


def _context_positions(frame, table) -> list[tuple[int, int]]:
    rows = np.asarray(frame.context_rows, dtype=np.int64)
    lines = table.line_of_row[rows]
    return list(zip(lines.tolist(), (rows - table.offsets[lines]).tolist()))


def texts_of(frame, occurrences: Sequence[Occurrence], table) -> MapTexts:
    """The hover text of the frame's points, made once per table, occurrences and other words."""
    key = (tuple(occurrences), np.asarray(frame.context_rows, dtype=np.int64).tobytes())
    with _TEXTS_LOCK:
        kept = _TEXTS.get(table)
        found = kept.get(key) if kept is not None else None
    if found is not None:
        return found
    found = map_texts(occurrences, table.lines, _context_positions(frame, table))
    with _TEXTS_LOCK:
        kept = _TEXTS.setdefault(table, {})
        if len(kept) >= _TEXTS_PER_TABLE:
            kept.pop(next(iter(kept)))
        kept[key] = found
    return found

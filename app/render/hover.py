"""The hover text of a point on a map: its title line, and the sentence around one token with the token marked
(no Streamlit here).

One text, two escapings: ``"vega"`` for the Vega-Lite contexts map (plain text; Vega draws it as text and escapes
its tooltip, so only ``app.render.safe.vega``), ``"plotly"`` for plotly's pseudo-HTML (escaped as
``app.render.safe.plot`` escapes, wrapped with ``<br>``, the token in ``<b>``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from app.explore.inputs import Occurrence
from app.render.safe import plot, vega

_ESCAPE = {"vega": vega, "plotly": plot}
_MARK = "\u0000"  # survives wrapping and escaping; becomes the markup around the token


def hover_text(tokens: Sequence[str], position: int, window: int = 20, escaping: str = "vega", width: int = 70) -> str:
    """The sentence around ``tokens[position]``, ``window`` tokens either side ("…" where it is cut).

    Args:
        escaping: "vega": plain text with the token in «»; "plotly": pseudo-HTML, lines of at most ``width``
            characters joined by ``<br>``, the token in ``<b>``.
    Raises: ValueError for another ``escaping``.
    """
    if escaping not in ("vega", "plotly"):
        raise ValueError(f"unknown escaping {escaping!r}")
    lo, hi = max(0, position - window), min(len(tokens), position + window + 1)
    words = [vega(t) for t in tokens[lo:hi]]  # tokens were cleaned at the input; vega keeps them so
    words[position - lo] = _MARK + words[position - lo] + _MARK
    text = ("… " if lo > 0 else "") + " ".join(words) + (" …" if hi < len(tokens) else "")
    if escaping == "vega":
        return text.replace(_MARK, "«", 1).replace(_MARK, "»", 1)
    # the mark is a control character, which ``plot`` would drop: escape the pieces between marks
    wrapped = "<br>".join(
        _MARK.join(plot(piece) for piece in part.split(_MARK))
        for part in textwrap.wrap(text, width, break_long_words=True) or [""]
    )
    return "".join(f"<b>{part}</b>" if i % 2 else part for i, part in enumerate(wrapped.split(_MARK)))


def hover_head(i: int, occ: Occurrence, clusters: Sequence[int] | None, escaping: str = "vega") -> str:
    """The hover's title line of occurrence ``i``: "#3 · river · sentence 5 · cluster 2" (the label escaped for
    ``escaping``, "vega" or "plotly"; the cluster when ``clusters`` gives it one). Raises: KeyError for another
    ``escaping``."""
    label = [_ESCAPE[escaping](occ.label)] if occ.label else []
    parts = [f"#{i + 1}", *label, f"sentence {occ.line + 1}"]
    if clusters is not None and clusters[i] >= 0:
        parts.append(f"cluster {clusters[i] + 1}")
    return " · ".join(parts)

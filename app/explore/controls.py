"""The explorer's controls: one frozen record of everything that changes what the explorer shows.

The same record is what a shared link restores (``app.session.link``), what the widgets hold
(``app.session.widgets`` reads and writes it field by field, each field under the session key named after it),
what the computation reads (``app.explore.frame.compute_frame``) and what an export records
(``app.render.exports.Settings``). A click on the map is an event of one run, not a control: it is passed
apart (``compute_frame``'s ``clicked``). No Streamlit here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, kw_only=True)
class Controls:
    """Every control of the explorer, with the values a fresh page starts from.

    sentences: the sentences box's text; example: the example set whose text that is (None: typed or uploaded);
    word: the target word ("" for none picked); weights: raw w per layer, s = softmax(w) (() means all zeros:
    equal s_j); gamma: the mix's scale; layer_norm: normalise each layer per sentence before mixing;
    projection: "live" (fixed axes, redrawn in the browser while a slider moves), "auto", "pca", "umap" or
    "tsne"; inflections: include -s, -ed, -ing forms; context: draw the
    sentences' other words in grey; fold_case: treat "Spring" and "spring" as one word (grouping only, never the
    model's input); query: the neighbours query occurrence, 0-based (the link and the page count from 1);
    k: neighbours shown; same_word: neighbours among the word's other occurrences only; color_by: "label",
    "sentence", "spelling" or "cluster"; tab: the open tab's id (``app.session.keys.TABS``); model: a named
    model (bundled, or published and in the server's cache; an export writes the name shown instead);
    present: presentation mode; map_view: "mix" or "layers" (``app.session.keys.MAP_VIEWS``); n_clusters: the
    Senses tab's number of clusters, 0 for "by silhouette"; compare: the Compare tab's two bundled models, or ().
    """

    sentences: str = ""
    example: str | None = None
    word: str = ""
    weights: tuple[float, ...] = ()
    gamma: float = 1.0
    layer_norm: bool = False
    projection: str = "live"
    inflections: bool = False
    context: bool = False
    fold_case: bool = True
    query: int = 0
    k: int = 10
    same_word: bool = True  # the word's other occurrences: its own sentence's tokens would crowd them out
    color_by: str = "label"
    tab: str = "map"
    model: str = "default"
    present: bool = False
    map_view: str = "mix"
    n_clusters: int = 0
    compare: tuple[str, ...] = ()


DEFAULT = Controls()
NAMES = tuple(f.name for f in fields(Controls))

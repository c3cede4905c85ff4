"""Everything the explorer shows for one setting of its controls: ``compute_frame`` (the mix and the map at once;
the neighbours, matrices, scores and clusters when a view first reads them, see ``Frame``).

The explorer page reads its widgets into ``app.explore.controls.Controls``, calls ``compute_frame`` and draws the
``Frame`` with the words of ``app.render.words``; the speed benchmark times the same call. No Streamlit here.

Dims: N tokens of all sentences, n occurrences of the word, c context tokens drawn in grey, D = 2P.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from app.explore import activations, inputs, live_map, mixing, neighbours, projections
from app.explore.clusters import SenseClusters, discover
from app.explore.controls import Controls
from app.explore.frame_neighbours import (
    Reference,
    layer0_neighbours,
    reference_neighbours,
    sentence_neighbours,
)
from app.explore.text import Kwic

MAX_MATRIX_OCCURRENCES = 150  # similarity matrices spread this many occurrences at most
METHOD_NAMES = {"live": "fixed axes", "pca": "PCA", "umap": "UMAP", "tsne": "t-SNE"}


@dataclass(kw_only=True)
class Frame:
    """What the page draws for ``controls`` (the query there is the page's; ``query`` here the one drawn).

    s: float64 (L + 1,); mixed: float32 (N, D), every token's ELMo vector; rows: int64 (n,) the occurrences'
    token rows; vectors: float32 (n, D); context_rows: int64 (c,); same_vector: all occurrences have one
    vector (drawn at one spot); zero: bool (n,) all-zero vectors; projection: coordinates (n + c, 2) or None;
    base_layout: (key, coords or None) the layout of the same points at equal weights, fitted from scratch
    (seeded), which every layout of these points starts from (see ``compute_frame``); live: what the page needs
    to redraw the map of any mix while a slider is dragged (``app.explore.live_map``; None without a map), and
    live_basis: (key, LiveMap) the fixed axes of these points, kept while they stay; query: the query
    occurrence; clicked: this run's click on the map (an occurrence index) or None; panel_names: the layers' and the mix's names; shown: the occurrences in the matrices; notes: for
    the user.

    Computed when first read, since a control move redraws only the open view (the map needs none of them):
    layer0_neighbours: [(word type, cosine)] (layer0_note says among which words); neighbours: [(token, label,
    cosine, Kwic)] in the sentences; reference_neighbours: [(cosine, Kwic)] or None, and reference_found: how
    many occurrences of the word the reference sentences hold (None: no reference table); panels: (m, m) cosine matrices per layer and the mix over ``shown``; separation: per layer and the
    mix; clusters: the occurrences' sense clusters in the mix (None when they cannot be split), which the map
    reads only when it is coloured by cluster (``offers_clusters`` decides the colour choice without them). ``table``,
    ``occurrences``, ``reference`` and ``types`` are what they are computed from; ``layer_scores`` holds the
    layers' separation scores, shared with the next frame while ``separation_key`` stays the same.
    """

    controls: Controls
    model_key: str
    word: str
    s: np.ndarray
    mixed: np.ndarray
    rows: np.ndarray
    vectors: np.ndarray
    context_rows: np.ndarray
    same_vector: bool
    zero: np.ndarray
    signature: tuple
    projection: projections.Projection
    base_layout: tuple | None
    live: live_map.LiveMap | None
    live_basis: tuple | None
    query: int
    clicked: int | None
    panel_names: list[str]
    shown: list[int]
    separation_key: tuple
    map_ms: float
    table: activations.TokenTable = field(repr=False, compare=False)
    occurrences: Sequence[inputs.Occurrence] = field(repr=False, compare=False)
    reference: Reference | None = field(default=None, repr=False, compare=False)
    types: object = field(default=None, repr=False, compare=False)
    layer_scores: dict = field(default_factory=dict, repr=False, compare=False)
    notes: list[str] = field(default_factory=list)

    @cached_property
    def neighbours(self) -> list[tuple[str, str, float, Kwic]]:
        return sentence_neighbours(self.table, self.mixed, self.rows, self._q_row, self.controls)

    @cached_property
    def _reference_search(self) -> tuple[list[tuple[float, Kwic]] | None, int | None]:
        return reference_neighbours(self.reference, self.word, self.mixed[self._q_row], self.controls)

    @property
    def reference_neighbours(self) -> list[tuple[float, Kwic]] | None:
        return self._reference_search[0]

    @property
    def reference_found(self) -> int | None:
        """The word's occurrences in the reference sentences (0: none there); None without a reference table."""
        return self._reference_search[1]

    @cached_property
    def _layer0_found(self) -> tuple[list[tuple[str, float]], str]:
        return layer0_neighbours(self.table, self.reference, self._q_row, int(self.controls.k), self.types)

    @property
    def layer0_neighbours(self) -> list[tuple[str, float]]:
        return self._layer0_found[0]

    @property
    def layer0_note(self) -> str:
        """What the layer-0 column was searched in (the vocabulary, or the input while it computes)."""
        return self._layer0_found[1]

    @cached_property
    def panels(self) -> list[np.ndarray]:
        return [neighbours.cosine_matrix(v[self.shown]) for v in self._vectors_per_panel] if len(self.rows) >= 2 else []

    @cached_property
    def separation(self) -> list[neighbours.Separation]:
        if len(self.rows) < 2:
            return []
        vecs = self._vectors_per_panel
        labels = [o.label for o in self.occurrences]
        if "layers" not in self.layer_scores:  # the layers do not depend on s or gamma
            self.layer_scores["layers"] = [neighbours.separation(v, labels) for v in vecs[:-1]]
        return self.layer_scores["layers"] + [neighbours.separation(vecs[-1], labels)]

    @cached_property
    def clusters(self) -> SenseClusters | None:
        return None if self.same_vector else discover(self.vectors, self.controls.n_clusters or None)

    @property
    def _q_row(self) -> int:
        return int(self.rows[self.query])

    @property
    def _vectors_per_panel(self) -> list[np.ndarray]:
        """(n, D) per layer (as the layer norm gives it) and the mix."""
        layers = self.table.layers(self.controls.layer_norm)
        return [layers[j][self.rows] for j in range(self.table.num_layers)] + [self.vectors]

    @property
    def coords(self) -> np.ndarray | None:
        """(n + c, 2) map coordinates, occurrences first; None when there is no map."""
        return self.projection.coords

    @property
    def occurrence_coords(self) -> np.ndarray | None:
        """(n, 2) the occurrences' map coordinates (without the grey context words); None when there is no map."""
        return None if self.coords is None else self.coords[: len(self.rows)]

    @property
    def cluster_labels(self) -> np.ndarray | None:
        """int (n,) each occurrence's sense cluster (``clusters.NO_CLUSTER`` for all-zero vectors); None when the
        occurrences could not be clustered or form no clear clusters."""
        return self.clusters.labels if self.clusters is not None and self.clusters.clear else None

    def offers_clusters(self, current: bool = False) -> bool:
        """Whether the map offers "colour by cluster": the occurrences form clear clusters in the equal-weights mix
        of these points (clustered once per table, occurrences, layer norm and number of clusters: a slider move
        does not cluster), or in this mix when it is clustered anyway: ``current`` (the map is coloured by
        cluster) or a view read ``clusters`` already (the Senses tab, whose "Colour the map by cluster" then
        sticks)."""
        if (current or "clusters" in self.__dict__) and self.cluster_labels is not None:
            return True
        return _equal_weights_clusters(self.table, self.rows, self.controls.layer_norm, self.controls.n_clusters)


_EQUAL_CLUSTERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # TokenTable -> {(rows, ln, k): bool}
_EQUAL_CLUSTERS_LOCK = threading.Lock()


def _equal_weights_clusters(table: activations.TokenTable, rows: np.ndarray, layer_norm: bool, n_clusters: int) -> bool:
    """Whether the occurrences at ``rows`` form clear clusters in the equal-weights mix, kept per table."""
    key = (np.asarray(rows, dtype=np.int64).tobytes(), bool(layer_norm), int(n_clusters))
    with _EQUAL_CLUSTERS_LOCK:
        found = _EQUAL_CLUSTERS.get(table, {}).get(key)
    if found is None:
        found = _clear_clusters(table.mix((0.0,) * table.num_layers, 1.0, layer_norm)[rows], n_clusters)
        with _EQUAL_CLUSTERS_LOCK:
            kept = _EQUAL_CLUSTERS.setdefault(table, {})
            if len(kept) >= 16:
                kept.pop(next(iter(kept)))
            kept[key] = found
    return found


def _clear_clusters(x: np.ndarray, n_clusters: int) -> bool:
    """Whether the rows of ``x`` form clear sense clusters (``clusters.discover``; ``n_clusters`` 0: by silhouette)."""
    if len(x) < 3 or projections.nearly_identical(x):
        return False
    found = discover(x, n_clusters or None)
    return found is not None and found.clear


def layer_name(j: int, num_layers: int) -> str:
    """The names on the sliders, the matrices and the chart: "layer 0 (context-free)", "layer 2 (biLSTM, top)"."""
    if j == 0:
        return "layer 0 (context-free)"
    return f"layer {j} (biLSTM{', top' if j == num_layers - 1 else ''})"


def _context_rows(table: activations.TokenTable, rows: np.ndarray) -> np.ndarray:
    others = np.setdiff1d(np.arange(table.num_tokens), rows)
    others = np.array([r for r in others if inputs.is_wordlike(table.token(int(r)))], dtype=np.int64)
    if len(others) > projections.MAX_CONTEXT_POINTS:
        others = others[np.linspace(0, len(others) - 1, projections.MAX_CONTEXT_POINTS).round().astype(int)]
    return others


def project_safely(points: np.ndarray, method: str, previous: np.ndarray | None) -> projections.Projection:
    """``projections.project`` with seed 0; PCA with a note (plain text) when the projection library fails."""
    try:
        return projections.project(points, method, previous, seed=0)
    except Exception as err:  # a projection library failing must not take the page down
        return projections.Projection(
            projections.pca_2d(projections.l2_normalise(points)) if len(points) >= 3 else None,
            "pca",
            f"The {method} projection failed ({err}); showing PCA.",
        )


def _layout(
    table: activations.TokenTable,
    rows: np.ndarray,
    context_rows: np.ndarray,
    points: np.ndarray,
    same: bool,
    controls: Controls,
    signature: tuple,
    memo: tuple | None,
) -> tuple[projections.Projection, tuple]:
    """The map's projection, a function of the controls alone (so a link redraws the same map anywhere).

    The base layout of these points is the projection of their equal-weights mix, fitted from scratch with a
    fixed seed (memoised in ``memo`` while the points, the layer norm and the method stay the same). Any other mix starts from the base (UMAP's and t-SNE's init) and is aligned to it (Procrustes),
    so points move smoothly while the sliders move and a fresh session gets the same picture.
    """
    key = (signature, controls.layer_norm, controls.projection)
    if memo is not None and memo[0] == key:
        base = memo[1]
    else:
        equal = table.mix((0.0,) * table.num_layers, 1.0, controls.layer_norm)
        base_points = np.concatenate([equal[rows], equal[context_rows]]) if len(context_rows) else equal[rows]
        base = None
        if not projections.nearly_identical(base_points[: len(rows)]) and float(np.ptp(base_points, axis=0).max()) > 0:
            base = project_safely(base_points, controls.projection, None)
        memo = (key, base)
    if same or base is None or base.coords is None:
        return project_safely(points, controls.projection, None), memo
    if len(set(controls.weights)) <= 1:  # equal weights: the base itself
        return base, memo
    return project_safely(points, controls.projection, base.coords), memo


def _query(controls: Controls, clicked: int | None, previous: Frame | None, word: str, n: int) -> int:
    query = controls.query
    if previous is not None and (previous.word, len(previous.rows)) != (word, n) or not 0 <= query < n:
        query = 0  # another word: its first occurrence (a link's query arrives with the first frame)
    # Streamlit keeps a chart's selection across runs: only a click that differs from the last frame's is new
    if clicked is not None and 0 <= clicked < n and clicked != (previous.clicked if previous is not None else None):
        query = clicked
    return int(query)


def compute_frame(
    table: activations.TokenTable,
    occurrences: Sequence[inputs.Occurrence],
    controls: Controls,
    previous: Frame | None = None,
    *,
    clicked: int | None = None,
    model_key: str = "",
    word: str = "",
    reference: Reference | None = None,
    types=None,
) -> Frame:
    """The explorer's view of ``word``'s occurrences under ``controls``.

    Args:
        table: the sentences' activations; occurrences: of the word, n >= 1.
        controls: the explorer's controls; ``weights`` has one value per layer of ``table``.
        clicked: the occurrence clicked on the map in this run (None: no click); a new click becomes the query.
        previous: the last frame, a memo only: its base layout (see ``_layout``) and its separation scores of
            the layers are reused when they still apply, and its query and click tell a new click from an
            old one. The map does not depend on it: the same controls give the same map in any session.
        reference: the reference corpus for the word, for its neighbours column (None: no column).
        types: the model's ``app.serving.type_vectors.TypeVectors`` for the layer-0 column (None, or not ready yet:
            the input's word types instead; ``Frame.layer0_note`` says which).
    Returns: the Frame.
    """
    start = time.perf_counter()
    num_layers = table.num_layers
    s = mixing.softmax(controls.weights)
    mixed = table.mix(controls.weights, controls.gamma, controls.layer_norm)
    rows = table.rows(occurrences)
    x = mixed[rows]
    context_rows = _context_rows(table, rows) if controls.context else np.zeros(0, dtype=np.int64)
    points = np.concatenate([x, mixed[context_rows]]) if len(context_rows) else x
    # all occurrences with one vector (layer 0 is context-free): one spot instead of projected float noise,
    # which a projection would blow up into clusters
    same = projections.nearly_identical(x)
    if same:
        points = points.copy()
        points[: len(x)] = x[0]
    signature = (model_key, tuple(rows.tolist()), tuple(context_rows.tolist()))
    memo = previous
    live_key = (signature, controls.layer_norm)

    def point_layers() -> np.ndarray:  # (L + 1, n + c, D): copied only when an axis is fitted
        return table.layers(controls.layer_norm)[:, np.concatenate([rows, context_rows])]

    kept = memo.live_basis if memo is not None else None
    axes = kept[1] if kept is not None and kept[0] == live_key else None
    if axes is None and controls.projection == "live" and len(rows) >= projections.MIN_POINTS_FOR_MAP:
        axes = live_map.fixed_axes(point_layers(), len(rows))  # once per set of points: a move refits nothing
    base_layout = memo.base_layout if memo is not None else None
    if controls.projection == "live":
        live = axes
        proj = (
            projections.Projection(axes.coords(s, controls.gamma), "live")
            if axes is not None
            else projections.project(points, "pca")  # too few points: no map, and the projection says why
        )
    else:
        proj, base_layout = _layout(table, rows, context_rows, points, same, controls, signature, base_layout)
        live = None if proj.coords is None else live_map.preview(point_layers(), len(rows), s, proj.coords)
    map_ms = (time.perf_counter() - start) * 1000

    n = len(occurrences)
    order = sorted(range(n), key=lambda i: (occurrences[i].label or "", i))
    shown = (
        order
        if n <= MAX_MATRIX_OCCURRENCES
        else [order[i] for i in np.linspace(0, n - 1, MAX_MATRIX_OCCURRENCES).round().astype(int)]
    )
    names = [layer_name(j, num_layers) for j in range(num_layers)] + ["ELMo mix (current s, γ)"]
    sep_key = (signature, controls.layer_norm)
    shared = previous.layer_scores if previous is not None and previous.separation_key == sep_key else {}
    notes = []
    if n > MAX_MATRIX_OCCURRENCES:
        notes.append(f"Showing {MAX_MATRIX_OCCURRENCES} of {n} occurrences in the matrices (evenly spread).")
    return Frame(
        controls=controls,
        model_key=model_key,
        word=word,
        s=s,
        mixed=mixed,
        rows=rows,
        vectors=x,
        context_rows=context_rows,
        same_vector=same,
        zero=neighbours.zero_rows(x),
        signature=signature,
        projection=proj,
        base_layout=base_layout,
        live=live,
        live_basis=(live_key, axes) if axes is not None else kept,
        query=_query(controls, clicked, previous, word, n),
        clicked=clicked,
        panel_names=names,
        shown=shown,
        separation_key=sep_key,
        map_ms=map_ms,
        table=table,
        occurrences=list(occurrences),
        reference=reference,
        types=types,
        layer_scores=shared,
        notes=notes,
    )


def occurrence_layers(table: activations.TokenTable, frame: Frame) -> np.ndarray:
    """float32 (L + 1, n, D): every layer's vectors of the frame's occurrences, layer-normed when the mix is."""
    return table.layers(frame.controls.layer_norm)[:, frame.rows]

"""Everything the explorer shows for one setting of its controls, computed in one call: ``compute_frame``.

The explorer page reads its widgets into ``Controls``, calls ``compute_frame`` and renders the ``Frame``; the
speed benchmark times the same call. No Streamlit here.

Dims: N tokens of all sentences, n occurrences of the word, c context tokens drawn in grey, D = 2P.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from app import explore as ex
from app.clusters import SenseClusters, discover
from app.display import Kwic, kwic, plural
from app.safe import md

MAX_MATRIX_OCCURRENCES = 150  # similarity matrices spread this many occurrences at most
CONTEXT_CHARS = 60  # characters of context on each side of a neighbour's target (the table clips further)
METHOD_NAMES = {"pca": "PCA", "umap": "UMAP", "tsne": "t-SNE"}


@dataclass(frozen=True)
class Controls:
    """The explorer's controls. weights: raw w per layer (s = softmax(w)); query: the query occurrence the page
    holds; clicked: the occurrence index of a point clicked on the map in this run, or None."""

    weights: tuple[float, ...]
    gamma: float = 1.0
    layer_norm: bool = False
    projection: str = "auto"
    context: bool = False
    query: int = 0
    clicked: int | None = None
    k: int = 10
    same_word_only: bool = False
    inflections: bool = False
    fold_case: bool = True  # "treat case as the same word": how occurrences are grouped, never the model's input
    n_clusters: int = 0  # the Senses tab's number of clusters; 0: chosen by silhouette


@dataclass(frozen=True)
class Reference:
    """The reference corpus for one word: its token table (None when there is none), how many reference
    sentences contain the word in all, and a note for the user."""

    table: ex.TokenTable | None
    total: int = 0
    note: str = ""


@dataclass
class Frame:
    """What the page draws.

    s: float64 (L + 1,); mixed: float32 (N, D), every token's ELMo vector; rows: int64 (n,) the occurrences'
    token rows; vectors: float32 (n, D); context_rows: int64 (c,); same_vector: all occurrences have one
    vector (drawn at one spot); zero: bool (n,) all-zero vectors; projection: coordinates (n + c, 2) or None;
    base_layout: (key, coords or None) the layout of the same points at equal weights, fitted from scratch
    (seeded), which every layout of these points starts from (see ``compute_frame``); query: the query
    occurrence; layer0_neighbours: [(word type, cosine)] (layer0_note says among which words); neighbours:
    [(token, label, cosine, Kwic)] in the sentences; reference_neighbours: [(cosine, Kwic)] or None; panels: [(name, (m, m) cosine matrix)] per
    layer and the mix over ``shown`` occurrences; separation: per layer and the mix; clusters: the occurrences'
    sense clusters in the mix (None when they cannot be split); notes: for the user.
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
    projection: ex.Projection
    base_layout: tuple | None
    query: int
    clicked: int | None
    layer0_neighbours: list[tuple[str, float]]
    neighbours: list[tuple[str, str, float, str]]
    reference_neighbours: list[tuple[float, str]] | None
    reference_note: str
    panel_names: list[str]
    panels: list[np.ndarray]
    shown: list[int]
    separation: list[ex.Separation]
    separation_key: tuple
    map_ms: float
    clusters: SenseClusters | None = None
    notes: list[str] = field(default_factory=list)
    layer0_note: str = ""  # what the layer-0 column was searched in (the vocabulary, or the input while it computes)

    @property
    def coords(self) -> np.ndarray | None:
        """(n + c, 2) map coordinates, occurrences first; None when there is no map."""
        return self.projection.coords


def layer_name(j: int, num_layers: int) -> str:
    """The names on the sliders, the matrices and the chart: "layer 0 (context-free)", "layer 2 (biLSTM, top)"."""
    if j == 0:
        return "layer 0 (context-free)"
    return f"layer {j} (biLSTM{', top' if j == num_layers - 1 else ''})"


def marked(tokens: Sequence[str], position: int, window: int = 12) -> str:
    """The sentence around ``position`` with the target in «»."""
    before, target, after = ex.highlight_parts(tokens, position, window)
    return f"{before} «{target}» {after}".strip()


def _context_rows(table: ex.TokenTable, rows: np.ndarray) -> np.ndarray:
    others = np.setdiff1d(np.arange(table.num_tokens), rows)
    others = np.array([r for r in others if ex.is_wordlike(table.token(int(r)))], dtype=np.int64)
    if len(others) > ex.MAX_CONTEXT_POINTS:
        others = others[np.linspace(0, len(others) - 1, ex.MAX_CONTEXT_POINTS).round().astype(int)]
    return others


def _project(points: np.ndarray, method: str, previous: np.ndarray | None, umap_state) -> ex.Projection:
    try:
        return ex.project(points, method, previous, seed=0, umap_state=umap_state)
    except Exception as err:  # a projection library failing must not take the page down
        return ex.Projection(ex.pca_2d(ex.l2_normalise(points)) if len(points) >= 3 else None, "pca",
                             f"The {method} projection failed ({md(err)}); showing PCA.")


def _layout(table: ex.TokenTable, rows: np.ndarray, context_rows: np.ndarray, points: np.ndarray, same: bool,
            controls: Controls, signature: tuple, memo: tuple | None, umap_state) -> tuple[ex.Projection, tuple]:
    """The map's projection, a function of the controls alone (so a link redraws the same map anywhere).

    The base layout of these points is the projection of their equal-weights mix, fitted from scratch with a
    fixed seed (memoised in ``memo`` while the points, the layer norm, the method and UMAP's readiness stay
    the same). Any other mix starts from the base (UMAP's and t-SNE's init) and is aligned to it (Procrustes),
    so points move smoothly while the sliders move and a fresh session gets the same picture.
    """
    ready = umap_state == "ready"
    key = (signature, controls.layer_norm, controls.projection, ready)
    if memo is not None and memo[0] == key:
        base = memo[1]
    else:
        equal = table.mix((0.0,) * table.num_layers, 1.0, controls.layer_norm)
        base_points = np.concatenate([equal[rows], equal[context_rows]]) if len(context_rows) else equal[rows]
        base = None
        if not ex.nearly_identical(base_points[:len(rows)]) and float(np.ptp(base_points, axis=0).max()) > 0:
            base = _project(base_points, controls.projection, None, umap_state)
        memo = (key, base)
    if same or base is None or base.coords is None:
        return _project(points, controls.projection, None, umap_state), memo
    if len(set(controls.weights)) <= 1:  # equal weights: the base itself
        return base, memo
    return _project(points, controls.projection, base.coords, umap_state), memo


def _query(controls: Controls, previous: Frame | None, word: str, n: int) -> int:
    query = controls.query
    if previous is not None and (previous.word, len(previous.rows)) != (word, n) or not 0 <= query < n:
        query = 0  # another word: its first occurrence (a link's query arrives with the first frame)
    if controls.clicked is not None and 0 <= controls.clicked < n and controls.clicked != (
            previous.clicked if previous is not None else None):
        query = controls.clicked
    return int(query)


def _sentence_neighbours(table, mixed, rows, q_row, controls) -> list[tuple[str, str, float, Kwic]]:
    if controls.same_word_only:
        cand = np.array([r for r in rows if r != q_row], dtype=np.int64)
    else:
        cand = np.array([r for r in range(table.num_tokens) if r != q_row and ex.is_wordlike(table.token(r))],
                        dtype=np.int64)
    found = ex.cosine_neighbours(mixed[q_row], mixed[cand], int(controls.k)) if len(cand) else []
    out = []
    for nb in found:
        r = int(cand[nb.index])
        li = int(table.line_of_row[r])
        out.append((table.token(r), table.lines[li].label or "", round(nb.similarity, 3),
                    kwic(table.lines[li].tokens, r - int(table.offsets[li]), CONTEXT_CHARS, CONTEXT_CHARS)))
    return out


def _reference_neighbours(reference: Reference | None, word: str, query_vector: np.ndarray,
                          controls: Controls) -> tuple[list[tuple[float, Kwic]] | None, str]:
    if reference is None or reference.table is None:
        return None, reference.note if reference is not None else ""
    ref = reference.table
    occ = ex.find_occurrences(ref.lines, word, controls.inflections, controls.fold_case)
    if not occ:
        return None, f"“{md(word)}” spelled exactly so does not occur in the reference sentences."
    ref_mixed = ref.mix(controls.weights, controls.gamma, controls.layer_norm)[ref.rows(occ)]
    found = ex.cosine_neighbours(query_vector, ref_mixed, int(controls.k))
    rows = [(round(nb.similarity, 3), kwic(ref.lines[occ[nb.index].line].tokens, occ[nb.index].position,
                                           CONTEXT_CHARS, CONTEXT_CHARS)) for nb in found]
    more = f" (of {reference.total:,} that contain it)" if reference.total > len(ref.lines) else ""
    return rows, f"Among {plural(len(occ), 'occurrence')} in {plural(len(ref.lines), 'reference sentence')}{more}."


def _layer0_neighbours(table: ex.TokenTable, reference: Reference | None, q_row: int, k: int,
                       types) -> tuple[list[tuple[str, float]], str]:
    # the vocabulary's type vectors once they are there; until then (or without them) the word types of the
    # input and of the word's reference sentences, which is all the page has embedded
    if types is not None and types.ready:
        query = table.layers(False)[0][q_row]
        return types.neighbours(table.token(q_row), query, k), types.status()
    found = ex.layer0_type_neighbours(table, reference.table if reference else None, q_row, k)
    return found, types.status() if types is not None else "Searched among your sentences' words."


def compute_frame(table: ex.TokenTable, occurrences: Sequence[ex.Occurrence], controls: Controls,
                  previous: Frame | None = None, *, model_key: str = "", word: str = "",
                  reference: Reference | None = None, umap_state=None, types=None) -> Frame:
    """The explorer's view of ``word``'s occurrences under ``controls``.

    Args:
        table: the sentences' activations; occurrences: of the word, n >= 1.
        previous: the last frame, a memo only: its base layout (see ``_layout``) and its separation scores of
            the layers are reused when they still apply, and its query and click tell a new click from an
            old one. The map does not depend on it: the same controls give the same map in any session.
        reference: the reference corpus for the word, for its neighbours column (None: no column).
        umap_state: ``UmapWarmUp.state`` (UMAP is used only once it is compiled).
        types: the model's ``app.type_vectors.TypeVectors`` for the layer-0 column (None, or not ready yet:
            the input's word types instead; ``Frame.layer0_note`` says which).
    Returns: the Frame.
    """
    start = time.perf_counter()
    num_layers = table.num_layers
    s = ex.softmax(controls.weights)
    mixed = table.mix(controls.weights, controls.gamma, controls.layer_norm)
    rows = table.rows(occurrences)
    x = mixed[rows]
    context_rows = _context_rows(table, rows) if controls.context else np.zeros(0, dtype=np.int64)
    points = np.concatenate([x, mixed[context_rows]]) if len(context_rows) else x
    # all occurrences with one vector (layer 0 is context-free): one spot instead of projected float noise,
    # which a projection would blow up into clusters
    same = ex.nearly_identical(x)
    if same:
        points = points.copy()
        points[:len(x)] = x[0]
    signature = (model_key, tuple(rows.tolist()), tuple(context_rows.tolist()))
    proj, base_layout = _layout(table, rows, context_rows, points, same, controls, signature,
                                previous.base_layout if previous is not None else None, umap_state)
    map_ms = (time.perf_counter() - start) * 1000

    n = len(occurrences)
    query = _query(controls, previous, word, n)
    q_row = int(rows[query])
    reference_rows, reference_note = _reference_neighbours(reference, word, mixed[q_row], controls)
    layer0, layer0_note = _layer0_neighbours(table, reference, q_row, int(controls.k), types)

    order = sorted(range(n), key=lambda i: (occurrences[i].label or "", i))
    shown = order if n <= MAX_MATRIX_OCCURRENCES else [
        order[i] for i in np.linspace(0, n - 1, MAX_MATRIX_OCCURRENCES).round().astype(int)]
    layers = table.layers(controls.layer_norm)
    names = [layer_name(j, num_layers) for j in range(num_layers)] + ["ELMo mix (current s, γ)"]
    vecs = [layers[j][rows] for j in range(num_layers)] + [mixed[rows]]
    panels = [ex.cosine_matrix(v[shown]) for v in vecs] if n >= 2 else []
    labels = [o.label for o in occurrences]
    sep_key = (signature, controls.layer_norm)
    if previous is not None and previous.separation_key == sep_key:
        per_layer = previous.separation[:num_layers]  # the layers do not depend on s or gamma
    else:
        per_layer = [ex.separation(vecs[j], labels) for j in range(num_layers)]
    scores = per_layer + [ex.separation(vecs[-1], labels)] if n >= 2 else []

    clusters = None if same else discover(x, controls.n_clusters or None)
    zero = ex.zero_rows(x)
    notes = []
    if n > MAX_MATRIX_OCCURRENCES:
        notes.append(f"Showing {MAX_MATRIX_OCCURRENCES} of {n} occurrences in the matrices (evenly spread).")
    return Frame(controls, model_key, word, s, mixed, rows, x, context_rows, same, zero, signature, proj, base_layout,
                 query, controls.clicked, layer0,
                 _sentence_neighbours(table, mixed, rows, q_row, controls), reference_rows, reference_note,
                 names, panels, shown, scores, sep_key, map_ms, clusters, notes, layer0_note)


# ---- small multiples: layer 0, 1, 2 and the mix side by side ------------------------------------------------
@dataclass
class LayerMaps:
    """The map of every layer next to the mix's, for ``frame``'s occurrences.

    names: the panel titles (layers 0..L, then the mix); coords: per panel (n, 2), each layer's fit
    Procrustes-aligned (rotation, reflection, scale, shift) onto the mix's layout, so the panels share one
    orientation and scale and only the arrangement differs; notes: per panel ("" or why it looks as it does);
    method: the projection every panel used (the one the mix's map used); fits: the layers' unaligned fits,
    which do not depend on w or gamma (reused while ``key`` holds).
    """

    key: tuple
    method: str
    names: list[str]
    coords: list[np.ndarray]
    notes: list[str]
    fits: list[np.ndarray]


def layer_maps(table: ex.TokenTable, frame: Frame, previous: LayerMaps | None = None,
               umap_state: str = "ready") -> LayerMaps | None:
    """Small multiples for a frame: each layer projected alone with the method of the frame's map, aligned
    to the mix's map (its occurrence points).

    Args:
        previous: the last result; its layer fits are reused when the points, layer norm and method are the
            same (a slider move changes only the mix panel and the alignment).
    Returns: None when the frame has no map (fewer than 3 occurrences).
    """
    if frame.coords is None:
        return None
    n = len(frame.rows)
    method = frame.projection.method if frame.projection.method in ("pca", "umap", "tsne") else "pca"
    key = (frame.signature[:2], frame.controls.layer_norm, method)
    layers = table.layers(frame.controls.layer_norm)
    num_layers = table.num_layers
    mix = frame.coords[:n]
    fits, notes = [], []
    for j in range(num_layers):
        if previous is not None and previous.key == key:
            fits, notes = previous.fits, previous.notes[:num_layers]
            break
        x = layers[j][frame.rows]
        if ex.nearly_identical(x):
            fits.append(np.zeros((n, 2)))
            notes.append("one vector for all: one spot")
            continue
        found = _project(x, method, None, umap_state)
        fits.append(found.coords if found.coords is not None else np.zeros((n, 2)))
        notes.append(found.note if found.method == method else f"{METHOD_NAMES.get(found.method, found.method)}: "
                                                                 f"{found.note}")
    aligned = []
    for fit in fits:
        if float(np.ptp(fit, axis=0).max()) == 0.0:
            aligned.append(np.repeat(mix.mean(axis=0, keepdims=True), n, axis=0))  # one spot, at the mix's centre
        else:
            aligned.append(ex.procrustes_align(fit, mix))
    names = [layer_name(j, num_layers) for j in range(num_layers)] + ["ELMo mix (current s, γ)"]
    mix_note = "one vector for all: one spot" if frame.same_vector else ""
    return LayerMaps(key, method, names, aligned + [mix], list(notes) + [mix_note], fits)

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
from app.safe import md

MAX_MATRIX_OCCURRENCES = 150  # similarity matrices spread this many occurrences at most
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
    layout: (signature, coords) to warm-start the next projection of the same points; query: the query
    occurrence; layer0_neighbours: [(word type, cosine)]; neighbours: [(token, label, cosine, context)] in the
    sentences; reference_neighbours: [(cosine, context)] or None; panels: [(name, (m, m) cosine matrix)] per
    layer and the mix over ``shown`` occurrences; separation: per layer and the mix; notes: for the user.
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
    layout: tuple | None
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
    notes: list[str] = field(default_factory=list)

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


def _query(controls: Controls, previous: Frame | None, word: str, n: int) -> int:
    query = controls.query
    if previous is None or (previous.word, len(previous.rows)) != (word, n) or not 0 <= query < n:
        query = 0
    if controls.clicked is not None and 0 <= controls.clicked < n and controls.clicked != (
            previous.clicked if previous is not None else None):
        query = controls.clicked
    return int(query)


def _sentence_neighbours(table, mixed, rows, q_row, controls) -> list[tuple[str, str, float, str]]:
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
                    marked(table.lines[li].tokens, r - int(table.offsets[li]), 6)))
    return out


def _reference_neighbours(reference: Reference | None, word: str, query_vector: np.ndarray,
                          controls: Controls) -> tuple[list[tuple[float, str]] | None, str]:
    if reference is None or reference.table is None:
        return None, reference.note if reference is not None else ""
    ref = reference.table
    occ = ex.find_occurrences(ref.lines, word, controls.inflections)
    ref_mixed = ref.mix(controls.weights, controls.gamma, controls.layer_norm)[ref.rows(occ)]
    found = ex.cosine_neighbours(query_vector, ref_mixed, int(controls.k))
    rows = [(round(nb.similarity, 3), marked(ref.lines[occ[nb.index].line].tokens, occ[nb.index].position, 8))
            for nb in found]
    more = f" (of {reference.total} that contain it)" if reference.total > len(ref.lines) else ""
    return rows, f"Among {len(occ)} occurrences in {len(ref.lines)} reference sentences{more}."


def compute_frame(table: ex.TokenTable, occurrences: Sequence[ex.Occurrence], controls: Controls,
                  previous: Frame | None = None, *, model_key: str = "", word: str = "",
                  reference: Reference | None = None, umap_state=None) -> Frame:
    """The explorer's view of ``word``'s occurrences under ``controls``.

    Args:
        table: the sentences' activations; occurrences: of the word, n >= 1.
        previous: the last frame: its layout warm-starts the projection of the same points, its separation
            scores of the layers are reused when only the mix changed, and its query and click tell a new
            click from an old one.
        reference: the reference corpus for the word, for its neighbours column (None: no column).
        umap_state: ``UmapWarmUp.state`` (UMAP is used only once it is compiled).
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
    layout = previous.layout if previous is not None else None
    warm = layout[1] if layout is not None and layout[0] == signature and not same else None
    proj = _project(points, controls.projection, warm, umap_state)
    if proj.coords is not None and not same:
        layout = (signature, proj.coords)
    map_ms = (time.perf_counter() - start) * 1000

    n = len(occurrences)
    query = _query(controls, previous, word, n)
    q_row = int(rows[query])
    reference_rows, reference_note = _reference_neighbours(reference, word, mixed[q_row], controls)

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

    zero = ex.zero_rows(x)
    notes = []
    if n > MAX_MATRIX_OCCURRENCES:
        notes.append(f"Showing {MAX_MATRIX_OCCURRENCES} of {n} occurrences in the matrices (evenly spread).")
    return Frame(controls, model_key, word, s, mixed, rows, x, context_rows, same, zero, signature, proj, layout,
                 query, controls.clicked, ex.layer0_type_neighbours(table, reference.table if reference else None,
                                                                    q_row, int(controls.k)),
                 _sentence_neighbours(table, mixed, rows, q_row, controls), reference_rows, reference_note,
                 names, panels, shown, scores, sep_key, map_ms, notes)

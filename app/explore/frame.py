"""Everything the explorer shows for one setting of its controls: ``compute_frame`` (the mix and the map at once;
the neighbours, matrices, scores and clusters when a view first reads them, see ``Frame``).

The explorer page reads its widgets into ``Controls``, calls ``compute_frame`` and renders the ``Frame``, with
the words this module writes for it (the mix's formula, notes, captions, the sense clusters' list); the speed
benchmark times the same call. No Streamlit here.

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

from app.explore import activations, inputs, mixing, neighbours, projections
from app.explore.clusters import NO_CLUSTER, SenseClusters, discover, no_clear_clusters_note
from app.render.display import Kwic, kwic, plural
from app.render.safe import md

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

    table: activations.TokenTable | None
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
    occurrence; panel_names: the layers' and the mix's names; shown: the occurrences in the matrices; notes: for
    the user.

    Computed when first read, since a control move redraws only the open view (the map needs none of them):
    layer0_neighbours: [(word type, cosine)] (layer0_note says among which words); neighbours: [(token, label,
    cosine, Kwic)] in the sentences; reference_neighbours: [(cosine, Kwic)] or None (reference_note: where
    from); panels: (m, m) cosine matrices per layer and the mix over ``shown``; separation: per layer and the
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
        return _sentence_neighbours(self.table, self.mixed, self.rows, self._q_row, self.controls)

    @cached_property
    def _reference_found(self) -> tuple[list[tuple[float, Kwic]] | None, str]:
        return _reference_neighbours(self.reference, self.word, self.mixed[self._q_row], self.controls)

    @property
    def reference_neighbours(self) -> list[tuple[float, Kwic]] | None:
        return self._reference_found[0]

    @property
    def reference_note(self) -> str:
        return self._reference_found[1]

    @cached_property
    def _layer0_found(self) -> tuple[list[tuple[str, float]], str]:
        return _layer0_neighbours(self.table, self.reference, self._q_row, int(self.controls.k), self.types)

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
        return None if self.coords is None else self.coords[:len(self.rows)]

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


def marked(tokens: Sequence[str], position: int, window: int = 12) -> str:
    """The sentence around ``position`` with the target in «»."""
    before, target, after = inputs.highlight_parts(tokens, position, window)
    return f"{before} «{target}» {after}".strip()


def _context_rows(table: activations.TokenTable, rows: np.ndarray) -> np.ndarray:
    others = np.setdiff1d(np.arange(table.num_tokens), rows)
    others = np.array([r for r in others if inputs.is_wordlike(table.token(int(r)))], dtype=np.int64)
    if len(others) > projections.MAX_CONTEXT_POINTS:
        others = others[np.linspace(0, len(others) - 1, projections.MAX_CONTEXT_POINTS).round().astype(int)]
    return others


def _project(points: np.ndarray, method: str, previous: np.ndarray | None) -> projections.Projection:
    try:
        return projections.project(points, method, previous, seed=0)
    except Exception as err:  # a projection library failing must not take the page down
        return projections.Projection(projections.pca_2d(projections.l2_normalise(points)) if len(points) >= 3 else None, "pca",
                             f"The {method} projection failed ({md(err)}); showing PCA.")


def _layout(table: activations.TokenTable, rows: np.ndarray, context_rows: np.ndarray, points: np.ndarray, same: bool,
            controls: Controls, signature: tuple, memo: tuple | None) -> tuple[projections.Projection, tuple]:
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
        if not projections.nearly_identical(base_points[:len(rows)]) and float(np.ptp(base_points, axis=0).max()) > 0:
            base = _project(base_points, controls.projection, None)
        memo = (key, base)
    if same or base is None or base.coords is None:
        return _project(points, controls.projection, None), memo
    if len(set(controls.weights)) <= 1:  # equal weights: the base itself
        return base, memo
    return _project(points, controls.projection, base.coords), memo


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
        cand = np.array([r for r in range(table.num_tokens) if r != q_row and inputs.is_wordlike(table.token(r))],
                        dtype=np.int64)
    found = neighbours.cosine_neighbours(mixed[q_row], mixed[cand], int(controls.k)) if len(cand) else []
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
    occ = inputs.find_occurrences(ref.lines, word, controls.inflections, controls.fold_case)
    if not occ:
        return None, f"“{md(word)}” spelled exactly so does not occur in the reference sentences."
    ref_mixed = ref.mix(controls.weights, controls.gamma, controls.layer_norm)[ref.rows(occ)]
    found = neighbours.cosine_neighbours(query_vector, ref_mixed, int(controls.k))
    rows = [(round(nb.similarity, 3), kwic(ref.lines[occ[nb.index].line].tokens, occ[nb.index].position,
                                           CONTEXT_CHARS, CONTEXT_CHARS)) for nb in found]
    more = f" (of {reference.total:,} that contain it)" if reference.total > len(ref.lines) else ""
    return rows, f"Among {plural(len(occ), 'occurrence')} in {plural(len(ref.lines), 'reference sentence')}{more}."


def _layer0_neighbours(table: activations.TokenTable, reference: Reference | None, q_row: int, k: int,
                       types) -> tuple[list[tuple[str, float]], str]:
    # the vocabulary's type vectors once they are there; until then (or without them) the word types of the
    # input and of the word's reference sentences, which is all the page has embedded
    if types is not None and types.ready:
        query = table.layers(False)[0][q_row]
        return types.neighbours(table.token(q_row), query, k), types.status()
    found = neighbours.layer0_type_neighbours(table, reference.table if reference else None, q_row, k)
    return found, types.status() if types is not None else "Searched among your sentences' words."


def compute_frame(table: activations.TokenTable, occurrences: Sequence[inputs.Occurrence], controls: Controls,
                  previous: Frame | None = None, *, model_key: str = "", word: str = "",
                  reference: Reference | None = None, umap_state=None, types=None) -> Frame:
    """The explorer's view of ``word``'s occurrences under ``controls``.

    Args:
        table: the sentences' activations; occurrences: of the word, n >= 1.
        previous: the last frame, a memo only: its base layout (see ``_layout``) and its separation scores of
            the layers are reused when they still apply, and its query and click tell a new click from an
            old one. The map does not depend on it: the same controls give the same map in any session.
        reference: the reference corpus for the word, for its neighbours column (None: no column).
        umap_state: ignored: the map never depends on UMAP's warm-up (a UMAP map waits for it); accepted so that
            callers written before still run.
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
        points[:len(x)] = x[0]
    signature = (model_key, tuple(rows.tolist()), tuple(context_rows.tolist()))
    proj, base_layout = _layout(table, rows, context_rows, points, same, controls, signature,
                                previous.base_layout if previous is not None else None)
    map_ms = (time.perf_counter() - start) * 1000

    n = len(occurrences)
    order = sorted(range(n), key=lambda i: (occurrences[i].label or "", i))
    shown = order if n <= MAX_MATRIX_OCCURRENCES else [
        order[i] for i in np.linspace(0, n - 1, MAX_MATRIX_OCCURRENCES).round().astype(int)]
    names = [layer_name(j, num_layers) for j in range(num_layers)] + ["ELMo mix (current s, γ)"]
    sep_key = (signature, controls.layer_norm)
    shared = previous.layer_scores if previous is not None and previous.separation_key == sep_key else {}
    notes = []
    if n > MAX_MATRIX_OCCURRENCES:
        notes.append(f"Showing {MAX_MATRIX_OCCURRENCES} of {n} occurrences in the matrices (evenly spread).")
    return Frame(controls, model_key, word, s, mixed, rows, x, context_rows, same, neighbours.zero_rows(x), signature, proj,
                 base_layout, _query(controls, previous, word, n), controls.clicked, names, shown, sep_key, map_ms,
                 table, list(occurrences), reference, types, shared, notes)


# ---- what the page says about a frame (markdown; user text escaped) ------------------------------------------
def mix_formula(s: Sequence[float], gamma: float) -> str:
    """The ELMo formula with this mix's numbers: "ELMo = γ · Σ_j s_j · h_j with s = softmax(w): ELMo = 1 ·
    (0.333·h_0 + ...)"."""
    terms = " + ".join(f"{v:.3f}·h_{j}" for j, v in enumerate(s))
    return f"ELMo = γ · Σ_j s_j · h_j with s = softmax(w): ELMo = {gamma:g} · ({terms})"


def zero_note(frame: Frame) -> str:
    """A warning when some occurrences have an all-zero vector in this mix ("" when none do)."""
    zero = frame.zero
    if not zero.any():
        return ""
    numbers = ", ".join(f"#{i + 1}" for i in np.flatnonzero(zero)[:10])
    return (f"{int(zero.sum())} of the {len(zero)} occurrences have an all-zero vector in this mix (numbered "
            f"{numbers}): a zero vector has no direction, so it has no meaningful cosine similarity. It is left out "
            "of the separation scores; check the model's weights.")


def same_vector_note(frame: Frame) -> str:
    """Why all occurrences sit at one spot ("" when they do not)."""
    if not frame.same_vector:
        return ""
    why = ("layer 0 is context-free, so a word's vector does not depend on its sentence" if frame.s[0] > 0.99
           else "the occurrences do not differ in this mix (e.g. identical sentences)")
    return (f"All {plural(len(frame.rows), 'occurrence')} have the same vector here: {why}. They are drawn at one "
            "spot; move weight to layers 1 and 2 to see context effects.")


def case_split(occurrences: Sequence[inputs.Occurrence]) -> bool:
    """Whether the occurrences are written with different capitals ("Spring", "spring"), which layer 0 (the
    case-sensitive character CNN) reads as different words."""
    forms = inputs.spellings(occurrences)
    return len(forms) > len({f.casefold() for f in forms})


def word_summary(word: str, occurrences: Sequence[inputs.Occurrence]) -> tuple[str, str]:
    """(headline, caption) for the target word: how often it occurs in how many sentences and in which forms;
    the caption ("" when not needed) says that layer 0 splits the occurrences by capitalisation."""
    forms = inputs.spellings(occurrences)
    n_lines = len({o.line for o in occurrences})
    head = (f"**{plural(len(occurrences), 'occurrence')}** of “{md(word)}” in {plural(n_lines, 'sentence')}; "
            f"{'forms' if len(forms) > 1 else 'form'} as written: {', '.join(md(f) for f in forms[:12])}")
    if not case_split(occurrences):
        return head, ""
    return head, ("Layer 0 (the character CNN) reads each spelling as written, capitals included: "
                  f"{' and '.join(f'“{md(f)}”' for f in forms[:3])} get different layer-0 vectors, so at layer 0 "
                  "these occurrences split by capitalisation, not by sense. Colour the map by spelling to see it; "
                  "untick “treat case as the same word” to keep one spelling.")


def separation_caption(frame: Frame, occurrences: Sequence[inputs.Occurrence]) -> str:
    """How to read the separation chart: the scores shown, the frame's note, and capitalisation at layer 0."""
    scores = frame.separation
    has_knn = any(s.knn_accuracy is not None for s in scores)
    forms = inputs.spellings(occurrences)
    case_note = ("" if not case_split(occurrences) else
                 f" Layer 0 sees {' and '.join(md(f) for f in forms[:3])} as different words (capitals are part of "
                 "the spelling), so its score measures the split by capitalisation here, not by sense.")
    return (("1-NN accuracy: share of occurrences whose nearest other occurrence (cosine) has the same label "
             "(leave-one-out; chance = random neighbour). " if has_knn else "")
            + "Silhouette: (b − a)/max(a, b) with cosine distances, −1…1, higher = senses further apart. "
            + ((scores[0].note if scores else "") or "") + case_note)


def method_name(method: str) -> str:
    """A projection's name as shown ("UMAP"); the automatic choice is "the automatic projection"."""
    return METHOD_NAMES.get(method, "the automatic projection" if method == "auto" else method)


def map_caption(frame: Frame) -> str:
    """The caption under the map: what is projected, how, and what a click does."""
    n, context = len(frame.rows), len(frame.context_rows)
    what = f"the {n} occurrence vectors" + (f" and {context} other words" if context else "")
    return (f"{method_name(frame.projection.method)} of {what} (cosine geometry: vectors scaled to unit length; "
            "the axes have no units; fitted with a fixed seed from the equal-weights layout, so the same settings "
            f"give the same map). Click a point to make it the neighbours query (ring). {frame.projection.note} "
            f"Mix + projection: {frame.map_ms:.0f} ms.")


@dataclass(frozen=True)
class ClusterGroup:
    """One sense cluster as the Senses tab lists it: its id (``clusters.NO_CLUSTER`` for all-zero vectors), its
    name and the occurrences in it."""

    cluster: int
    name: str
    members: list[int]


def cluster_summary(found: SenseClusters) -> tuple[str, str]:
    """(headline, silhouettes line or "") of the found clusters (``found.clear`` False: "no clear clusters", why)."""
    small = (f"; {', '.join(str(k) for k in sorted(found.too_small))} left out (a cluster under "
             f"{found.min_size} occurrences)" if found.too_small else "")
    per_k = ("Silhouette per number of clusters: " + ", ".join(f"{k}: {v:.2f}" for k, v in found.silhouettes.items())
             + small if len(found.silhouettes) > 1 or (found.too_small and found.silhouettes) else "")
    if not found.clear:
        # our own words (numbers and fixed text; md would put a word joiner in "clusters:")
        return no_clear_clusters_note(found).replace("No clear clusters:", "**No clear clusters**:", 1) + (
            " " + md(found.note) if found.note else ""), per_k
    how = ("chosen by silhouette among " + ", ".join(str(k) for k in found.silhouettes)
           if found.chosen_by == "silhouette" else "set by hand")
    head = (f"**{found.k} clusters** in the current mix ({how}); silhouette {found.silhouette:.2f} "
            "(−1…1, higher = groups further apart). " + md(found.note))
    return head, per_k


def cluster_groups(found: SenseClusters) -> list[ClusterGroup]:
    """The clusters in order, each with its members (occurrence indices)."""
    groups = []
    for c in sorted(set(found.labels.tolist())):
        members = [int(i) for i in found.members(c)]
        groups.append(ClusterGroup(c, f"cluster {c + 1}" if c != NO_CLUSTER else "no cluster (all-zero vector)",
                                   members))
    return groups


KwicColumns = list[tuple[str, str, list[str]]]  # the leading columns of ``display.kwic_table``


def occurrence_lines(occurrences: Sequence[inputs.Occurrence], lines: Sequence[inputs.Line],
                     members: Sequence[int] | None = None, chars: int = CONTEXT_CHARS) -> tuple[list[Kwic], KwicColumns]:
    """The concordance rows of some occurrences (default: all) with their number as the page counts (#1 ...)
    and, when any has one, their sense label: the arguments of ``display.kwic_table``."""
    members = list(range(len(occurrences))) if members is None else list(members)
    rows = [kwic(lines[occurrences[i].line].tokens, occurrences[i].position, chars, chars) for i in members]
    columns: KwicColumns = [("#", "n", [f"#{i + 1}" for i in members])]
    if any(occurrences[i].label for i in members):
        columns.append(("label", "lab", [occurrences[i].label or "" for i in members]))
    return rows, columns


def neighbour_lines(frame: Frame) -> tuple[list[Kwic], KwicColumns]:
    """The frame's nearest neighbours in the sentences as concordance rows, with their cosine and, when any
    has one, their label."""
    found = frame.neighbours
    columns: KwicColumns = [("cos", "c", [f"{cos:.3f}" for _, _, cos, _ in found])]
    if any(label for _, label, _, _ in found):
        columns.append(("label", "lab", [label for _, label, _, _ in found]))
    return [k for *_, k in found], columns


def no_neighbours_note(frame: Frame) -> str | None:
    """Why the sentences' neighbour table is empty, when it is: a word that occurs once has no other occurrence
    for "same word only" to search."""
    if frame.neighbours or not frame.controls.same_word_only:
        return None
    return (f"“{md(frame.word)}” occurs once in your sentences, so it has no other occurrence to compare with. Untick "
            "“same word only” to search every word of your sentences, or add sentences that use it.")


def query_option(occurrences: Sequence[inputs.Occurrence], lines: Sequence[inputs.Line], i: int) -> str:
    """How occurrence ``i`` reads in the query box: "#3 · river · … on the «bank» of …" ("#3 · … on the «bank» of …"
    for an unlabelled sentence)."""
    occ = occurrences[i]
    label = f"{occ.label} · " if occ.label else ""
    return f"#{i + 1} · {label}{marked(lines[occ.line].tokens, occ.position, 6)}"


def tokenization_rows(lines: Sequence[inputs.Line]) -> dict[str, list]:
    """The columns of the "tokenization the model sees" table: sentence number (from 1), label, tokens."""
    return {"#": list(range(1, len(lines) + 1)), "label": [ln.label or "" for ln in lines],
            "tokens": [" · ".join(ln.tokens) for ln in lines]}


def embedding_note(seconds: float, computed: int, table: activations.TokenTable) -> str:
    """How long the last biLM run took, for the page's timings."""
    total = len(table.lines)
    cached = "" if computed >= total else "; the rest came from the cache"
    return (f"Last biLM run: {seconds * 1000:.0f} ms for {computed} new of {total} sentences "
            f"({table.num_tokens} tokens{cached}).")


def occurrence_layers(table: activations.TokenTable, frame: Frame) -> np.ndarray:
    """float32 (L + 1, n, D): every layer's vectors of the frame's occurrences, layer-normed when the mix is."""
    return table.layers(frame.controls.layer_norm)[:, frame.rows]


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


def layer_maps(table: activations.TokenTable, frame: Frame, previous: LayerMaps | None = None,
               umap_state: str | None = None) -> LayerMaps | None:
    """Small multiples for a frame: each layer projected alone with the method of the frame's map, aligned
    to the mix's map (its occurrence points).

    Args:
        previous: the last result; its layer fits are reused when the points, layer norm and method are the
            same (a slider move changes only the mix panel and the alignment).
        umap_state: ignored (as in ``compute_frame``).
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
        if projections.nearly_identical(x):
            fits.append(np.zeros((n, 2)))
            notes.append("one vector for all: one spot")
            continue
        found = _project(x, method, None)
        fits.append(found.coords if found.coords is not None else np.zeros((n, 2)))
        notes.append(found.note if found.method == method else f"{METHOD_NAMES.get(found.method, found.method)}: "
                                                                 f"{found.note}")
    aligned = []
    for fit in fits:
        if float(np.ptp(fit, axis=0).max()) == 0.0:
            aligned.append(np.repeat(mix.mean(axis=0, keepdims=True), n, axis=0))  # one spot, at the mix's centre
        else:
            aligned.append(projections.procrustes_align(fit, mix))
    names = [layer_name(j, num_layers) for j in range(num_layers)] + ["ELMo mix (current s, γ)"]
    mix_note = "one vector for all: one spot" if frame.same_vector else ""
    return LayerMaps(key, method, names, aligned + [mix], list(notes) + [mix_note], fits)

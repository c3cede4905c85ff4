"""The explorer's words about a frame: the mix's formula, notes, captions, the map's title, the sense clusters'
list and the concordance rows (markdown unless said otherwise; user text escaped with ``app.render.safe``). No
Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from app.explore import activations, inputs
from app.explore.clusters import NO_CLUSTER, SenseClusters, no_clear_clusters_note
from app.explore.controls import Controls
from app.explore.frame import METHOD_NAMES, Frame
from app.explore.frame_neighbours import CONTEXT_CHARS
from app.explore.text import Kwic, kwic, plural
from app.render.safe import md, plot, vega


def marked(tokens: Sequence[str], position: int, window: int = 12) -> str:
    """The sentence around ``position`` with the target in «»."""
    before, target, after = inputs.highlight_parts(tokens, position, window)
    return f"{before} «{target}» {after}".strip()


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
    return (
        f"{int(zero.sum())} of the {len(zero)} occurrences have an all-zero vector in this mix (numbered "
        f"{numbers}): a zero vector has no direction, so it has no meaningful cosine similarity. It is left out "
        "of the separation scores; check the model's weights."
    )


def same_vector_note(frame: Frame) -> str:
    """Why all occurrences sit at one spot ("" when they do not)."""
    if not frame.same_vector:
        return ""
    why = (
        "layer 0 is context-free, so a word's vector does not depend on its sentence"
        if frame.s[0] > 0.99
        else "the occurrences do not differ in this mix (e.g. identical sentences)"
    )
    return (
        f"All {plural(len(frame.rows), 'occurrence')} have the same vector here: {why}. They are drawn at one "
        "spot; move weight to layers 1 and 2 to see context effects."
    )


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
    head = (
        f"**{plural(len(occurrences), 'occurrence')}** of “{md(word)}” in {plural(n_lines, 'sentence')}; "
        f"{'forms' if len(forms) > 1 else 'form'} as written: {', '.join(md(f) for f in forms[:12])}"
    )
    if not case_split(occurrences):
        return head, ""
    return head, (
        "Layer 0 (the character CNN) reads each spelling as written, capitals included: "
        f"{' and '.join(f'“{md(f)}”' for f in forms[:3])} get different layer-0 vectors, so at layer 0 "
        "these occurrences split by capitalisation, not by sense. Colour the map by spelling to see it; "
        "untick “treat case as the same word” to keep one spelling."
    )


def no_separation_note(frame: Frame) -> str:
    """Why no panel has a separation score, panel by panel when the reasons differ: layer 0 gives every
    occurrence of a word the same vector, the contextual layers may only find no grouping."""
    notes = [(name, s.note) for name, s in zip(frame.panel_names, frame.separation) if s.note]
    if not notes:
        return "No score for this input."
    if len({note for _, note in notes}) == 1:
        return notes[0][1]
    return " ".join(f"{name}: {note}" for name, note in notes)


def separation_caption(frame: Frame, occurrences: Sequence[inputs.Occurrence]) -> str:
    """How to read the separation chart: the scores shown, the frame's note, and capitalisation at layer 0."""
    scores = frame.separation
    has_knn = any(s.knn_accuracy is not None for s in scores)
    forms = inputs.spellings(occurrences)
    case_note = (
        ""
        if not case_split(occurrences)
        else f" Layer 0 sees {' and '.join(md(f) for f in forms[:3])} as different words (capitals are part of "
        "the spelling), so its score measures the split by capitalisation here, not by sense."
    )
    return (
        (
            "1-NN accuracy: share of occurrences whose nearest other occurrence (cosine) has the same label "
            "(leave-one-out; chance = random neighbour). "
            if has_knn
            else ""
        )
        + "Silhouette: (b − a)/max(a, b) with cosine distances, −1…1, higher = senses further apart. "
        + ((scores[0].note if scores else "") or "")
        + case_note
    )


def method_name(method: str) -> str:
    """A projection's name as shown ("UMAP"); the automatic choice is "the automatic projection"."""
    return METHOD_NAMES.get(method, "the automatic projection" if method == "auto" else method)


def map_caption(frame: Frame) -> str:
    """The caption under the map: what is projected, how, and what a click does."""
    n, context = len(frame.rows), len(frame.context_rows)
    what = f"the {n} occurrence vectors" + (f" and {context} other words" if context else "")
    if frame.projection.method == "live":
        return (
            f"Fixed axes: each point is what a task model receives, [x_k; γ·ELMo_k] (x_k: the word's context-free "
            f"layer-0 vector), for {what}, on two axes fitted once to all layers, framed by the weights alone: at γ "
            "near 0 each spelling sits on one spot, a larger γ lets the context spread the points. Dragging a weight or γ "
            "moves the map in your browser; letting go updates the neighbours and the link. Click a point to make "
            f"it the neighbours query (ring). Mix + map: {frame.map_ms:.0f} ms."
        )
    return (
        f"{method_name(frame.projection.method)} of {what} (cosine geometry: vectors scaled to unit length; "
        "the axes have no units; fitted with a fixed seed from the equal-weights layout, so the same settings "
        f"give the same map). Click a point to make it the neighbours query (ring). {md(frame.projection.note)} "
        f"Mix + projection: {frame.map_ms:.0f} ms."
    )


@dataclass(frozen=True)
class ClusterGroup:
    """One sense cluster as the Senses tab lists it: its id (``clusters.NO_CLUSTER`` for all-zero vectors), its
    name and the occurrences in it."""

    cluster: int
    name: str
    members: list[int]


def cluster_summary(found: SenseClusters) -> tuple[str, str]:
    """(headline, silhouettes line or "") of the found clusters (``found.clear`` False: "no clear clusters", why)."""
    small = (
        f"; {', '.join(str(k) for k in sorted(found.too_small))} left out (a cluster under "
        f"{found.min_size} occurrences)"
        if found.too_small
        else ""
    )
    per_k = (
        "Silhouette per number of clusters: " + ", ".join(f"{k}: {v:.2f}" for k, v in found.silhouettes.items()) + small
        if len(found.silhouettes) > 1 or (found.too_small and found.silhouettes)
        else ""
    )
    if not found.clear:
        # our own words (numbers and fixed text; md would put a word joiner in "clusters:")
        return no_clear_clusters_note(found).replace("No clear clusters:", "**No clear clusters**:", 1) + (
            " " + md(found.note) if found.note else ""
        ), per_k
    how = (
        "chosen by silhouette among " + ", ".join(str(k) for k in found.silhouettes)
        if found.chosen_by == "silhouette"
        else "set by hand"
    )
    head = (
        f"**{found.k} clusters** in the current mix ({how}); silhouette {found.silhouette:.2f} "
        "(−1…1, higher = groups further apart). " + md(found.note)
    )
    return head, per_k


def cluster_groups(found: SenseClusters) -> list[ClusterGroup]:
    """The clusters in order, each with its members (occurrence indices)."""
    groups = []
    for c in sorted(set(found.labels.tolist())):
        members = [int(i) for i in found.members(c)]
        groups.append(
            ClusterGroup(c, f"cluster {c + 1}" if c != NO_CLUSTER else "no cluster (all-zero vector)", members)
        )
    return groups


KwicColumns = list[tuple[str, str, list[str]]]  # the leading columns of ``display.kwic_table``


def occurrence_lines(
    occurrences: Sequence[inputs.Occurrence],
    lines: Sequence[inputs.Line],
    members: Sequence[int] | None = None,
    chars: int = CONTEXT_CHARS,
) -> tuple[list[Kwic], KwicColumns]:
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
    if frame.neighbours or not frame.controls.same_word:
        return None
    return (
        f"“{md(frame.word)}” occurs once in your sentences, so it has no other occurrence to compare with. Untick "
        "“same word only” to search every word of your sentences, or add sentences that use it."
    )


def query_option(occurrences: Sequence[inputs.Occurrence], lines: Sequence[inputs.Line], i: int) -> str:
    """How occurrence ``i`` reads in the query box: "#3 · river · … on the «bank» of …" ("#3 · … on the «bank» of …"
    for an unlabelled sentence)."""
    occ = occurrences[i]
    label = f"{occ.label} · " if occ.label else ""
    return f"#{i + 1} · {label}{marked(lines[occ.line].tokens, occ.position, 6)}"


def tokenization_rows(lines: Sequence[inputs.Line]) -> dict[str, list]:
    """The columns of the "tokenization the model sees" table: sentence number (from 1), label, tokens."""
    return {
        "#": list(range(1, len(lines) + 1)),
        "label": [ln.label or "" for ln in lines],
        "tokens": [" · ".join(ln.tokens) for ln in lines],
    }


def embedding_note(seconds: float, computed: int, table: activations.TokenTable) -> str:
    """How long the last biLM run took, for the page's timings."""
    total = len(table.lines)
    cached = "" if computed >= total else "; the rest came from the cache"
    return (
        f"Last biLM run: {seconds * 1000:.0f} ms for {computed} new of {total} sentences "
        f"({table.num_tokens} tokens{cached})."
    )


def reference_note(frame: Frame) -> str:
    """Where the reference corpus column's neighbours come from, or why it has none ("" without a reference)."""
    reference = frame.reference
    if reference is None:
        return ""
    if reference.table is None:
        return reference.note
    found = frame.reference_found
    if not found:
        return f"“{md(frame.word)}” spelled exactly so does not occur in the reference sentences."
    sentences = len(reference.table.lines)
    more = f" (of {reference.total:,} that contain it)" if reference.total > sentences else ""
    return f"Among {plural(found, 'occurrence')} in {plural(sentences, 'reference sentence')}{more}."


def map_title_text(controls: Controls, s: Sequence[float], method: str) -> str:
    """The map's title as plain text (the Vega-Lite map, its PNG and HTML): ``controls``' word and model, s, γ,
    layer norm and the projection's name ``method``."""
    shown = " / ".join(f"{v:.2f}" for v in s)
    ln = ", layer norm" if controls.layer_norm else ""
    return vega(f"“{controls.word}” · {controls.model} · s = {shown} · γ = {controls.gamma:g}{ln} · {method}")


def map_title(controls: Controls, s: Sequence[float], method: str) -> str:
    """The map's title for plotly (its pseudo-HTML escaped): ``map_title_text``."""
    return plot(map_title_text(controls, s, method))


def frame_title(frame: Frame, model: str) -> str:
    """The plain-text title of ``frame``'s map drawn with the model shown as ``model``."""
    shown = replace(frame.controls, word=frame.word, model=model)
    return map_title_text(shown, frame.s, method_name(frame.projection.method))

"""The explorer's widgets: their values as one ``Controls`` and back, the weight sliders' one writer, the rules
of the word box, the query and the colour choice, the Compare tab's boxes, and what survives a page switch.

* **Controls.** ``controls_of`` reads every control from the session key named after its field
  (``app.session.keys``); ``widget_values`` is the inverse, which ``init_widgets`` fills in from the last
  controls (``LAST``: the link's on a session's first run).
* **Page switches.** Streamlit forgets a widget's value once the widget is not drawn (the Layers page is shown),
  so the explorer saves the values of ``KEPT`` on every run (``remember``) and puts back what was forgotten
  (``restore``) before drawing them. The weight sliders have one writer, ``set_layer_weights`` (the presets,
  "Fit s", the Layers page's "use these weights": ``apply_weights``).

No Streamlit import: ``state`` is ``st.session_state`` on the pages and a dict in the tests.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, MutableMapping, Sequence

from app.explore import inputs, mixing
from app.explore.controls import DEFAULT, Controls
from app.explore.probes import weights_for_explorer
from app.explore.projections import MIN_POINTS_FOR_MAP
from app.explore.text import visible
from app.render.safe import md
from app.session.keys import (
    COLOR_BY,
    COLOR_BY_CHOICES,
    COLOR_SET,
    COMPARE_A,
    COMPARE_B,
    INFLECTIONS,
    KEPT,
    LAST,
    LINK_NOTES,
    LINK_QUERY,
    MAP_CHART,
    MAP_VIEW,
    MAP_VIEWS,
    MAX_LINK_WEIGHTS,
    PRESENT,
    QUERY,
    SAVED,
    SENTENCES,
    TAB,
    TABS,
    W_RANGE,
    WORD,
    key,
    private,
    weight_key,
)
from app.session.link import clamp_query


def query_of(state: MutableMapping, n: int) -> tuple[int, str]:
    """The query occurrence for this run among ``n`` occurrences: the widget's, else #1; and a note for the user
    when the session's link asked for one that does not exist (said once: the link's query is consumed)."""
    query = state.get(QUERY)
    link_query = state.pop(LINK_QUERY, None)  # only on the session's first frame
    if isinstance(query, int) and 0 <= query < n:
        return query, ""
    query, note = clamp_query(query if isinstance(query, int) else 0, n)
    return query, note if link_query is not None else ""


def clicked_occurrence(selection: object, n: int) -> int | None:
    """The occurrence index of the first point clicked on the map, or None. The chart's selection state is the
    Vega-Lite map's point selection, ``{"selection": {"pick": [{"idx": i}]}}`` (``app.render.map_spec.PICK``;
    only the occurrences can be picked). A malformed selection is no click."""
    try:
        for point in (selection or {}).get("selection", {}).get("pick") or []:
            idx = int(point.get("idx", -1))
            if 0 <= idx < n:
                return idx
    except (TypeError, ValueError, AttributeError, IndexError):
        return None
    return None


def color_by_choices(
    state: MutableMapping,
    has_labels: bool,
    several_spellings: bool,
    has_clusters: bool,
    label_set: Iterable[str | None] | None = None,
) -> list[str]:
    """The map's "colour by" choices that mean something here (labels given, spellings differ, clusters found);
    a remembered choice that does not is replaced by the first that does.

    ``label_set``: the occurrences' sense labels (None for an unlabelled one), which tell one sentence set from
    another: when they change to a set that has labels (a labelled example or file replaces what was there, or
    labels are typed in), the colour goes to "label", whatever the last set was coloured by. A choice the user
    makes for a set (or the link's, on a session's first frame) stays while the labels stay the same, so
    editing a sentence keeps it. None: no tracking (the choice only has to be valid).
    """
    choices = [
        c
        for c in COLOR_BY_CHOICES
        if (c != "label" or has_labels) and (c != "spelling" or several_spellings) and (c != "cluster" or has_clusters)
    ]
    if label_set is not None:
        labels = tuple(sorted({lab for lab in label_set if lab}))
        seen = state.get(COLOR_SET)
        state[COLOR_SET] = labels
        if seen is not None and seen != labels and labels and "label" in choices:
            state[COLOR_BY] = "label"
    if state.get(COLOR_BY) not in choices:
        state[COLOR_BY] = choices[0]
    return choices


def drop_unknown_models(state: MutableMapping, known: Sequence[str]) -> None:
    """Forget a Compare-tab model that this session no longer offers (an unloaded upload, a link's unknown one),
    so its box shows the placeholder."""
    for k in (COMPARE_A, COMPARE_B):
        if state.get(k) is not None and state[k] not in known:
            del state[k]


def default_comparison(state: MutableMapping, specs: Sequence[str], current: str | None) -> None:
    """When neither Compare model is picked: the page's model on the left (``current``, its spec from
    ``app.serving.models.comparison_spec``, when it is one of ``specs``; else the first) and the next one on the right,
    so that the tab opens on a comparison rather than two empty boxes."""
    if state.get(COMPARE_A) is not None or state.get(COMPARE_B) is not None or len(specs) < 2:
        return
    left = current if current in specs else specs[0]
    state[COMPARE_A], state[COMPARE_B] = left, next(spec for spec in specs if spec != left)


def keep_comparison_table(state: MutableMapping, key: tuple, table: object) -> None:
    """Remember another model's token table of the current sentences (``key``: (model key, the sentences'
    tokens)) for the Compare tab: tables of other sentences are dropped, and at most the two sides are kept."""
    memo = {k: v for k, v in state.get(private("compare_tables"), {}).items() if k[1] == key[1]}
    memo[key] = table
    state[private("compare_tables")] = dict(list(memo.items())[-2:])


def comparison_table(state: Mapping, key: tuple) -> object | None:
    """A table ``keep_comparison_table`` kept, or None."""
    return state.get(private("compare_tables"), {}).get(key)


def pick_word(state: MutableMapping, counts: Mapping[str, int], lines: Sequence[inputs.Line], fold_case: bool) -> str:
    """Make the word box (``WORD``) hold a word of the current sentences (``counts``: word -> occurrences, as
    ``explore.word_counts`` groups them); returns a note for the user ("" when there is none to give).

    A word asked for (typed, or from a link) that occurs is kept (folded when ``fold_case``); asked in one case
    and written in another with exact case, its most frequent spelling here. Except after the text changed
    (a new set pasted, typed or uploaded), when the word had a map in the last text and now occurs too rarely
    for one (``projections.MIN_POINTS_FOR_MAP``, counted as the map counts, inflections included when asked):
    then the set's own word (``explore.map_word``: the one its labels are about, else the most frequent), when
    one has a map. A word without a map that the user picked stays through edits, and a link's word is kept
    on the session's first text. A word that does not occur gives way to the set's own word that has a map
    (after a text change), else the most frequent (``explore.suggest_word``), with a calm note only when the
    word came from the session's link (its first text).
    """
    asked = state.get(WORD)
    text = state.get(SENTENCES) or ""
    last_text = state.get(private("word_text"))
    first_text = last_text is None
    new_text = not first_text and last_text != text
    state[private("word_text")] = text
    had_map = bool(state.get(private("word_mapped")))
    note = ""
    word = None
    if isinstance(asked, str) and asked.strip():
        wanted = asked.strip().casefold() if fold_case else asked.strip()
        folded = asked.strip().casefold()
        if wanted in counts:
            word = wanted
        elif not fold_case and folded in {w.casefold() for w in counts}:
            word = next(w for w in counts if w.casefold() == folded)
    if word is not None and new_text and had_map and not _has_map(state, lines, word, fold_case):
        word = inputs.map_word(lines, fold_case, MIN_POINTS_FOR_MAP) or word
    if word is None:
        word = (inputs.map_word(lines, fold_case, MIN_POINTS_FOR_MAP) if new_text else None) or inputs.suggest_word(
            lines, fold_case
        )
        if isinstance(asked, str) and asked.strip() and first_text:
            note = (
                f"The link's word “{md(visible(asked))}” does not occur in these sentences; showing "
                f"“{md(word)}”, the most frequent word here."
            )
    state[WORD] = word
    state[private("word_mapped")] = _has_map(state, lines, word, fold_case)
    return note


def _has_map(state: Mapping, lines: Sequence[inputs.Line], word: str, fold_case: bool) -> bool:
    """Whether ``word`` occurs often enough in ``lines`` for a map, counted as the page counts its occurrences."""
    found = inputs.find_occurrences(lines, word, bool(state.get(INFLECTIONS)), fold_case)
    return len(found) >= MIN_POINTS_FOR_MAP


def init_widgets(state: MutableMapping, num_layers: int) -> None:
    """Before the explorer draws its widgets: put back kept controls another page made Streamlit drop
    (``restore``), fill missing widget values from the last view (``LAST``, the link's on a session's first
    run), and write the present ones again.

    Writing again matters: a value set while the page was not shown (the Layers page's "use these weights") is
    kept by Streamlit under the widget id, and a widget that (re)mounts with such a value is sent without
    "set_value", so the browser would show the widget's default (w = -5) and send that back. A value written on
    this run is a fresh session-state value, which the browser adopts.
    """
    restore(state)
    view = state[LAST]
    if weight_key(0) not in state and view.weights and len(view.weights) != num_layers:
        # Only on the first fill, which is where a link's w arrives: later runs keep the sliders' own values.
        fitted = ", ".join(f"{w:g}" for w in mixing.fit_weights(view.weights, num_layers))
        how = "cut" if len(view.weights) > num_layers else "padded with zeros"
        given = len(view.weights)
        count = f"{given} or more" if given == MAX_LINK_WEIGHTS else str(given)  # link.from_query reads no more
        state.setdefault(LINK_NOTES, []).append(
            f"The link gives {count} layer weight{'' if given == 1 else 's'} (w), but this "
            f"model has {num_layers} layers: {how} to {fitted}."
        )
    for k, value in widget_values(view, num_layers).items():
        state[k] = state[k] if k in state else value


# ---- the widgets as one Controls ---------------------------------------------------------------------------
# Fields whose widgets hold another form than the field (a slider per weight, a tab's label, two compare boxes),
# or that are no widget of this page (the model panel's model, presentation mode, the example set the text is).
_SPECIAL = {"weights", "tab", "map_view", "compare", "model", "present", "example"}
PLAIN = tuple(f.name for f in dataclasses.fields(Controls) if f.name not in _SPECIAL)


def _plain(name: str, value: object) -> object:
    """A widget's value as its field's type; None (a widget not drawn yet, an empty box) as the field's default."""
    default = getattr(DEFAULT, name)
    if value is None:
        return default
    if isinstance(default, bool):
        return bool(value)
    if isinstance(default, int):  # a number box's int; anything else (a hand-set "3") is no choice
        return value if isinstance(value, int) and not isinstance(value, bool) else default
    if isinstance(default, float):
        return float(value) if isinstance(value, (int, float)) else default
    return value if isinstance(value, str) else default


def widget_values(controls: Controls, num_layers: int) -> dict[str, object]:
    """{session key: widget value} of ``controls`` for a model with ``num_layers`` layers (weights of a link made
    with another model: padded with zeros or cut)."""
    values: dict[str, object] = {key(name): getattr(controls, name) for name in PLAIN}
    values[WORD] = controls.word or None
    values[TAB], values[MAP_VIEW] = TABS[controls.tab], MAP_VIEWS[controls.map_view]
    if controls.compare:
        values[COMPARE_A], values[COMPARE_B] = (f"bundled:{name}" for name in controls.compare)
    for j, w in enumerate(mixing.fit_weights(controls.weights, num_layers)):
        values[weight_key(j)] = w
    return values


def map_click(state: Mapping, n: int) -> int | None:
    """This run's click on the map (``MAP_CHART``'s selection) as an occurrence index among ``n``, or None."""
    return clicked_occurrence(state.get(MAP_CHART), n)


def controls_of(state: Mapping, num_layers: int, example: str | None = None, model: str = DEFAULT.model) -> Controls:
    """The ``Controls`` the widgets in ``state`` hold now, field by field from the keys named after them
    (``example``: the example set whose text the box holds; ``model``: the named model a link carries)."""
    tab_ids = {label: tab for tab, label in TABS.items()}
    views = {label: name for name, label in MAP_VIEWS.items()}
    pair = [state.get(COMPARE_A), state.get(COMPARE_B)]
    compare = tuple(p.split(":", 1)[1] for p in pair if isinstance(p, str) and p.startswith("bundled:"))
    return Controls(
        **{name: _plain(name, state.get(key(name))) for name in PLAIN},
        weights=tuple(float(state.get(weight_key(j), 0.0)) for j in range(num_layers)),
        tab=tab_ids.get(state.get(TAB), DEFAULT.tab),
        map_view=views.get(state.get(MAP_VIEW), DEFAULT.map_view),
        compare=compare if len(compare) == 2 and compare[0] != compare[1] else (),
        model=model,
        present=bool(state.get(PRESENT)),
        example=example,
    )


# ---- the weight sliders' one writer ------------------------------------------------------------------------
def set_layer_weights(state: MutableMapping, w: Sequence[float]) -> tuple[float, ...]:
    """Put raw w into the sliders and into the remembered view (``LAST``, which the explorer restores its
    widgets from when they were not drawn). Returns w clipped to ``W_RANGE``, as a tuple."""
    lo, hi = W_RANGE
    w = tuple(float(min(max(v, lo), hi)) for v in w)
    for j, value in enumerate(w):
        state[weight_key(j)] = value
    view = state.get(LAST)
    if view is not None and dataclasses.is_dataclass(view):
        state[LAST] = dataclasses.replace(view, weights=w)
    return w


def set_preset(state: MutableMapping, preset: str, num_layers: int) -> tuple[float, ...]:
    """The "equal", "top" and "bottom" buttons (``explore.preset_weights``)."""
    return set_layer_weights(state, mixing.preset_weights(preset, num_layers))


# ---- page switches -----------------------------------------------------------------------------------------
def remember(state: MutableMapping) -> None:
    """Save the kept controls' current values (call on every explorer run, after its widgets are drawn)."""
    state[SAVED] = {k: state[k] for k in KEPT if k in state}


def restore(state: MutableMapping) -> None:
    """Put back kept controls that Streamlit forgot while another page was shown (before drawing them)."""
    for k, value in state.get(SAVED, {}).items():
        if k not in state:
            state[k] = value


def apply_weights(state: MutableMapping, s: Sequence[float], num_layers: int) -> list[float]:
    """Set the explorer's weight sliders to a task's learned s (``set_layer_weights``, which also updates the
    remembered controls). Returns the raw w that was set.
    Raises: ValueError when s does not have ``num_layers`` values.
    """
    if len(s) != num_layers:
        raise ValueError(f"these weights are for {len(s)} layers; the model has {num_layers}")
    return list(set_layer_weights(state, weights_for_explorer(s)))

"""The explorer's page state: its session keys, the shareable link (URL round trip) and what survives a page switch.

* **Keys.** Every session-state key of the explorer starts with ``PREFIX`` (private ones with ``"_" + PREFIX``),
  so the pages and the model panel cannot collide; ``key(name)`` makes one. The model panel's bundled-model
  choice is ``BUNDLED_CHOICE_KEY`` (owned by ``app.resources``).
* **The link.** ``View`` is everything that changes what the explorer shows; ``view_to_query`` and
  ``view_from_query`` turn it into URL query parameters and back. A link is untrusted input: every value is
  checked, and a value that is out of range is clamped, one that makes no sense is ignored (the default kept),
  each with a note for the user; nothing raises. An uploaded model cannot travel in a link (only a bundled
  model's name does), and the page says so.
* **Page switches.** Streamlit forgets a widget's value once the widget is not drawn (the Layers page is shown),
  so the explorer saves the values of ``KEPT`` on every run (``remember``) and puts back what was forgotten
  (``restore``) before drawing them. The weight sliders have one writer, ``set_layer_weights`` (the presets,
  the Layers page's "use these weights").

No Streamlit import: ``state`` is ``st.session_state`` on the pages and a dict in the tests.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass

from app import explore as ex
from app.clusters import MAX_CLUSTERS as MAX_SENSE_CLUSTERS
from elmo_core.paths import BUNDLED_MODELS

PREFIX = "explorer_"


def key(name: str) -> str:
    """The session-state key of the explorer's control ``name`` (``"word"`` -> ``"explorer_word"``)."""
    return PREFIX + name


def private(name: str) -> str:
    """A private session-state key of the explorer (not a widget): ``"_explorer_" + name``."""
    return "_" + PREFIX + name


SENTENCES, WORD, INFLECTIONS, FOLD_CASE = key("sentences"), key("word"), key("inflections"), key("fold_case")
GAMMA, LAYER_NORM, PROJECTION, CONTEXT = key("gamma"), key("layer_norm"), key("projection"), key("context")
QUERY, K, SAME_WORD, COLOR_BY, TAB = key("query"), key("k"), key("same_word"), key("color_by"), key("tab")
MAP_CHART, UPLOAD = key("map_chart"), key("upload_txt")
MAP_VIEW, N_CLUSTERS = key("map_view"), key("n_clusters")  # the map tab's "show" and the Senses tab's k
COMPARE_A, COMPARE_B = key("compare_a"), key("compare_b")  # the Compare tab's models (resources.comparison_choices)
PRESENT = "app_present"  # presentation mode: both pages and the sidebar follow it
VIEW = private("view")  # the last View: widget values for when the widgets were not drawn
LINK_NOTES = private("link_notes")  # what the link asked for that could not be shown
LINK_QUERY = private("link_query")  # the link's query occurrence, checked once the occurrences are known
FRAME = key("frame")  # the last app.frame.Frame: the next frame's memo, and what the tests read
_SAVED = private("kept")

W_RANGE = ex.W_RANGE  # the w sliders' range (the URL parser clamps to it too)
W_STEP = 0.1
GAMMA_RANGE = ex.GAMMA_RANGE
K_RANGE = (1, 50)
MAX_URL_TEXT = ex.MAX_URL_TEXT
COLOR_BY_CHOICES = ("label", "sentence", "spelling", "cluster")
MAP_VIEWS = {"mix": "the mix", "layers": "layers side by side"}  # the id a link uses, and the label shown
MAX_CLUSTERS = MAX_SENSE_CLUSTERS
# The explorer's tabs: the id a link uses, and the label shown. A new tab is one more entry.
TABS = {"map": "Contexts map", "neighbours": "Nearest neighbours", "similarity": "Similarity per layer",
        "senses": "Senses (clusters)", "compare": "Compare models", "export": "Export"}
# controls whose widgets the explorer does not always draw
KEPT = (K, SAME_WORD, QUERY, COLOR_BY, TAB, MAP_VIEW, N_CLUSTERS, COMPARE_A, COMPARE_B)


def weight_key(j: int) -> str:
    """The session-state key of layer j's w slider."""
    return key(f"w_{j}")


# ---- the shareable view ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """Everything a shared link restores: every control that changes what the explorer shows.

    query is 0-based (the link and the page count from 1); model is a bundled model's name; map_view: a key
    of ``MAP_VIEWS``; clusters: the Senses tab's number of clusters (0: by silhouette); compare: the two
    bundled models of the Compare tab, or () (a loaded model cannot travel in a link).
    """

    text: str = ""
    example: str | None = None  # name of an example set, when the text is that set's
    word: str = ""
    weights: tuple[float, ...] = ()  # raw w_j; () = all zeros (equal s_j)
    gamma: float = 1.0
    layer_norm: bool = False
    projection: str = "auto"
    inflections: bool = False
    context: bool = False
    fold_case: bool = True
    query: int = 0
    k: int = 10
    same_word: bool = False
    color_by: str = "label"
    tab: str = "map"
    model: str = "default"
    present: bool = False
    map_view: str = "mix"
    clusters: int = 0
    compare: tuple[str, ...] = ()


DEFAULT = View()


def text_fits_link(view: View) -> bool:
    """Whether a link made by ``view_to_query`` reopens the view's sentences (an example set's, or short text)."""
    return bool(view.example) or not view.text or len(view.text) <= MAX_URL_TEXT


def view_to_query(view: View) -> dict[str, str]:
    """Query parameters for a link: only what differs from the defaults; the text is left out (``ex``
    instead) when it is an example set's, and when it is longer than ``MAX_URL_TEXT``."""
    params: dict[str, str] = {}
    if view.example:
        params["ex"] = view.example
    elif view.text and text_fits_link(view):
        params["s"] = view.text
    if view.word:
        params["word"] = view.word
    if view.weights and any(w != 0 for w in view.weights):
        params["w"] = ",".join(f"{w:g}" for w in view.weights)
    flags = {"ln": view.layer_norm, "infl": view.inflections, "ctx": view.context, "same": view.same_word,
             "present": view.present}
    params.update({name: "1" for name, on in flags.items() if on})
    if not view.fold_case:
        params["case"] = "exact"
    others = {"g": (view.gamma, DEFAULT.gamma, f"{view.gamma:g}"),
              "proj": (view.projection, DEFAULT.projection, view.projection),
              "q": (view.query, DEFAULT.query, str(view.query + 1)),
              "k": (view.k, DEFAULT.k, str(view.k)),
              "color": (view.color_by, DEFAULT.color_by, view.color_by),
              "tab": (view.tab, DEFAULT.tab, view.tab),
              "model": (view.model, DEFAULT.model, view.model),
              "show": (view.map_view, DEFAULT.map_view, view.map_view),
              "clusters": (view.clusters, DEFAULT.clusters, str(view.clusters)),
              "compare": (view.compare, DEFAULT.compare, ",".join(view.compare))}
    params.update({name: text for name, (value, default, text) in others.items() if value != default})
    return params


def _quote(value: object, limit: int = 40) -> str:
    text = str(value)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def view_from_query(params: Mapping[str, str], examples: Mapping[str, str] | None = None,
                    models: Sequence[str] = ("default",)) -> tuple[View, list[str]]:
    """Parse a link's query parameters. Never raises: a value out of range is clamped, a value that makes no
    sense is ignored (the default kept); each such value gets a note in plain text (escape before rendering).

    Args:
        params: the query parameters (str -> str; anything else is read with ``str``).
        examples: example set name -> its text.
        models: the bundled model names this server offers.
    Returns:
        (the View, notes for the user).
    """
    examples = examples or {}
    notes: list[str] = []
    get = {str(k): str(v) for k, v in params.items()}

    def number(name: str, default: float, lo: float, hi: float, what: str, integer: bool = False) -> float:
        raw = get.get(name)
        if raw is None:
            return default
        try:
            value = int(raw) if integer else float(raw)
        except ValueError:
            notes.append(f"The link's {what} {_quote(raw)} is not a number; using {default:g}.")
            return default
        if not math.isfinite(value):
            notes.append(f"The link's {what} {_quote(raw)} is not a finite number; using {default:g}.")
            return default
        if not lo <= value <= hi:
            clamped = min(max(value, lo), hi)
            notes.append(f"The link's {what} {value:g} is outside {lo:g} to {hi:g}; using {clamped:g}.")
            return clamped
        return value

    def choice(name: str, default: str, allowed: Sequence[str], what: str) -> str:
        raw = get.get(name)
        if raw is None or raw == default:
            return default
        if raw in allowed:
            return raw
        notes.append(f"The link asks for an unknown {what} {_quote(raw)}; the known ones are "
                     f"{', '.join(allowed)}. Using {default}.")
        return default

    def flag(name: str, default: bool, on: str = "1", off: str = "0") -> bool:
        raw = get.get(name)
        if raw is None:
            return default
        if raw in (on, off):
            return raw == on
        notes.append(f"The link's {name}={_quote(raw)} is neither {on} nor {off}; ignored.")
        return default

    example = get.get("ex")
    text = ""
    if example is not None and example in examples:
        text = examples[example]
    else:
        if example is not None:
            notes.append(f"The link asks for an unknown example set {_quote(example)}; the known ones are "
                         f"{', '.join(examples)}. Load one with the buttons below.")
        example = None
        text = get.get("s", "")
        if len(text) > ex.MAX_TEXT_CHARS:
            notes.append(f"The link's sentences are longer than {ex.MAX_TEXT_CHARS:,} characters; the rest is cut.")
            text = text[:ex.MAX_TEXT_CHARS]
    word = get.get("word", "")
    if len(word) > 100:
        notes.append("The link's word is longer than 100 characters; ignored.")
        word = ""
    weights: tuple[float, ...] = ()
    if get.get("w"):
        try:
            parsed = tuple(float(v) for v in get["w"].split(",")[:16])
        except ValueError:
            parsed = ()
        if not parsed or not all(math.isfinite(v) for v in parsed):
            notes.append(f"The link's weights w = {_quote(get['w'])} are not a list of numbers; using equal weights.")
        else:
            lo, hi = W_RANGE
            weights = tuple(min(max(v, lo), hi) for v in parsed)
            if weights != parsed:
                notes.append(f"The link's weights w go beyond the sliders' range {lo:g} to {hi:g}; clamped to "
                             f"{', '.join(f'{v:g}' for v in weights)}.")
    clusters = int(number("clusters", 0, 0, MAX_CLUSTERS, "number of clusters", integer=True))
    if clusters == 1:
        notes.append("The link asks for 1 cluster; a split needs at least 2. Choosing the number by silhouette.")
        clusters = 0
    compare: tuple[str, ...] = ()
    if get.get("compare"):
        names = tuple(get["compare"].split(","))
        allowed = list(BUNDLED_MODELS)  # the Compare tab offers every bundled model, whatever the startup model
        if len(names) == 2 and names[0] != names[1] and all(n in allowed for n in names):
            compare = names
        else:
            notes.append(f"The link's comparison {_quote(get['compare'])} is not two different bundled models "
                         f"({', '.join(allowed)}); ignored.")
    view = View(
        text=text, example=example, word=word, weights=weights,
        gamma=number("g", DEFAULT.gamma, *GAMMA_RANGE, "γ"),
        layer_norm=flag("ln", False), projection=choice("proj", "auto", ex.PROJECTIONS, "projection"),
        inflections=flag("infl", False), context=flag("ctx", False),
        fold_case=not flag("case", False, on="exact", off="fold"),
        query=int(number("q", 1, 1, 10**6, "query occurrence #", integer=True)) - 1,
        k=int(number("k", DEFAULT.k, *K_RANGE, "k (neighbours)", integer=True)),
        same_word=flag("same", False), color_by=choice("color", "label", COLOR_BY_CHOICES, "colour-by"),
        tab=choice("tab", "map", list(TABS), "tab"),
        model=choice("model", "default", list(models) or ["default"], "bundled model"),
        present=flag("present", False), map_view=choice("show", "mix", list(MAP_VIEWS), "map view"),
        clusters=clusters, compare=compare)
    known = {"ex", "s", "word", "w", "g", "ln", "proj", "infl", "ctx", "case", "q", "k", "same", "color", "tab",
             "model", "present", "show", "clusters", "compare"}
    unknown = sorted(set(get) - known)
    if unknown:
        notes.append(f"The link has parameters this explorer does not know ({', '.join(_quote(u, 20) for u in unknown[:5])}); "
                     "ignored.")
    return view, notes


def start_session(state: MutableMapping, params: Mapping[str, str], examples: Mapping[str, str],
                  models: Sequence[str], model_key: str, default: View) -> None:
    """On a session's first run: the View from the link (or ``default`` without one) into ``VIEW``, its notes
    into ``LINK_NOTES``, and the link's bundled model and presentation mode into their widgets' keys (the
    model panel is drawn before the page). Later runs change nothing."""
    if VIEW in state:
        return
    if params:
        view, notes = view_from_query(params, examples, models)
    else:
        view, notes = default, []
    state[VIEW] = view
    state[LINK_NOTES] = notes
    if view.query:
        state[LINK_QUERY] = view.query
    if view.model != "default" or model_key in state:
        state[model_key] = view.model
    state[PRESENT] = view.present


def clamp_query(view_query: int, n: int) -> tuple[int, str]:
    """The query occurrence a link asked for, within the ``n`` occurrences: (index, note or "")."""
    if 0 <= view_query < n:
        return view_query, ""
    return 0, (f"The link's query occurrence #{view_query + 1} does not exist (there are {n}); showing #1.")


def widget_defaults(view: View, num_layers: int) -> dict[str, object]:
    """The widget values of ``view`` for a model with ``num_layers`` layers (a link made with another model:
    weights padded with zeros or cut)."""
    values: dict[str, object] = {
        SENTENCES: view.text, WORD: view.word or None, INFLECTIONS: view.inflections, FOLD_CASE: view.fold_case,
        GAMMA: view.gamma, LAYER_NORM: view.layer_norm, PROJECTION: view.projection, CONTEXT: view.context,
        K: view.k, SAME_WORD: view.same_word, COLOR_BY: view.color_by, TAB: TABS[view.tab], QUERY: view.query,
        MAP_VIEW: MAP_VIEWS[view.map_view], N_CLUSTERS: view.clusters}
    if view.compare:
        values[COMPARE_A], values[COMPARE_B] = (f"bundled:{name}" for name in view.compare)
    for j, w in enumerate(ex.fit_weights(view.weights, num_layers)):
        values[weight_key(j)] = w
    return values


def view_of(state: Mapping, num_layers: int, example: str | None, model: str) -> View:
    """The View the widgets in ``state`` show now (``example``: the example set whose text the box holds)."""
    tab_ids = {label: tab for tab, label in TABS.items()}
    query = state.get(QUERY)
    views = {label: name for name, label in MAP_VIEWS.items()}
    pair = [state.get(COMPARE_A), state.get(COMPARE_B)]
    compare = tuple(p.split(":", 1)[1] for p in pair if isinstance(p, str) and p.startswith("bundled:"))
    clusters = state.get(N_CLUSTERS)
    return View(text=state.get(SENTENCES) or "", example=example, word=state.get(WORD) or "",
                weights=tuple(float(state.get(weight_key(j), 0.0)) for j in range(num_layers)),
                gamma=float(state.get(GAMMA, 1.0)), layer_norm=bool(state.get(LAYER_NORM)),
                projection=state.get(PROJECTION, "auto"), inflections=bool(state.get(INFLECTIONS)),
                context=bool(state.get(CONTEXT)), fold_case=bool(state.get(FOLD_CASE, True)),
                query=int(query) if isinstance(query, int) else 0, k=int(state.get(K, 10)),
                same_word=bool(state.get(SAME_WORD)), color_by=state.get(COLOR_BY) or "label",
                tab=tab_ids.get(state.get(TAB), "map"), model=model, present=bool(state.get(PRESENT)),
                map_view=views.get(state.get(MAP_VIEW), "mix"), clusters=clusters if isinstance(clusters, int) else 0,
                compare=compare if len(compare) == 2 and compare[0] != compare[1] else ())


# ---- the weight sliders' one writer ------------------------------------------------------------------------
def set_layer_weights(state: MutableMapping, w: Sequence[float]) -> tuple[float, ...]:
    """Put raw w into the sliders and into the remembered view (``VIEW``, which the explorer restores its
    widgets from when they were not drawn). Returns w clipped to ``W_RANGE``, as a tuple."""
    lo, hi = W_RANGE
    w = tuple(float(min(max(v, lo), hi)) for v in w)
    for j, value in enumerate(w):
        state[weight_key(j)] = value
    view = state.get(VIEW)
    if view is not None and dataclasses.is_dataclass(view):
        state[VIEW] = dataclasses.replace(view, weights=w)
    return w


def set_preset(state: MutableMapping, preset: str, num_layers: int) -> tuple[float, ...]:
    """The "equal", "top" and "bottom" buttons (``explore.preset_weights``)."""
    return set_layer_weights(state, ex.preset_weights(preset, num_layers))


# ---- page switches -----------------------------------------------------------------------------------------
def remember(state: MutableMapping) -> None:
    """Save the kept controls' current values (call on every explorer run, after its widgets are drawn)."""
    state[_SAVED] = {k: state[k] for k in KEPT if k in state}


def restore(state: MutableMapping) -> None:
    """Put back kept controls that Streamlit forgot while another page was shown (before drawing them)."""
    for k, value in state.get(_SAVED, {}).items():
        if k not in state:
            state[k] = value

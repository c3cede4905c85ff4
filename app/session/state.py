"""The explorer's page state: its session keys, the shareable link (URL round trip) and what survives a page switch.

* **Keys.** Every session-state key of the explorer starts with ``PREFIX`` (private ones with ``"_" + PREFIX``),
  so the pages and the model panel cannot collide; ``key(name)`` makes one. The model panel's named-model
  choice (bundled or published) is ``BUNDLED_CHOICE_KEY`` (owned by ``app.serving.resources``).
* **The link.** ``View`` is everything that changes what the explorer shows; ``view_to_query`` and
  ``view_from_query`` turn it into URL query parameters and back. A link is untrusted input: every value is
  checked, and a value that is out of range is clamped, one that makes no sense is ignored (the default kept),
  each with a note for the user; nothing raises. An uploaded model cannot travel in a link (only a named
  model does: a bundled one, or a published one that the opening server has downloaded), and the page says so.
* **Page switches.** Streamlit forgets a widget's value once the widget is not drawn (the Layers page is shown),
  so the explorer saves the values of ``KEPT`` on every run (``remember``) and puts back what was forgotten
  (``restore``) before drawing them. The weight sliders have one writer, ``set_layer_weights`` (the presets,
  the Layers page's "use these weights").

No Streamlit import: ``state`` is ``st.session_state`` on the pages and a dict in the tests.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass

from app.explore import inputs, mixing, projections
from app.explore.clusters import MAX_CLUSTERS as MAX_SENSE_CLUSTERS
from app.explore.frame import Controls
from app.render.safe import md, visible
from elmo_core.paths import BUNDLED_MODELS
from elmo_core.data.text import clean_line, split_lines

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
SENTENCES_OPEN = key("sentences_open")  # the sentences box (an expander) is open
MAP_VIEW, N_CLUSTERS = key("map_view"), key("n_clusters")  # the map tab's "show" and the Senses tab's k
COMPARE_A, COMPARE_B = key("compare_a"), key("compare_b")  # the Compare tab's models (resources.comparison_choices)
PRESENT = "app_present"  # presentation mode: both pages and the sidebar follow it
VIEW = private("view")  # the last View: widget values for when the widgets were not drawn
LINK_NOTES = private("link_notes")  # what the link asked for that could not be shown
MAX_LINK_WEIGHTS = 16  # a link's w values read at most (more layers than any ELMo has)
LINK_QUERY = private("link_query")  # the link's query occurrence, checked once the occurrences are known
FRAME = key("frame")  # the last app.explore.frame.Frame: the next frame's memo, and what the tests read
COLOR_SET = private("color_set")  # the sense labels the colour-by choice was made for (color_by_choices)
WEIGHTS_MESSAGE = private("weights_message")  # (kind, text) beside the sliders: what "fit s" or the Layer probes set
_SAVED = private("kept")

W_RANGE = mixing.W_RANGE  # the w sliders' range (the URL parser clamps to it too)
W_STEP = 0.1
GAMMA_RANGE = mixing.GAMMA_RANGE
K_RANGE = (1, 50)
MAX_URL_TEXT = inputs.MAX_URL_TEXT
COLOR_BY_CHOICES = ("label", "sentence", "spelling", "cluster")
MAP_VIEWS = {"mix": "the mix", "layers": "layers side by side"}  # the id a link uses, and the label shown
MAX_CLUSTERS = MAX_SENSE_CLUSTERS
# The explorer's tabs: the id a link uses, and the label shown. A new tab is one more entry.
# Short labels: the six fit in one row beside the weights rail at 1,024 px, in presentation mode's type too.
TABS = {"map": "Map", "neighbours": "Neighbours", "similarity": "Similarity", "senses": "Senses",
        "compare": "Compare", "export": "Export"}
# controls whose widgets the explorer does not always draw
KEPT = (K, SAME_WORD, QUERY, COLOR_BY, TAB, MAP_VIEW, N_CLUSTERS, COMPARE_A, COMPARE_B)


def weight_key(j: int) -> str:
    """The session-state key of layer j's w slider."""
    return key(f"w_{j}")


# ---- the shareable view ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """Everything a shared link restores: every control that changes what the explorer shows.

    query is 0-based (the link and the page count from 1); model is a named model (bundled, or published and
    in the server's cache); map_view: a key
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
    same_word: bool = True  # the word's other occurrences: its own sentence's tokens would crowd them out
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


def view_to_query(view: View, startup_model: str = DEFAULT.model) -> dict[str, str]:
    """Query parameters for a link: only what differs from the defaults; the text is left out (``ex``
    instead) when it is an example set's, and when it is longer than ``MAX_URL_TEXT``. The model is left out
    only when it is "default" on a server that starts on it (``startup_model``): a server started on another
    model writes it, and writes model=default too, so the link opens on the same model anywhere."""
    params: dict[str, str] = {}
    if view.example:
        params["ex"] = view.example
    elif view.text and text_fits_link(view):
        params["s"] = view.text
    if view.word:
        params["word"] = view.word
    if view.weights and any(w != 0 for w in view.weights):
        params["w"] = ",".join(f"{w:g}" for w in view.weights)
    flags = {"ln": view.layer_norm, "infl": view.inflections, "ctx": view.context, "present": view.present}
    params.update({name: "1" for name, on in flags.items() if on})
    if not view.fold_case:
        params["case"] = "exact"
    if not view.same_word:
        params["same"] = "0"
    others = {"g": (view.gamma, DEFAULT.gamma, f"{view.gamma:g}"),
              "proj": (view.projection, DEFAULT.projection, view.projection),
              "q": (view.query, DEFAULT.query, str(view.query + 1)),
              "k": (view.k, DEFAULT.k, str(view.k)),
              "color": (view.color_by, DEFAULT.color_by, view.color_by),
              "tab": (view.tab, DEFAULT.tab, view.tab),
              # None: never left out (a server started on another model names the model in every link)
              "model": (view.model, DEFAULT.model if startup_model == DEFAULT.model else None, view.model),
              "show": (view.map_view, DEFAULT.map_view, view.map_view),
              "clusters": (view.clusters, DEFAULT.clusters, str(view.clusters)),
              "compare": (view.compare, DEFAULT.compare, ",".join(view.compare))}
    params.update({name: text for name, (value, default, text) in others.items() if value != default})
    return params


def _quote(value: object, limit: int = 40) -> str:
    text = str(value)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def view_from_query(params: Mapping[str, str], examples: Mapping[str, str] | None = None,
                    models: Sequence[str] = ("default",), unavailable: Mapping[str, str] | None = None,
                    default_model: str = DEFAULT.model) -> tuple[View, list[str]]:
    """Parse a link's query parameters. Never raises: a value out of range is clamped, a value that makes no
    sense is ignored (the default kept); each such value gets a note in plain text (escape before rendering).

    Args:
        params: the query parameters (str -> str; anything else is read with ``str``).
        examples: example set name -> its text.
        models: the model names this server offers (bundled, and published ones in its cache).
        unavailable: {name: why not} for models the server knows but cannot open now (a published model it
            has not downloaded); the reason completes "The link asks for the model 'small', which ...".
        default_model: the model when the link names none, or one that is not offered (the server's startup
            model).
    Returns:
        (the View, notes for the user).
    """
    examples = examples or {}
    notes: list[str] = []
    get = {str(k): str(v) for k, v in params.items()}

    def number(name: str, default: float, lo: float, hi: float, what: str, integer: bool = False,
               reset: bool = False, zero: str = "") -> float:
        """The link's value of ``name`` within [lo, hi]: clamped into it, or with ``reset`` the default (for an
        index, where the nearest end of the range is no better a guess than the first). ``zero`` says what 0
        means where it is a setting of its own (the clusters' "by silhouette")."""
        raw = get.get(name)
        if raw is None:
            return default

        def shown(v: float) -> str:
            if zero and v == 0:
                return f"0 ({zero})"
            return f"{int(v):,}" if integer else f"{v:g}"

        label = what if what.endswith("#") else what + " "
        said = None  # how the note names the value: as Python prints it, or as the link wrote it
        try:
            value = int(raw) if integer else float(raw)
        except ValueError:
            written = _as_float(raw) if integer else None
            if written is not None and math.isfinite(written):
                if not written.is_integer():
                    notes.append(f"The link's {label}{_quote(raw[:40])} is not a whole number; using {shown(default)}.")
                    return default
                value, said = int(written), _quote(raw[:40])  # "1e3" or "4.0": a whole number written as a float
            else:
                digits = raw.strip().lstrip("+-")
                too_long = digits.isdigit() and len(digits) > 15  # Python refuses int() of over 4,300 digits
                notes.append(f"The link's {label}{_quote(raw[:40] + ('...' if len(raw) > 40 else ''))} is "
                             f"{'too large' if too_long else 'not a number'}; using {shown(default)}.")
                return default
        if not math.isfinite(value):
            spelled = raw.strip().lstrip("+-").lower() in ("inf", "infinity", "nan")
            notes.append(f"The link's {label}{_quote(raw[:40])} is "
                         f"{'not a finite number' if spelled else 'too large'}; using {shown(default)}.")
            return default
        if not lo <= value <= hi:
            kept = default if reset else min(max(value, lo), hi)
            if said is None and shown(value) in (shown(lo), shown(hi)):  # 3.0000001 would print as 3: quote it
                said = _quote(raw[:40])
            notes.append(f"The link's {label}{said or shown(value)} is outside {shown(lo)} to {shown(hi)}; "
                         f"using {shown(kept)}.")
            return kept
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
        if get.get("s"):
            notes.append(f"The link gives both an example set and sentences (s); it shows the example set "
                         f"{_quote(example)} and leaves the sentences out.")
    else:
        if example is not None:
            notes.append(f"The link asks for an unknown example set {_quote(example)}; the known ones are "
                         f"{', '.join(examples)}. Load one with the buttons below.")
        example = None
        text = get.get("s", "")
        if "\r" in text:  # \r\n and \r are line breaks too (elmo_core.data.text): the box shows the lines the page reads
            text = "\n".join(split_lines(text))
        if len(text) > inputs.MAX_TEXT_CHARS:
            notes.append(f"The link's sentences are longer than {inputs.MAX_TEXT_CHARS:,} characters; the rest is cut.")
            text = text[:inputs.MAX_TEXT_CHARS]
    word = get.get("word", "")
    if len(word) > 100:
        notes.append("The link's word is longer than 100 characters; ignored.")
        word = ""
    kept = "".join(ch for ch in word if clean_line(ch))  # without the invisible characters sentences lose too
    if kept != word:
        removed = ", ".join(f"U+{ord(ch):04X}" for ch in dict.fromkeys(word) if not clean_line(ch))
        if kept.strip():
            notes.append(f"The link's word {_quote(word)} contains invisible characters ({removed}), which the "
                         f"explorer also removes from sentences; looking for {_quote(kept)}.")
        else:
            notes.append(f"The link's word {_quote(word)} has only invisible characters ({removed}); ignored.")
        word = kept if kept.strip() else ""
    weights: tuple[float, ...] = ()
    if get.get("w"):
        try:
            parsed = tuple(float(v) for v in get["w"].split(",")[:MAX_LINK_WEIGHTS])
        except ValueError:
            parsed = ()
        # More than MAX_LINK_WEIGHTS values are said once, with the model's layer count (init_widgets).
        if not parsed or not all(math.isfinite(v) for v in parsed):
            notes.append(f"The link's weights w = {_quote(get['w'])} are not a list of finite numbers; using equal weights.")
        else:
            lo, hi = W_RANGE
            weights = tuple(min(max(v, lo), hi) for v in parsed)
            if weights != parsed:
                notes.append(f"The link's weights w go beyond the sliders' range {lo:g} to {hi:g}; clamped to "
                             f"{', '.join(f'{v:g}' for v in weights)}.")
    clusters = int(number("clusters", 0, 0, MAX_CLUSTERS, "number of clusters", integer=True,
                          zero="chosen by silhouette"))
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
        layer_norm=flag("ln", False), projection=choice("proj", "auto", projections.PROJECTIONS, "projection"),
        inflections=flag("infl", False), context=flag("ctx", False),
        fold_case=not flag("case", False, on="exact", off="fold"),
        query=int(number("q", 1, 1, 10**6, "query occurrence #", integer=True, reset=True)) - 1,
        k=int(number("k", DEFAULT.k, *K_RANGE, "k (neighbours)", integer=True)),
        same_word=flag("same", True), color_by=choice("color", "label", COLOR_BY_CHOICES, "colour-by"),
        tab=choice("tab", "map", list(TABS), "tab"),
        model=model_of(get.get("model"), list(models) or [default_model], unavailable or {}, default_model, notes),
        present=flag("present", False), map_view=choice("show", "mix", list(MAP_VIEWS), "map view"),
        clusters=clusters, compare=compare)
    known = {"ex", "s", "word", "w", "g", "ln", "proj", "infl", "ctx", "case", "q", "k", "same", "color", "tab",
             "model", "present", "show", "clusters", "compare"}
    unknown = sorted(set(get) - known)
    if unknown:  # named (five at most, quoted: a name is user text), so a mistyped one can be found
        named = ", ".join(_quote(u, 20) for u in unknown[:5])
        if len(unknown) > 5:
            named += f" and {len(unknown) - 5} more"
        notes.append(f"The link has parameters this explorer does not know ({named}); ignored.")
    return view, notes


def model_of(raw: str | None, models: Sequence[str], unavailable: Mapping[str, str], default: str,
             notes: list[str]) -> str:
    """The link's model: ``raw`` when the server offers it, else ``default`` with a note in ``notes`` (why a
    known model cannot open here, or the names it offers)."""
    if raw is None or raw == default or raw in models:
        return default if raw is None else raw
    if raw in unavailable:
        notes.append(f"The link asks for the model {_quote(raw)}, which {unavailable[raw]}. Using {default}.")
    else:
        notes.append(f"The link asks for an unknown model {_quote(raw)}; the models here are "
                     f"{', '.join(models)}. Using {default}.")
    return default


def _as_float(raw: str) -> float | None:
    """``float(raw)``, or None when it is no number."""
    try:
        return float(raw)
    except ValueError:
        return None


def start_session(state: MutableMapping, params: Mapping[str, str], examples: Mapping[str, str],
                  models: Sequence[str], model_key: str, default: View,
                  unavailable: Mapping[str, str] | None = None) -> None:
    """On a session's first run: the View from the link (or ``default`` without one) into ``VIEW``, its notes
    into ``LINK_NOTES``, and the link's model (``default.model``, the startup model's name, when the link names
    none or one this server cannot open: ``view_from_query``'s ``models`` and ``unavailable``) and
    presentation mode into their widgets' keys (the model panel is drawn before the page). Later runs change
    nothing."""
    if VIEW in state:
        return
    if params:
        first: list[str] = []
        asked = params.get("ex")
        if asked is not None and asked not in examples and "s" not in params and default.example:
            # An unknown set (a mistyped or old link) opens like "/", not on an empty page.
            first.append(f"The link asks for an unknown example set {_quote(asked)}; it opens on the "
                         f"“{default.example}” set instead (the known ones are {', '.join(examples)}).")
            params = {**params, "ex": default.example, "word": default.word}
        if not {"ex", "s"} & set(params) and default.example:
            # A link without sentences (``?present=1`` for the projector) opens on the default example, as "/" does.
            params = {"ex": default.example, "word": default.word, **params}
        view, notes = view_from_query(params, examples, models, unavailable, default.model)
        notes = first + notes
    else:
        view, notes = default, []
    state[VIEW] = view
    state[LINK_NOTES] = notes
    if view.query:
        state[LINK_QUERY] = view.query
    if view.model != DEFAULT.model or model_key in state or "model" in params:
        state[model_key] = view.model
    state[PRESENT] = view.present


def clamp_query(view_query: int, n: int) -> tuple[int, str]:
    """The query occurrence a link asked for, within the ``n`` occurrences: (index, note or "")."""
    if 0 <= view_query < n:
        return view_query, ""
    return 0, (f"The link's query occurrence #{view_query + 1} does not exist (there are {n}); showing #1.")


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
    Vega-Lite map's point selection, ``{"selection": {"pick": [{"idx": i}]}}`` (``app.render.map_chart.PICK``; only the
    occurrences can be picked). A malformed selection is no click."""
    try:
        for point in (selection or {}).get("selection", {}).get("pick") or []:
            idx = int(point.get("idx", -1))
            if 0 <= idx < n:
                return idx
    except (TypeError, ValueError, AttributeError, IndexError):
        return None
    return None


def controls_of(state: Mapping, num_layers: int, query: int, n: int) -> Controls:
    """The explorer's ``Controls`` from the widgets in ``state`` (``query`` from ``query_of``; a click on the
    map from ``MAP_CHART``)."""
    clusters = state.get(N_CLUSTERS)
    return Controls(tuple(float(state[weight_key(j)]) for j in range(num_layers)), float(state[GAMMA]),
                    bool(state.get(LAYER_NORM)), state.get(PROJECTION, "auto"), bool(state.get(CONTEXT)), query,
                    clicked_occurrence(state.get(MAP_CHART), n), int(state.get(K) or 10), bool(state.get(SAME_WORD)),
                    bool(state.get(INFLECTIONS)), bool(state.get(FOLD_CASE, True)),
                    clusters if isinstance(clusters, int) else 0)


def color_by_choices(state: MutableMapping, has_labels: bool, several_spellings: bool, has_clusters: bool,
                     label_set: Iterable[str | None] | None = None) -> list[str]:
    """The map's "colour by" choices that mean something here (labels given, spellings differ, clusters found);
    a remembered choice that does not is replaced by the first that does.

    ``label_set``: the occurrences' sense labels (None for an unlabelled one), which tell one sentence set from
    another: when they change to a set that has labels (a labelled example or file replaces what was there, or
    labels are typed in), the colour goes to "label", whatever the last set was coloured by. A choice the user
    makes for a set (or the link's, on a session's first frame) stays while the labels stay the same, so
    editing a sentence keeps it. None: no tracking (the choice only has to be valid).
    """
    choices = [c for c in COLOR_BY_CHOICES if (c != "label" or has_labels) and (c != "spelling" or several_spellings)
               and (c != "cluster" or has_clusters)]
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
    ``resources.comparison_spec``, when it is one of ``specs``; else the first) and the next one on the right,
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
    and written in another with exact case, its most frequent spelling here. Otherwise the most frequent word
    (``explore.suggest_word``), with a calm note only when the word came from the session's link (its first
    text).
    """
    asked = state.get(WORD)
    text = state.get(SENTENCES) or ""
    first_text = state.get(private("word_text")) is None
    state[private("word_text")] = text
    note = ""
    if isinstance(asked, str) and asked.strip():
        wanted = asked.strip().casefold() if fold_case else asked.strip()
        if wanted in counts:
            state[WORD] = wanted
            return ""
        folded = asked.strip().casefold()
        if not fold_case and folded in {w.casefold() for w in counts}:
            state[WORD] = next(w for w in counts if w.casefold() == folded)
            return ""
    suggested = inputs.suggest_word(lines, fold_case)
    if isinstance(asked, str) and asked.strip() and first_text:
        note = (f"The link's word “{md(visible(asked))}” does not occur in these sentences; showing "
                f"“{md(suggested)}”, the most frequent word here.")
    state[WORD] = suggested
    return note


def link_notes(view: View, model_key: str, model_name: str, state: Mapping) -> list[str]:
    """What the link of ``view`` cannot carry, one sentence each (markdown, user text escaped): a loaded model,
    a comparison with one, sentences too long for a URL."""
    notes = []
    if model_key.startswith(("upload:", "path:")):
        notes.append(f"This view uses your loaded model “{md(model_name)}”, which cannot travel in a link: "
                     f"whoever opens it sees the “{md(view.model)}” model instead.")
    if any(isinstance(state.get(k), str) and not state[k].startswith("bundled:") for k in (COMPARE_A, COMPARE_B)):
        notes.append("The comparison uses a model that is not bundled, so the link leaves the comparison out.")
    if not text_fits_link(view):
        notes.append(f"These sentences are too long to keep in the link (over {inputs.MAX_URL_TEXT:,} characters): "
                     "the link keeps the word and the controls only. Share the sentences as a .txt file (the upload "
                     "box reads it).")
    return notes


def init_widgets(state: MutableMapping, num_layers: int) -> None:
    """Before the explorer draws its widgets: put back kept controls another page made Streamlit drop
    (``restore``), fill missing widget values from the last view (``VIEW``, the link's on a session's first
    run), and write the present ones again.

    Writing again matters: a value set while the page was not shown (the Layers page's "use these weights") is
    kept by Streamlit under the widget id, and a widget that (re)mounts with such a value is sent without
    "set_value", so the browser would show the widget's default (w = -5) and send that back. A value written on
    this run is a fresh session-state value, which the browser adopts.
    """
    restore(state)
    view = state[VIEW]
    if weight_key(0) not in state and view.weights and len(view.weights) != num_layers:
        # Only on the first fill, which is where a link's w arrives: later runs keep the sliders' own values.
        fitted = ", ".join(f"{w:g}" for w in mixing.fit_weights(view.weights, num_layers))
        how = "cut" if len(view.weights) > num_layers else "padded with zeros"
        given = len(view.weights)
        count = f"{given} or more" if given == MAX_LINK_WEIGHTS else str(given)  # view_from_query reads no more
        state.setdefault(LINK_NOTES, []).append(
            f"The link gives {count} layer weight{'' if given == 1 else 's'} (w), but this "
            f"model has {num_layers} layers: {how} to {fitted}.")
    for k, value in widget_defaults(view, num_layers).items():
        state[k] = state[k] if k in state else value


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
    for j, w in enumerate(mixing.fit_weights(view.weights, num_layers)):
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
    return set_layer_weights(state, mixing.preset_weights(preset, num_layers))


# ---- page switches -----------------------------------------------------------------------------------------
def remember(state: MutableMapping) -> None:
    """Save the kept controls' current values (call on every explorer run, after its widgets are drawn)."""
    state[_SAVED] = {k: state[k] for k in KEPT if k in state}


def restore(state: MutableMapping) -> None:
    """Put back kept controls that Streamlit forgot while another page was shown (before drawing them)."""
    for k, value in state.get(_SAVED, {}).items():
        if k not in state:
            state[k] = value

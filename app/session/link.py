"""The shareable link: the explorer's ``Controls`` as URL query parameters and back, and a session's start from it.

``to_query`` writes only what differs from the defaults; ``from_query`` reads a link, which is untrusted input:
every value is checked, and a value that is out of range is clamped, one that makes no sense is ignored (the
default kept), each with a note for the user; nothing raises. An uploaded model cannot travel in a link (only a
named model does: a bundled one, or a published one that the opening server has downloaded), and the page says so
(``link_notes``). No Streamlit import: ``state`` is ``st.session_state`` on the pages and a dict in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence

from app.explore import inputs, projections
from app.explore.controls import DEFAULT, Controls
from app.render.safe import md
from app.session.keys import (
    COLOR_BY_CHOICES,
    COMPARE_A,
    COMPARE_B,
    GAMMA_RANGE,
    K_RANGE,
    LAST,
    LINK_NOTES,
    LINK_QUERY,
    MAP_VIEWS,
    MAX_CLUSTERS,
    MAX_LINK_WEIGHTS,
    MAX_URL_TEXT,
    PRESENT,
    TABS,
    W_RANGE,
)
from app.session.link_values import LinkValues, quote
from elmo_core import BUNDLED_MODELS, clean_line, split_lines


def text_fits_link(view: Controls) -> bool:
    """Whether a link made by ``to_query`` reopens the view's sentences (an example set's, or short text)."""
    return bool(view.example) or not view.sentences or len(view.sentences) <= MAX_URL_TEXT


def to_query(view: Controls, startup_model: str = DEFAULT.model) -> dict[str, str]:
    """Query parameters for a link: only what differs from the defaults; the text is left out (``ex``
    instead) when it is an example set's, and when it is longer than ``MAX_URL_TEXT``. The model is left out
    only when it is "default" on a server that starts on it (``startup_model``): a server started on another
    model writes it, and writes model=default too, so the link opens on the same model anywhere."""
    params: dict[str, str] = {}
    if view.example:
        params["ex"] = view.example
    elif view.sentences and text_fits_link(view):
        params["s"] = view.sentences
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
    others = {
        "g": (view.gamma, DEFAULT.gamma, f"{view.gamma:g}"),
        "proj": (view.projection, DEFAULT.projection, view.projection),
        "q": (view.query, DEFAULT.query, str(view.query + 1)),
        "k": (view.k, DEFAULT.k, str(view.k)),
        "color": (view.color_by, DEFAULT.color_by, view.color_by),
        "tab": (view.tab, DEFAULT.tab, view.tab),
        # None: never left out (a server started on another model names the model in every link)
        "model": (view.model, DEFAULT.model if startup_model == DEFAULT.model else None, view.model),
        "show": (view.map_view, DEFAULT.map_view, view.map_view),
        "clusters": (view.n_clusters, DEFAULT.n_clusters, str(view.n_clusters)),
        "compare": (view.compare, DEFAULT.compare, ",".join(view.compare)),
    }
    params.update({name: text for name, (value, default, text) in others.items() if value != default})
    return params


def from_query(
    params: Mapping[str, str],
    examples: Mapping[str, str] | None = None,
    models: Sequence[str] = ("default",),
    unavailable: Mapping[str, str] | None = None,
    default_model: str = DEFAULT.model,
) -> tuple[Controls, list[str]]:
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
        (the Controls, notes for the user).
    """
    examples = examples or {}
    notes: list[str] = []
    get = {str(k): str(v) for k, v in params.items()}
    read = LinkValues(get, notes)
    example = get.get("ex")
    text = ""
    if example is not None and example in examples:
        text = examples[example]
        if get.get("s"):
            notes.append(
                f"The link gives both an example set and sentences (s); it shows the example set "
                f"{quote(example)} and leaves the sentences out."
            )
    else:
        if example is not None:
            notes.append(
                f"The link asks for an unknown example set {quote(example)}; the known ones are "
                f"{', '.join(examples)}. Load one with the buttons below."
            )
        example = None
        text = get.get("s", "")
        if (
            "\r" in text
        ):  # \r\n and \r are line breaks too (elmo_core.data.text): the box shows the lines the page reads
            text = "\n".join(split_lines(text))
        if len(text) > inputs.MAX_TEXT_CHARS:
            notes.append(f"The link's sentences are longer than {inputs.MAX_TEXT_CHARS:,} characters; the rest is cut.")
            text = text[: inputs.MAX_TEXT_CHARS]
    word = get.get("word", "")
    if len(word) > 100:
        notes.append("The link's word is longer than 100 characters; ignored.")
        word = ""
    kept = "".join(ch for ch in word if clean_line(ch))  # without the invisible characters sentences lose too
    if kept != word:
        removed = ", ".join(f"U+{ord(ch):04X}" for ch in dict.fromkeys(word) if not clean_line(ch))
        if kept.strip():
            notes.append(
                f"The link's word {quote(word)} contains invisible characters ({removed}), which the "
                f"explorer also removes from sentences; looking for {quote(kept)}."
            )
        else:
            notes.append(f"The link's word {quote(word)} has only invisible characters ({removed}); ignored.")
        word = kept if kept.strip() else ""
    weights: tuple[float, ...] = ()
    if get.get("w"):
        try:
            parsed = tuple(float(v) for v in get["w"].split(",")[:MAX_LINK_WEIGHTS])
        except ValueError:
            parsed = ()
        # More than MAX_LINK_WEIGHTS values are said once, with the model's layer count (init_widgets).
        if not parsed or not all(math.isfinite(v) for v in parsed):
            notes.append(
                f"The link's weights w = {quote(get['w'])} are not a list of finite numbers; using equal weights."
            )
        else:
            lo, hi = W_RANGE
            weights = tuple(min(max(v, lo), hi) for v in parsed)
            if weights != parsed:
                notes.append(
                    f"The link's weights w go beyond the sliders' range {lo:g} to {hi:g}; clamped to "
                    f"{', '.join(f'{v:g}' for v in weights)}."
                )
    clusters = int(
        read.number("clusters", 0, 0, MAX_CLUSTERS, "number of clusters", integer=True, zero="chosen by silhouette")
    )
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
            notes.append(
                f"The link's comparison {quote(get['compare'])} is not two different bundled models "
                f"({', '.join(allowed)}); ignored."
            )
    view = Controls(
        sentences=text,
        example=example,
        word=word,
        weights=weights,
        gamma=read.number("g", DEFAULT.gamma, *GAMMA_RANGE, "γ"),
        layer_norm=read.flag("ln", False),
        projection=read.choice("proj", "live", projections.PROJECTIONS, "projection"),
        inflections=read.flag("infl", False),
        context=read.flag("ctx", False),
        fold_case=not read.flag("case", False, on="exact", off="fold"),
        query=int(read.number("q", 1, 1, 10**6, "query occurrence #", integer=True, reset=True)) - 1,
        k=int(read.number("k", DEFAULT.k, *K_RANGE, "k (neighbours)", integer=True)),
        same_word=read.flag("same", True),
        color_by=read.choice("color", "label", COLOR_BY_CHOICES, "colour-by"),
        tab=read.choice("tab", "map", list(TABS), "tab"),
        model=model_of(get.get("model"), list(models) or [default_model], unavailable or {}, default_model, notes),
        present=read.flag("present", False),
        map_view=read.choice("show", "mix", list(MAP_VIEWS), "map view"),
        n_clusters=clusters,
        compare=compare,
    )
    known = {
        "ex",
        "s",
        "word",
        "w",
        "g",
        "ln",
        "proj",
        "infl",
        "ctx",
        "case",
        "q",
        "k",
        "same",
        "color",
        "tab",
        "model",
        "present",
        "show",
        "clusters",
        "compare",
    }
    unknown = sorted(set(get) - known)
    if unknown:  # named (five at most, quoted: a name is user text), so a mistyped one can be found
        named = ", ".join(quote(u, 20) for u in unknown[:5])
        if len(unknown) > 5:
            named += f" and {len(unknown) - 5} more"
        notes.append(f"The link has parameters this explorer does not know ({named}); ignored.")
    return view, notes


def model_of(
    raw: str | None, models: Sequence[str], unavailable: Mapping[str, str], default: str, notes: list[str]
) -> str:
    """The link's model: ``raw`` when the server offers it, else ``default`` with a note in ``notes`` (why a
    known model cannot open here, or the names it offers)."""
    if raw is None or raw == default or raw in models:
        return default if raw is None else raw
    if raw in unavailable:
        notes.append(f"The link asks for the model {quote(raw)}, which {unavailable[raw]}. Using {default}.")
    else:
        notes.append(
            f"The link asks for an unknown model {quote(raw)}; the models here are "
            f"{', '.join(models)}. Using {default}."
        )
    return default


def start_session(
    state: MutableMapping,
    params: Mapping[str, str],
    examples: Mapping[str, str],
    models: Sequence[str],
    model_key: str,
    default: Controls,
    unavailable: Mapping[str, str] | None = None,
) -> None:
    """On a session's first run: the Controls from the link (or ``default`` without one) into ``LAST``, its notes
    into ``LINK_NOTES``, and the link's model (``default.model``, the startup model's name, when the link names
    none or one this server cannot open: ``from_query``'s ``models`` and ``unavailable``) and
    presentation mode into their widgets' keys (the model panel is drawn before the page). Later runs change
    nothing."""
    if LAST in state:
        return
    if params:
        first: list[str] = []
        asked = params.get("ex")
        if asked is not None and asked not in examples and "s" not in params and default.example:
            # An unknown set (a mistyped or old link) opens like "/", not on an empty page.
            first.append(
                f"The link asks for an unknown example set {quote(asked)}; it opens on the "
                f"“{default.example}” set instead (the known ones are {', '.join(examples)})."
            )
            params = {**params, "ex": default.example, "word": default.word}
        if not {"ex", "s"} & set(params) and default.example:
            # A link without sentences (``?present=1`` for the projector) opens on the default example, as "/" does.
            params = {"ex": default.example, "word": default.word, **params}
        view, notes = from_query(params, examples, models, unavailable, default.model)
        notes = first + notes
    else:
        view, notes = default, []
    state[LAST] = view
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


def link_notes(view: Controls, model_key: str, model_name: str, state: Mapping) -> list[str]:
    """What the link of ``view`` cannot carry, one sentence each (markdown, user text escaped): a loaded model,
    a comparison with one, sentences too long for a URL."""
    notes = []
    if model_key.startswith(("upload:", "path:")):
        notes.append(
            f"This view uses your loaded model “{md(model_name)}”, which cannot travel in a link: "
            f"whoever opens it sees the “{md(view.model)}” model instead."
        )
    if any(isinstance(state.get(k), str) and not state[k].startswith("bundled:") for k in (COMPARE_A, COMPARE_B)):
        notes.append("The comparison uses a model that is not bundled, so the link leaves the comparison out.")
    if not text_fits_link(view):
        notes.append(
            f"These sentences are too long to keep in the link (over {inputs.MAX_URL_TEXT:,} characters): "
            "the link keeps the word and the controls only. Share the sentences as a .txt file (the upload "
            "box reads it)."
        )
    return notes

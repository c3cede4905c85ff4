"""Corpus page: one word's every occurrence in a corpus on the live map, its sense groups and nearest contexts.

The source is the bundled reference corpus (a word's sentences embedded on demand with the page's model, a progress
bar meanwhile, kept per model and word: ``app.serving.corpus_mode``) or an atlas (``ELMO_EXPLORER_ATLAS``: one
atlas folder or a folder of them, named by folder name only). The map is the explorer's fixed-axes live map
(``app.explore.live_map``), on its own rail of w_j and γ sliders (keys ``corpus_w_j``, ``corpus_gamma``) through the
live bridge; a sample of at most ``corpus_view.MAX_DRAWN`` points is drawn, and the map says so. The computations
are ``app.explore.corpus_view``'s; the panels under the map ``corpus_parts.panels``.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from app.explore import corpus_view as cv
from app.explore import inputs, mixing
from app.explore.activations import TokenTable
from app.explore.live_map import fixed_axes
from app.explore.text import plural
from app.render import map_chart, map_spec
from app.render.corpus_map import dense
from app.render.safe import md, vega
from app.serving import caches, corpus_mode, models
from app.session import keys, widgets
from app.views import live_bridge
from app.views.corpus_parts.panels import groups_panel, nearest_panel
from app.views.corpus_parts.state import keep as _keep
from app.views.corpus_parts.state import preset as _preset
from app.views.corpus_parts.state import restore as _restore

ss = st.session_state
REFERENCE = "reference"
MAX_TYPED_LINES = 50
MAX_WORD_CHARS = 48
LEAD = (
    "Every use of one word in a whole corpus, on the explorer's live map: move the layer weights and watch the "
    "uses regroup; the groups below are found by clustering the current mix, each with its most telling context "
    "words and typical sentences. Click a point for its nearest contexts."
)


def source_picker() -> str:
    atlases = list(corpus_mode.atlas_folders())
    options = [f"atlas:{a}" for a in atlases] + [REFERENCE]
    if ss.get(keys.CORPUS_SOURCE) not in options:
        # the first atlas that opens, else the reference corpus: a visitor's first sight is never an error
        usable = [o for o in options[:-1] if corpus_mode.open_atlas(o[6:])[0] is not None]
        ss[keys.CORPUS_SOURCE] = (usable or [REFERENCE])[0]
    return st.selectbox(
        "Source",
        options,
        key=keys.CORPUS_SOURCE,
        format_func=lambda o: "the reference corpus" if o == REFERENCE else f"atlas “{o[6:]}”",
        help="The reference corpus ships with the explorer: a word's sentences are embedded when you pick it. An "
        "atlas is built once from any corpus (python -m elmo_core atlas build) and set with ELMO_EXPLORER_ATLAS.",
    )


def word_key(source: str) -> str:
    """The word picker's key: one per source (a source's words and counts are its own)."""
    if source == REFERENCE:
        return keys.CORPUS_WORD
    return f"{keys.CORPUS_WORD}_atlas_{list(corpus_mode.atlas_folders()).index(source[6:])}"


def word_picker(source: str) -> str | None:
    counted = corpus_mode.reference_words() if source == REFERENCE else corpus_mode.atlas_words(source[6:])
    counts = dict(counted)
    unit = "sentence" if source == REFERENCE else "occurrence"
    key = word_key(source)
    if ss.get(key) not in counts:
        ss[key] = "bank" if "bank" in counts else (counted[0][0] if counted else None)
    picker, other = st.columns([1, 1], vertical_alignment="bottom")
    picked = picker.selectbox(
        "Word",
        list(counts),
        key=key,
        format_func=lambda w: f"{w} · {plural(counts[w], unit)}" if w in counts else str(w),
        help="The most frequent words first (stop words left out); type in the box to filter.",
    )
    typed = other.text_input("or any word", key=keys.corpus_key("other_word"), max_chars=200, placeholder="e.g. spring")
    if typed.strip():
        picked = typed
    word = (picked or "").strip()
    if not word:
        st.info("Pick or type a word.")
        return None
    if len(word) > MAX_WORD_CHARS or len(word.split()) > 1:
        st.warning(f"“{md(word[:60])}” is not one word: type a single word (at most {MAX_WORD_CHARS} characters).")
        return None
    return word


LAST_SHOWN = keys.private("corpus_last_shown")  # (source, word) of the last map drawn


def previous_word(model, source: str) -> cv.CorpusWord | None:
    """The last word this page drew from ``source`` (kept per model and word, so no work again), said as such;
    None when there is none."""
    last = ss.get(LAST_SHOWN)
    if not last or last[0] != source:
        return None
    found = load_word(model, source, last[1])
    if found is not None:
        st.caption(f"The map still shows “{md(last[1])}”.")
    return found


def load_word(model, source: str, word: str) -> cv.CorpusWord | None:
    if source == REFERENCE:
        if model is None:
            st.error("The reference corpus is embedded with the page's model, and no model could be loaded.")
            return None
        bar = st.empty()
        try:
            found, why = corpus_mode.reference_word(
                model, word, lambda f, text: bar.progress(f, text=f"Embedding every sentence with “{md(word)}”: {text}")
            )
        except Exception as err:  # a user's model failing on a sentence: say so, keep the page
            found, why = None, f"The biLM failed on the reference sentences: {err}"
        finally:
            bar.empty()
    else:
        atlas, why = corpus_mode.open_atlas(source[6:])
        if atlas is None:
            st.error(f"The atlas cannot be opened: {md(why)}. The reference corpus is still there (Source).")
            return None
        found, why = corpus_mode.atlas_word(source[6:], word)
    if found is None:
        st.warning(md(why))
        return None
    if found.total > found.n and source == REFERENCE:
        st.info(
            f"“{md(word)}” is in {found.total:,} reference sentences: the page embeds {corpus_mode.MAX_CORPUS_SENTENCES:,} "
            "of them, evenly spread."
        )
    return found


def _sampled_words(found: cv.CorpusWord, source: str) -> str:
    """What the caption adds when only part of the source's occurrences were read ("" when all were)."""
    if source == REFERENCE:  # total counts sentences there
        read = len(found.sentences)
        return f" (in {read:,} of the {found.total:,} sentences that hold it)" if found.total > read else ""
    return f" (of {found.total:,}, evenly spread)" if found.total > found.n else ""


def typed_section(model, word: cv.CorpusWord, source: str):
    """The user's sentences: (lines, occurrences, their layers (L + 1, m, D)) on the same axes, or None."""
    with st.expander("Your sentences on the same map", expanded=bool(ss.get(keys.CORPUS_TYPED))):
        st.text_area(
            "One sentence per line; each occurrence of the word is placed among the corpus's.",
            key=keys.CORPUS_TYPED,
            max_chars=inputs.MAX_TEXT_CHARS,
            height=110,
            placeholder=f"We walked along the {word.word} of the river.",
        )
    text = ss.get(keys.CORPUS_TYPED) or ""
    if not text.strip():
        return None
    if model is None:
        st.warning("Your sentences need the page's model, and no model could be loaded.")
        return None
    lines = caches.parse_sentences(text).lines
    if len(lines) > MAX_TYPED_LINES:
        st.warning(f"Only your first {MAX_TYPED_LINES} sentences are placed (of {len(lines):,}).")
        lines = lines[:MAX_TYPED_LINES]
    occs = inputs.find_occurrences(lines, word.word)
    if not occs:
        st.info(f"Your sentences do not use “{md(word.word)}”.")
        return None
    shape = (word.layers.shape[0], word.layers.shape[2])
    if (model.embedder.num_layers, model.embedder.dim) != shape:
        st.warning("Your sentences cannot be placed: the page's model and the atlas's have different shapes.")
        return None
    if source != REFERENCE:
        built_with = corpus_mode.atlas_model(source[6:])[0]
        st.caption(
            f"Your sentences are embedded with the page's model ({md(model.display_name)}); the atlas was built "
            f"with “{md(built_with)}”: their places compare only when the two are the same model."
        )
    try:
        acts, _ = caches.embed(model, [ln.tokens for ln in lines])
    except Exception as err:
        st.error(f"The biLM failed on your sentences: {md(err)}")
        return None
    table = TokenTable(lines, acts)
    return lines, occs, table.layers()[:, table.rows(occs)]


# ---- the live part: the rail beside the map ------------------------------------------------------------------
def rail(num_layers: int) -> list[str]:
    st.subheader("Weights")
    for j in range(num_layers):
        st.slider(f"w_{j} · layer {j}", *mixing.W_RANGE, step=mixing.W_STEP, key=keys.corpus_weight_key(j))
    st.slider("γ (gamma)", *mixing.GAMMA_RANGE, step=0.1, key=keys.CORPUS_GAMMA, help="Scales the map's ELMo part.")
    selectors = live_bridge.bridge(num_layers, keys.corpus_weight_key, keys.CORPUS_GAMMA, keys.corpus_key("bridge"))
    cols = st.columns(2)
    for i, (label, name) in enumerate((("Equal", "equal"), ("Top only", "top"), ("Layer 0", "bottom"))):
        cols[i % 2].button(label, key=keys.corpus_key(f"preset_{name}"), on_click=_preset, args=(name, num_layers))
    st.selectbox(
        "sense groups",
        ["auto", *range(2, cv.MAX_GROUPS + 1)],
        key=keys.CORPUS_GROUPS,
        format_func=lambda k: "auto (best silhouette)" if k == "auto" else f"{k} groups",
        help="auto: the number of groups whose split is clearest (silhouette), or none when no split is clear; "
        "a number: that many groups by k-means on the unit vectors (cosine), clear or not.",
    )
    return selectors


def _memo(name: str, key, make):
    kept = ss.get("_corpus_" + name)
    if kept is not None and kept[0] == key:
        return kept[1]
    value = make()
    ss["_corpus_" + name] = (key, value)
    return value


@st.fragment
def live_view(word: cv.CorpusWord, typed, atlas, source: str) -> None:
    num_layers = word.layers.shape[0]
    left, right = st.columns([1, 3.4], gap="medium")
    with left:
        selectors = rail(num_layers)
    w = [float(ss[keys.corpus_weight_key(j)]) for j in range(num_layers)]
    gamma = float(ss[keys.CORPUS_GAMMA])
    s = mixing.softmax(w)
    left.caption("s = softmax(w) = (" + ", ".join(f"{v:.3f}" for v in s) + ")")
    ident = (source, word.word, word.n, id(word), None if typed is None else tuple(ln.tokens for ln in typed[0]))
    drawn = cv.sample_rows(word.n)
    m = 0 if typed is None else len(typed[1])
    live = _memo(
        "axes",
        ident,
        lambda: fixed_axes(np.concatenate([word.layers[:, drawn]] + ([typed[2]] if typed else []), axis=1), len(drawn)),
    )
    x = cv.mix(word.layers, s)
    k = ss.get(keys.CORPUS_GROUPS)
    k = None if k in (None, "auto") else int(k)
    groups = _memo("groups", (ident, tuple(np.round(s, 6)), k), lambda: cv.sense_groups(x, k))
    lines, occs = _points(word, drawn, groups, typed)
    query = _query(word, drawn, m)
    selected = None
    if query is not None:
        selected = int(np.searchsorted(drawn, query[1])) if query[0] == "corpus" else len(drawn) + query[1]
        if query[0] == "corpus" and (selected >= len(drawn) or drawn[selected] != query[1]):
            selected = None  # a query that is not drawn (the map is a sample)
    note = cv.sample_note(len(drawn), word.n)
    title = f"“{word.word}” in {word.source} · {plural(word.n, 'occurrence')}" + (f" · {note}" if note else "")
    chart = map_chart.contexts_chart(
        live.coords(s, gamma),
        occs,
        lines,
        "label",
        selected=selected,
        title=vega(title),
        live=live,
        released=(w, gamma),
        bind=selectors,
        what="fixed axes",
    )
    chart = dense(chart, len(occs))  # hundreds or thousands of points: smaller, translucent marks
    with right:
        st.html(map_chart.TOOLTIP_CSS)
        st.vega_lite_chart(
            chart.data,
            chart.spec,
            key=keys.CORPUS_MAP,
            on_select="rerun",
            selection_mode=[map_spec.PICK],
            width="stretch",
            alt=f"Map of every occurrence of “{word.word}”: {len(occs)} points",
        )
        st.caption(
            (f"{note[0].upper()}{note[1:]}. " if note else f"All {word.n:,} occurrences drawn. ")
            + "Fixed axes: the map moves while a slider is dragged. Click a point for its nearest contexts; drag to "
            "pan, shift + scroll to zoom, double-click to reset."
        )
        g_col, n_col = st.columns([1, 1], gap="medium")
        with g_col:
            exclude = corpus_mode.stop_words() | {word.word}
            windows = _memo("windows", ident, lambda: cv.context_windows(word))
            groups_panel(word, x, groups, windows, exclude)
        with n_col:
            q_vec, q_layers, q_tokens = _query_vectors(word, typed, query, x, s)
            nearest_panel(word, x, query, q_vec, q_layers, q_tokens, s, atlas)
    _keep(num_layers)


def _points(word: cv.CorpusWord, drawn: np.ndarray, groups: cv.Groups, typed):
    """The drawn points as the map's lines and occurrences: the sample's sentences, then the typed ones."""
    sent_of = word.occ_sentence[drawn]
    unique, line_of = np.unique(sent_of, return_inverse=True)
    lines = [inputs.Line(" ".join(word.sentences[i]), None, word.sentences[i]) for i in unique.tolist()]
    occs = [
        inputs.Occurrence(
            int(li), int(word.positions[r]), word.token(r), cv.group_name(int(groups.labels[r]), groups.k)
        )
        for li, r in zip(line_of.tolist(), drawn.tolist())
    ]
    if typed is not None:
        base = len(lines)
        lines = lines + list(typed[0])
        occs += [inputs.Occurrence(base + o.line, o.position, o.token, cv.TYPED) for o in typed[1]]
    return lines, occs


def _query(word: cv.CorpusWord, drawn: np.ndarray, m: int):
    """("corpus", row) or ("typed", j) of the last click on the map, kept while the word stays; None before one."""
    clicked = widgets.clicked_occurrence(ss.get(keys.CORPUS_MAP), len(drawn) + m)
    state = ss.get("_corpus_query")
    ident = (word.word, word.source, word.n)
    if state is None or state[0] != ident:
        state = (ident, clicked, None)  # a selection left from another word is no click on this one
    elif clicked is not None and clicked != state[1]:
        query = ("corpus", int(drawn[clicked])) if clicked < len(drawn) else ("typed", clicked - len(drawn))
        state = (ident, clicked, query)
    ss["_corpus_query"] = state
    return state[2]


def _query_vectors(word: cv.CorpusWord, typed, query, x: np.ndarray, s: np.ndarray):
    """The query's mixed vector, its layer vectors and (tokens, position); Nones without a query."""
    if query is None:
        return None, None, None
    if query[0] == "corpus":
        i = query[1]
        return x[i], word.layers[:, i], (word.tokens_of(i), int(word.positions[i]))
    if typed is None or query[1] >= len(typed[1]):
        return None, None, None
    occ = typed[1][query[1]]
    layers = typed[2][:, query[1]]
    return cv.mix(layers[:, None], s)[0], layers, (typed[0][occ.line].tokens, occ.position)


# ---- page -------------------------------------------------------------------------------------------------------
def main() -> None:
    _restore(None)
    title, lead = st.columns([1.2, 4], vertical_alignment="center")
    title.title("Corpus")
    lead.markdown(LEAD)
    try:
        model, _ = models.page_model()
    except Exception as err:
        st.error(f"No model could be loaded: {md(err)}")
        model = None
    top = st.columns([1.2, 2, 1.3], vertical_alignment="bottom")
    with top[0]:
        source = source_picker()
    if source != REFERENCE:
        why = corpus_mode.open_atlas(source[6:])[1]
        if why:
            st.error(f"The atlas cannot be opened: {md(why)}. The reference corpus is still there (Source).")
            return
    with top[1]:
        word = word_picker(source)
    found = load_word(model, source, word) if word is not None else None
    if found is not None and found.n < 2:
        st.warning(f"“{md(word)}” occurs once: a map needs at least two occurrences.")
        found = None
    if found is None:  # the message is up; the map of the last word shown stays (the previous state kept)
        found = previous_word(model, source)
        if found is None:
            return
    else:
        ss[LAST_SHOWN] = (source, word)
    with top[2]:
        st.caption(
            f"{plural(found.n, 'occurrence')} of “{md(found.word)}” in {md(found.source)}"
            + _sampled_words(found, source)
        )
    typed = typed_section(model, found, source)
    atlas = corpus_mode.open_atlas(source[6:])[0] if source != REFERENCE else None
    _restore(found.layers.shape[0])
    live_view(found, typed, atlas, source)


main()

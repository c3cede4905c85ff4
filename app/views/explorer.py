"""Explorer page: sentences in, the target word's contextual vectors out (map, neighbours, layers, export).

Widgets and wiring only; the logic is in ``app/explore.py`` and ``app/frame.py``, figures in ``app/figures.py``,
caches in ``app/resources.py``. The page's session keys, its link (URL) and what survives a page switch are
``app/state.py``'s: every key starts with "explorer_" (private ones with "_explorer_").
"""
from __future__ import annotations

import json
import time
import urllib.parse

import numpy as np
import streamlit as st

from app import explore as ex
from app import compare, exports, figures, resources, state
from app.clusters import NO_CLUSTER, agreement
from app.display import kwic, kwic_table, plural
from app.examples import EXAMPLE_SETS, find_example
from app.frame import METHOD_NAMES, Controls, Frame, Reference, compute_frame, layer_maps, layer_name, marked
from app.safe import md

ss = st.session_state
FRAME = state.FRAME
EXAMPLE_TEXTS = {name: e.text for name, e in EXAMPLE_SETS.items()}

INTRO = """
ELMo gives every word a vector that depends on the sentence around it. Type sentences that use one word in
different senses, one per line, optionally with a sense label in front (`[river] We sat on the bank.`), or load an
example set; pick the word; then see where its occurrences land. **Layer 0** is the context-free character-CNN
vector: every occurrence of one spelling gets the same vector there, and the spelling includes capitals ("Spring"
and "spring" are different inputs to it). **Layers 1 and 2** are the biLSTM layers,
which see the whole sentence. The ELMo vector mixes them: ELMo = γ · Σ_j s_j · h_j with s_j = softmax(w)_j.
Move the weights and watch the senses separate (or not).
"""


# ---- state ----------------------------------------------------------------------------------------------
def init_state(num_layers: int) -> None:
    """Fill missing widget state from the last view (the link's on a session's first run, see
    ``state.start_session``, called by the entry script before the model panel)."""
    state.restore(ss)  # k, same word only, the query, colour-by and the tab, if another page made Streamlit drop them
    view: state.View = ss[state.VIEW]
    for key, value in state.widget_defaults(view, num_layers).items():
        if key not in ss:
            ss[key] = value
        else:
            # Values set while this page was not shown (e.g. the Layers page's "use these weights") are kept by
            # Streamlit under the widget id, and a widget that (re)mounts with such a value is sent without
            # "set_value": the browser would show the widget's default (w = -5) and send that back. Writing
            # the value again on every run makes it a fresh session-state value, which the browser adopts.
            ss[key] = ss[key]


def model_in_link(model: resources.LoadedModel) -> str:
    """The bundled model's name a link carries (an uploaded model cannot travel in one)."""
    return ss.get(resources.BUNDLED_CHOICE_KEY) or "default"


def current_view(num_layers: int, model: resources.LoadedModel) -> state.View:
    example = find_example(ss.get(state.SENTENCES) or "")
    return state.view_of(ss, num_layers, example.name if example else None, model_in_link(model))


def sync_url(num_layers: int, model: resources.LoadedModel) -> None:
    """Keep the view in the URL (a shared link reopens it) and remember it for when widgets are not shown."""
    view = current_view(num_layers, model)
    ss[state.VIEW] = view
    params = state.view_to_query(view)
    if params != {k: st.query_params[k] for k in st.query_params}:
        st.query_params.from_dict(params)


def link_of(view: state.View) -> str:
    """The full link of ``view`` (the address the browser shows once the URL is synced)."""
    base = (st.context.url or "").split("?")[0]
    return f"{base}?{urllib.parse.urlencode(state.view_to_query(view))}"


# ---- callbacks (run before the script, so they may set widget state) --------------------------------------
def load_example(name: str) -> None:
    ss[state.SENTENCES] = EXAMPLE_SETS[name].text
    ss[state.WORD] = EXAMPLE_SETS[name].word
    ss[state.private("upload_message")] = None


def on_upload() -> None:
    file = ss.get(state.UPLOAD)
    if file is None:
        ss[state.private("upload_message")] = None
        return
    try:
        resources.check_upload_size("sentences", file.size, file.name)
        text, note = ex.text_for_box(ex.decode_upload(file.getvalue(), file.name), file.name)
        ss[state.SENTENCES] = text
        ss[state.WORD] = None
        ss[state.private("upload_message")] = None
        ss[state.private("upload_note")] = note
    except ValueError as err:  # the text box keeps what it had
        ss[state.private("upload_message")] = str(err)


def set_weights(preset: str, num_layers: int) -> None:
    state.set_preset(ss, preset, num_layers)


def reset_controls(num_layers: int) -> None:
    set_weights("equal", num_layers)
    ss[state.GAMMA], ss[state.LAYER_NORM], ss[state.PROJECTION] = 1.0, False, "auto"


# ---- sections -------------------------------------------------------------------------------------------
def presenting() -> bool:
    return bool(ss.get(state.PRESENT))


def input_section() -> ex.ParsedInput:
    st.subheader("1 · Sentences")
    if not presenting():
        st.caption("Example sets (one click loads the sentences and picks the word):")
    cols = st.columns(len(EXAMPLE_SETS))
    for col, (name, example) in zip(cols, EXAMPLE_SETS.items()):
        col.button(name, key=state.key(f"example_{name}"), help=example.title, on_click=load_example, args=(name,),
                   width="stretch")
    left, right = st.columns([3, 1]) if not presenting() else (st.container(), None)
    if right is not None:
        with right:
            st.file_uploader("…or upload a .txt file (one sentence per line)", type=["txt"], key=state.UPLOAD,
                             on_change=on_upload, max_upload_size=resources.UPLOAD_LIMITS_MB["sentences"])
            if ss.get(state.private("upload_message")):
                st.error(md(ss[state.private("upload_message")]))
            if ss.get(state.private("upload_note")):
                st.info(md(ss.pop(state.private("upload_note"))))
    with left:
        st.text_area("One sentence per line. Optional sense label in front: `[river] We sat on the bank.`",
                     key=state.SENTENCES, height=150 if presenting() else 230, max_chars=ex.MAX_TEXT_CHARS,
                     placeholder="[river] We sat on the bank of the river.\n[money] I went to the bank to pay in a cheque.")
    parsed = resources.parse_sentences(ss.get(state.SENTENCES) or "")
    for note in parsed.notes:
        st.warning(md(note))
    if parsed.lines and not presenting():
        with st.expander(f"Tokenization the model sees ({plural(len(parsed.lines), 'sentence')}, Moses tokenizer)"):
            st.dataframe({"#": list(range(1, len(parsed.lines) + 1)),
                          "label": [ln.label or "" for ln in parsed.lines],
                          "tokens": [" · ".join(ln.tokens) for ln in parsed.lines]},
                         hide_index=True, width="stretch")
    return parsed


def _pick_word(counts: dict[str, int], lines: list[ex.Line], fold_case: bool) -> None:
    """Make the word box hold a word of these sentences. A word the link asked for that is not there gets a
    calm note; a new text simply gets its most frequent word (the box shows which)."""
    asked = ss.get(state.WORD)
    text = ss.get(state.SENTENCES) or ""
    seen_text = ss.get(state.private("word_text"))
    if isinstance(asked, str) and asked.strip():
        wanted = asked.strip().casefold() if fold_case else asked.strip()
        if wanted in counts:
            ss[state.WORD] = wanted
            ss[state.private("word_text")] = text
            return
        if not fold_case and asked.strip().casefold() in {w.casefold() for w in counts}:
            # exact case asked for a word spelled otherwise here: its most frequent spelling
            ss[state.WORD] = next(w for w in counts if w.casefold() == asked.strip().casefold())
            ss[state.private("word_text")] = text
            return
        if seen_text is None:  # the first text of the session: the word came from the link
            st.info(f"The link's word “{md(asked)}” does not occur in these sentences; showing "
                    f"“{md(ex.suggest_word(lines, fold_case))}”, the most frequent word here.")
    ss[state.WORD] = ex.suggest_word(lines, fold_case)
    ss[state.private("word_text")] = text


def word_section(lines: list[ex.Line]) -> tuple[str, list[ex.Occurrence]] | None:
    st.subheader("2 · Target word")
    fold_case = bool(ss.get(state.FOLD_CASE, True))
    counts = dict(ex.word_counts(lines, fold_case))
    if not counts:
        st.warning("Your sentences contain no words (only punctuation or symbols): there is nothing to look at.")
        return None
    _pick_word(counts, lines, fold_case)
    left, right = st.columns([2, 1], vertical_alignment="bottom")
    left.selectbox("Target word (type its first letters; most frequent first)", ex.picker_order(counts.items()),
                   key=state.WORD, format_func=lambda w: f"{w}  ({counts.get(w, 0)}×)", filter_mode="prefix")
    with right:
        st.checkbox("treat case as the same word", key=state.FOLD_CASE,
                    help="Groups “Spring” and “spring” as one word for the occurrences, the map and the scores. "
                         "The model always reads the sentences as written.")
        st.checkbox("include -s, -ed, -ing forms", key=state.INFLECTIONS,
                    help="Simple inflections (-s, -es, -ed, -ing), by crude suffix rules, not a lemmatizer: "
                         "irregular forms (ran, mice) are not matched.")
    word = ss[state.WORD]
    inflections = bool(ss.get(state.INFLECTIONS))
    occurrences = ex.find_occurrences(lines, word, inflections, fold_case)
    if not occurrences:
        st.warning(f"“{md(word)}” does not occur in your sentences"
                   f"{', with inflections' if inflections else ''}. Pick one of the words in the list.")
        return None
    forms = ex.spellings(occurrences)
    n_lines = len({o.line for o in occurrences})
    st.markdown(f"**{plural(len(occurrences), 'occurrence')}** of “{md(word)}” in {plural(n_lines, 'sentence')}; "
                f"{'forms' if len(forms) > 1 else 'form'} as written: {', '.join(md(f) for f in forms[:12])}")
    case_forms = {f.casefold() for f in forms}
    if len(forms) > len(case_forms):
        st.caption("Layer 0 (the character CNN) reads each spelling as written, capitals included: "
                   f"{' and '.join(f'“{md(f)}”' for f in forms[:3])} get different layer-0 vectors, so at layer 0 "
                   "these occurrences split by capitalisation, not by sense. Colour the map by spelling to see it; "
                   "untick “treat case as the same word” to keep one spelling.")
    kw = [kwic(lines[o.line].tokens, o.position, 70, 70) for o in occurrences]
    st.html(kwic_table(kw, [("#", "n", [f"#{i + 1}" for i in range(len(occurrences))]),
                            *([("label", "lab", [o.label or "" for o in occurrences])]
                              if any(o.label for o in occurrences) else [])],
                       max_height_px=None if presenting() else 230))
    return word, occurrences


def embed_lines(model: resources.LoadedModel, lines: list[ex.Line]) -> ex.TokenTable | None:
    """Stacked activations of all sentences; the biLM only runs for sentences it has not seen."""
    key = (model.key, tuple(ln.tokens for ln in lines))
    memo = ss.get(state.private("table"))
    if memo is not None and memo[0] == key:
        return memo[1]
    bar = st.empty()
    start = time.perf_counter()
    try:
        with st.spinner("Running the biLM…"):
            acts, computed = resources.embed(model, [ln.tokens for ln in lines],
                                             lambda f, text: bar.progress(f, text=text), ex.PROGRESS_FROM)
    except Exception as err:
        st.error(f"The biLM failed on this input: {md(err)}")
        return None
    seconds = time.perf_counter() - start
    bar.empty()
    table = ex.TokenTable(lines, acts)
    ss[state.private("table")] = (key, table)
    ss["_timings"] = (f"Last biLM run: {seconds * 1000:.0f} ms for {computed} new of {len(lines)} sentences "
                      f"({table.num_tokens} tokens; the rest came from the cache).")
    return table


def reference_table(model: resources.LoadedModel, word: str, inflections: bool) -> tuple[ex.TokenTable | None, int, str]:
    """The word's reference sentences, embedded on demand (with a progress bar) and cached per model."""
    bar = st.empty()
    try:
        return resources.reference_table(model, word, inflections, lambda f, text: bar.progress(
            f, text=f"Embedding the reference sentences for “{md(word)}”: {text}"))
    finally:
        bar.empty()


# ---- the live part: sliders, map, neighbours, similarity, export --------------------------------------------
def _clicked(n: int) -> int | None:
    try:
        for point in (ss.get(state.MAP_CHART) or {}).get("selection", {}).get("points", []):
            idx = int((point.get("customdata") or [-1])[0])
            if 0 <= idx < n:
                return idx
    except (TypeError, ValueError, AttributeError):
        return None
    return None


def weights_section(num_layers: int) -> None:
    st.subheader("3 · Layer weights")
    cols = st.columns(num_layers + 1)
    for j in range(num_layers):
        cols[j].slider(f"w_{j} · layer {j}", *state.W_RANGE, step=state.W_STEP, key=state.weight_key(j),
                       help=f"Raw weight of {layer_name(j, num_layers)}; s = softmax(w).")
    cols[-1].slider("γ (gamma)", *ex.GAMMA_RANGE, step=0.1, key=state.GAMMA,
                    help="Overall scale. γ multiplies every vector equally, so it changes no cosine similarity "
                         "and no map; it matters for the exported vectors.")
    return cols


@st.fragment
def live_view(model: resources.LoadedModel, table: ex.TokenTable, word: str, occurrences: list[ex.Occurrence]) -> None:
    num_layers = table.num_layers
    cols = weights_section(num_layers)
    w = [float(ss[state.weight_key(j)]) for j in range(num_layers)]
    gamma = float(ss[state.GAMMA])
    weight_notes = [c.container() for c in cols[:num_layers]]  # filled from the frame below
    formula = st.container()

    b = st.columns(4)
    b[0].button("Equal weights", on_click=set_weights, args=("equal", num_layers), key=state.key("preset_equal"),
                width="stretch")
    b[1].button("Top layer only", on_click=set_weights, args=("top", num_layers), key=state.key("preset_top"),
                width="stretch")
    b[2].button("Layer 0 only", on_click=set_weights, args=("bottom", num_layers), key=state.key("preset_bottom"),
                width="stretch")
    b[3].button("Reset", on_click=reset_controls, args=(num_layers,), key=state.key("reset"), width="stretch",
                help="Equal weights, γ = 1, no layer norm, automatic projection.")
    if not presenting():
        o = st.columns(3, vertical_alignment="bottom")
        o[0].checkbox("layer norm", key=state.LAYER_NORM,
                      help="Normalise each layer of each sentence with one mean and variance over all its values "
                           "(AllenNLP's do_layer_norm) before mixing.")
        o[1].selectbox("2-D projection", ex.PROJECTIONS, key=state.PROJECTION, format_func=ex.PROJECTION_NAMES.get,
                       help=f"auto: PCA below {ex.MIN_POINTS_FOR_UMAP} points (too few for UMAP to mean anything), "
                            "else UMAP.")
        o[2].checkbox("other words in grey", key=state.CONTEXT,
                      help="Also place the sentences' other words on the map (projected together with the occurrences).")

    n = len(occurrences)
    query = ss.get(state.QUERY)
    link_query = ss.pop(state.LINK_QUERY, None)  # only on the session's first frame
    if not isinstance(query, int) or not 0 <= query < n:
        query, note = state.clamp_query(query if isinstance(query, int) else 0, n)
        if link_query is not None:
            st.info(md(note))
    controls = Controls(tuple(w), gamma, bool(ss.get(state.LAYER_NORM)), ss.get(state.PROJECTION, "auto"),
                        bool(ss.get(state.CONTEXT)), query, _clicked(n), int(ss.get(state.K) or 10),
                        bool(ss.get(state.SAME_WORD)), bool(ss.get(state.INFLECTIONS)),
                        bool(ss.get(state.FOLD_CASE, True)), n_clusters())
    ref, ref_total, ref_note = reference_table(model, word, controls.inflections)
    method_name = METHOD_NAMES.get(controls.projection, "the automatic projection")
    with st.spinner(f"Projecting {plural(n, 'point')} with {method_name}…"):
        frame = compute_frame(table, occurrences, controls, ss.get(FRAME), model_key=model.key, word=word,
                              reference=Reference(ref, ref_total, ref_note),
                              umap_state=resources.umap_warm_up().state, types=resources.type_vectors(model))
    ss[FRAME] = frame
    ss[state.QUERY] = frame.query  # before the selectbox is drawn, so a click moves it
    s = frame.s
    for j in range(num_layers):
        weight_notes[j].markdown(f"s_{j} = **{s[j]:.3f}**")
        weight_notes[j].progress(float(s[j]))
    terms = " + ".join(f"{s[j]:.3f}·h_{j}" for j in range(num_layers))
    formula.markdown(f"ELMo = γ · Σ_j s_j · h_j with s = softmax(w): ELMo = {gamma:g} · ({terms})")

    zero = frame.zero
    if zero.any():
        st.warning(f"{int(zero.sum())} of the {len(zero)} occurrences have an all-zero vector in this mix (numbered "
                   f"{', '.join(f'#{i + 1}' for i in np.flatnonzero(zero)[:10])}): a zero vector has no direction, "
                   "so it has no meaningful cosine similarity. It is left out of the separation scores; check "
                   "the model's weights.")
    share_row(model, num_layers)
    labels = list(state.TABS.values())
    tabs = st.tabs(labels, key=state.TAB, on_change="rerun")
    with tabs[0]:
        if frame.same_vector:
            why = ("layer 0 is context-free, so a word's vector does not depend on its sentence" if s[0] > 0.99
                   else "the occurrences do not differ in this mix (e.g. identical sentences)")
            st.info(f"All {plural(n, 'occurrence')} have the same vector here: {why}. They are drawn at one "
                    "spot; move weight to layers 1 and 2 to see context effects.")
        map_tab(frame, occurrences, table, model.display_name)
    with tabs[1]:
        neighbours_tab(frame, occurrences, table)
    with tabs[2]:
        similarity_tab(frame, occurrences)
    with tabs[3]:
        senses_tab(frame, occurrences, table)
    with tabs[4]:
        compare_tab(model, table, frame, occurrences)
    with tabs[5]:
        export_tab(table, occurrences, frame, model)
    sync_url(num_layers, model)
    state.remember(ss)


def share_row(model: resources.LoadedModel, num_layers: int) -> None:
    """The "Copy link" button and what a link cannot carry."""
    view = current_view(num_layers, model)
    link = link_of(view)
    notes = []
    if model.key.startswith(("upload:", "path:")):
        notes.append(f"This view uses your loaded model “{md(model.display_name)}”, which cannot travel in a link: "
                     f"whoever opens it sees the bundled “{md(view.model)}” model instead.")
    if any(isinstance(ss.get(k), str) and not ss[k].startswith("bundled:") for k in (state.COMPARE_A, state.COMPARE_B)):
        notes.append("The comparison uses a model that is not bundled, so the link leaves the comparison out.")
    if not state.text_fits_link(view):
        notes.append(f"These sentences are too long to keep in the link (over {ex.MAX_URL_TEXT:,} characters): "
                     "the link keeps the word and the controls only. Share the sentences as a .txt file.")
    left, right = st.columns([1.3, 4], vertical_alignment="center")
    with left:
        copy_button(link)
    with right:
        st.caption(" ".join(notes) or "The link holds this view: sentences, word, every control, the tab and the "
                   "bundled model; it draws the same map in any browser.")


def copy_button(link: str) -> None:
    """A button that copies ``link`` to the clipboard. The HTML is ours; the link (user text: sentences, word)
    enters only as a JSON string literal with "<" escaped, so it can end neither the string nor the script."""
    data = json.dumps(link).replace("<", "\\u003c")
    st.iframe(
        "<style>html,body{margin:0;overflow:hidden}button{font:14px sans-serif;padding:6px 12px;white-space:nowrap;"
        "border:1px solid #ccc;border-radius:8px;background:#fff;cursor:pointer}"
        "button:hover{border-color:#ff4b4b;color:#ff4b4b}span{font:13px sans-serif;color:#555;margin-left:6px}</style>"
        "<button id='copy' title='Copy the link of this view'>Copy link</button><span id='done'></span>"
        f"<script>const link = {data};"
        "document.getElementById('copy').onclick = async () => {"
        "  const done = document.getElementById('done');"
        "  try { await navigator.clipboard.writeText(link); done.textContent = 'copied'; }"
        "  catch (e) { const t = document.createElement('textarea'); t.value = link; document.body.appendChild(t);"
        "    t.select(); const ok = document.execCommand('copy'); t.remove();"
        "    done.textContent = ok ? 'copied' : 'copy it from the address bar'; }"
        "};</script>", height=40, width="stretch")


def n_clusters() -> int:
    value = ss.get(state.N_CLUSTERS)
    return value if isinstance(value, int) else 0


def map_tab(frame: Frame, occurrences, table, model_name: str) -> None:
    n = len(occurrences)
    proj, context_rows = frame.projection, frame.context_rows
    if proj.coords is None:
        st.warning(f"“{md(frame.word)}” occurs {plural(n, 'time')}: a 2-D map needs at least "
                   f"{ex.MIN_POINTS_FOR_MAP} points, so there is no map. The occurrences above, the neighbours and "
                   "the export still work.")
        return
    has_labels = any(o.label for o in occurrences)
    several_spellings = len(ex.spellings(occurrences)) > 1
    choices = [c for c in state.COLOR_BY_CHOICES
               if (c != "label" or has_labels) and (c != "spelling" or several_spellings)
               and (c != "cluster" or frame.clusters is not None)]
    if ss.get(state.COLOR_BY) not in choices:
        ss[state.COLOR_BY] = choices[0]
    left, right = st.columns([1, 1], vertical_alignment="center")
    if len(choices) > 1:
        left.radio("colour by", choices, key=state.COLOR_BY, horizontal=True,
                   help="cluster: the groups found in the current mix without using labels (Senses tab).")
    right.radio("show", list(state.MAP_VIEWS.values()), key=state.MAP_VIEW, horizontal=True,
                help="Layer 0, 1, 2 and the current mix next to each other, each projected alone with the same "
                     "method and turned onto the mix's map, so you can see where context comes in.")
    color_by = ss[state.COLOR_BY]
    method = METHOD_NAMES.get(proj.method, proj.method)
    settings = exports.Settings.of_frame(frame, model_name)
    fig = figures.frame_map(frame, occurrences, table, color_by, title=exports.map_title(settings, method))
    ss[state.private("map_figure")] = fig
    st.plotly_chart(fig, key=state.MAP_CHART, on_select="rerun", selection_mode="points", width="stretch",
                    config=exports.png_config(exports.file_stem(frame.word, model_name, "map")))
    what = f"the {n} occurrence vectors" + (f" and {len(context_rows)} other words" if len(context_rows) else "")
    st.caption(f"{method} of {what} (cosine geometry: vectors scaled to unit length; the axes have no units; "
               "fitted with a fixed seed from the equal-weights layout, so the same settings give the same map). "
               f"Click a point to make it the neighbours query (ring). {proj.note} "
               f"Mix + projection: {frame.map_ms:.0f} ms.")
    if ss.get(state.MAP_VIEW) == state.MAP_VIEWS["layers"]:
        layers_side_by_side(frame, occurrences, table, color_by, settings)


def layers_side_by_side(frame: Frame, occurrences, table, color_by: str, settings) -> None:
    with st.spinner("Projecting each layer…"):
        maps = layer_maps(table, frame, ss.get(state.private("layer_maps")), resources.umap_warm_up().state)
    if maps is None:
        return
    ss[state.private("layer_maps")] = maps
    method = METHOD_NAMES.get(maps.method, maps.method)
    clusters = frame.clusters.labels if frame.clusters is not None else None
    fig = figures.small_multiples(maps, occurrences, table.lines, color_by, clusters,
                                  title=exports.map_title(settings, method) + " · layers side by side")
    st.plotly_chart(fig, key=state.key("layer_maps_chart"), width="stretch",
                    config=exports.png_config(exports.file_stem(frame.word, settings.model, "layers")))
    st.caption(f"Each panel is a {method} of one layer's vectors of the {len(occurrences)} occurrences, rotated, "
               "reflected and scaled onto the mix's map (Procrustes), so the same place means the same in every "
               "panel. Layer 0 sees only the word's spelling; layers 1 and 2 see the sentence.")


def neighbours_tab(frame: Frame, occurrences, table) -> None:
    n = len(occurrences)
    lines = table.lines
    c1, c2, c3 = st.columns([3, 1, 1.6], vertical_alignment="bottom")
    c1.selectbox("Query occurrence (or click a point on the map)", list(range(n)), key=state.QUERY,
                 format_func=lambda i: f"#{i + 1} · {occurrences[i].label or ''} · "
                                       f"{marked(lines[occurrences[i].line].tokens, occurrences[i].position, 6)}")
    c2.number_input("k", min_value=state.K_RANGE[0], max_value=state.K_RANGE[1], key=state.K)
    c3.checkbox("same word only", key=state.SAME_WORD,
                help="Search only the other occurrences of the target word, as the ELMo paper's Table 4 does.")
    q_occ = occurrences[frame.query]
    st.html(kwic_table([kwic(lines[q_occ.line].tokens, q_occ.position, 80, 80)], [("query", "n", [f"#{frame.query + 1}"])]))
    st.markdown("**ELMo mix: your sentences**")
    rows_out = frame.neighbours
    has_labels = any(r[1] for r in rows_out)
    st.html(kwic_table([r[3] for r in rows_out],
                       [("cos", "c", [f"{r[2]:.3f}" for r in rows_out]),
                        *([("label", "lab", [r[1] for r in rows_out])] if has_labels else [])]))
    left, right = st.columns([2, 1])
    with left:
        st.markdown("**ELMo mix: reference corpus**")
        if frame.reference_neighbours is None:
            st.info(frame.reference_note)
        else:
            found = frame.reference_neighbours
            st.html(kwic_table([k for _, k in found], [("cos", "c", [f"{c:.3f}" for c, _ in found])]))
            st.caption(frame.reference_note)
    with right:
        st.markdown("**Layer 0 (context-free): nearest word types**")
        found = frame.layer0_neighbours
        st.dataframe({"word": [word for word, _ in found], "cos": [round(sim, 3) for _, sim in found]},
                     hide_index=True, width="stretch",
                     column_config={"cos": st.column_config.NumberColumn(format="%.3f")})
        st.caption("Layer 0 ignores context: these are spelling/usage neighbours of the word type, like the "
                   f"GloVe column of the ELMo paper's Table 4. {frame.layer0_note}")


def similarity_tab(frame: Frame, occurrences) -> None:
    n = len(occurrences)
    if n < 2:
        st.info("The layer comparison needs at least 2 occurrences.")
        return
    for note in frame.notes:
        st.caption(note)
    st.markdown("**Cosine similarity between the occurrences** (sorted by label; one colour scale for all panels)")
    st.plotly_chart(figures.frame_heatmaps(frame, occurrences), key=state.key("heatmaps"), width="stretch")
    scores = frame.separation
    st.markdown("**Sense separation per layer**")
    chart = figures.frame_separation(frame)
    if chart is None:
        st.info(scores[0].note or "No score for this input.")
        return
    st.plotly_chart(chart, key=state.key("separation"), width="stretch")
    has_knn = any(s.knn_accuracy is not None for s in scores)
    forms = ex.spellings(occurrences)
    case_note = ("" if len(forms) == len({f.casefold() for f in forms}) else
                 f" Layer 0 sees {' and '.join(md(f) for f in forms[:3])} as different words (capitals are part of "
                 "the spelling), so its score measures the split by capitalisation here, not by sense.")
    st.caption(("1-NN accuracy: share of occurrences whose nearest other occurrence (cosine) has the same label "
                "(leave-one-out; chance = random neighbour). " if has_knn else "")
               + "Silhouette: (b − a)/max(a, b) with cosine distances, −1…1, higher = senses further apart. "
               + (scores[0].note or "") + case_note)


def colour_by_cluster() -> None:
    ss[state.COLOR_BY] = "cluster"


def senses_tab(frame: Frame, occurrences, table) -> None:
    n = len(occurrences)
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    c1.selectbox("number of clusters", [0] + list(range(2, state.MAX_CLUSTERS + 1)), key=state.N_CLUSTERS,
                 format_func=lambda k: "auto (best silhouette)" if k == 0 else str(k),
                 help="Auto tries 2 to 6 clusters and keeps the split with the highest silhouette.")
    found = frame.clusters
    if found is None:
        st.info(f"The {n} occurrence(s) cannot be split into clusters here: "
                + ("they all have the same vector in this mix." if frame.same_vector else
                   "clustering needs at least 3 occurrences with a non-zero vector."))
        return
    c2.button("Colour the map by cluster", key=state.key("colour_by_cluster"), on_click=colour_by_cluster)
    how = ("chosen by silhouette among " + ", ".join(str(k) for k in found.silhouettes) if found.chosen_by == "silhouette"
           else "set by hand")
    st.markdown(f"**{found.k} clusters** in the current mix ({how}); silhouette {found.silhouette:.2f} "
                "(−1…1, higher = groups further apart). " + md(found.note))
    if len(found.silhouettes) > 1:
        st.caption("Silhouette per number of clusters: " + ", ".join(
            f"{k}: {v:.2f}" for k, v in found.silhouettes.items()))
    labels = [o.label for o in occurrences]
    agree = agreement(found, labels)
    if agree is not None:
        st.markdown(f"**Agreement with your labels:** adjusted Rand index **{agree.ari:.2f}** over {agree.n} "
                    "labelled occurrences (1 = the clusters are exactly your senses, about 0 = no better than "
                    "chance). Occurrences per sense (rows) and cluster (columns):")
        st.dataframe({"sense": agree.senses, **{f"cluster {c + 1}": agree.counts[:, j].tolist()
                                                 for j, c in enumerate(agree.clusters)}}, hide_index=True)
    elif any(labels):
        st.caption("Fewer than two labelled senses: no agreement score.")
    lines = table.lines
    for c in sorted(set(found.labels.tolist())):
        members = found.members(c)
        colour = figures.PALETTE[c % len(figures.PALETTE)] if c != NO_CLUSTER else figures.GREY
        name = f"cluster {c + 1}" if c != NO_CLUSTER else "no cluster (all-zero vector)"
        has_labels = any(occurrences[i].label for i in members)
        st.html(f"<div style='margin-top:6px'><span style='display:inline-block;width:12px;height:12px;"
                f"border-radius:6px;background:{colour};margin-right:6px'></span><b>{name}</b> · "
                f"{plural(len(members), 'occurrence')}</div>")
        st.html(kwic_table([kwic(lines[occurrences[i].line].tokens, occurrences[i].position) for i in members],
                           [("#", "n", [f"#{i + 1}" for i in members]),
                            *([("label", "lab", [occurrences[i].label or "" for i in members])] if has_labels else [])]))
    st.caption("Average-linkage clustering of the occurrences' vectors in the current mix, by cosine distance "
               "(scikit-learn); move the sliders and the clusters follow the mix.")


def compare_tab(model: resources.LoadedModel, table: ex.TokenTable, frame: Frame, occurrences) -> None:
    choices = resources.comparison_choices()
    specs = {spec: label for label, spec in choices.items()}
    for key in (state.COMPARE_A, state.COMPARE_B):
        if ss.get(key) is not None and ss[key] not in specs:
            del ss[key]  # a model that went away (an unloaded upload, a link's unknown one): the placeholder
    st.caption("The same sentences, word and layer weights with two models: the maps side by side (the right "
               "one turned onto the left one, since a projection's rotation means nothing) and the separation "
               "scores per layer.")
    if len(specs) < 2:
        st.info("Only one model is available here. Load your own under “Load your own ELMo” in the sidebar to "
                "compare it with this one.")
        return
    c1, c2 = st.columns(2)
    c1.selectbox("left model", list(specs), key=state.COMPARE_A, index=None, placeholder="pick a model",
                 format_func=specs.get)
    c2.selectbox("right model", list(specs), key=state.COMPARE_B, index=None, placeholder="pick a model",
                 format_func=specs.get)
    a, b = ss.get(state.COMPARE_A), ss.get(state.COMPARE_B)
    if a is None or b is None:
        st.info("Pick two models to compare.")
        return
    if a == b:
        st.info("Pick two different models.")
        return
    models = []
    for spec in (a, b):
        label = specs[spec]
        try:
            loaded = resources.comparison_model(spec)
        except (KeyError, FileNotFoundError, ValueError) as err:
            st.error(f"Could not load {md(label)}: {md(err)}")
            return
        other = table if loaded.key == model.key else embed_for(loaded, table.lines)
        if other is None:
            return
        models.append((label.rsplit(" (", 1)[0], loaded.key, other))
    with st.spinner("Projecting both models…"):
        sides = compare.compare(models, occurrences, frame.controls, frame.word, ss.get(state.private("compare_sides"), ()),
                                resources.umap_warm_up().state)
    ss[state.private("compare_sides")] = sides
    color_by = ss.get(state.COLOR_BY, "label")
    figs = figures.comparison_maps(sides, occurrences, table, color_by if color_by != "cluster" else "label")
    cols = st.columns(len(sides))
    for j, (col, side, fig) in enumerate(zip(cols, sides, figs)):
        with col:
            if fig is None:
                st.info("No map: fewer than 3 occurrences.")
            else:
                stem = exports.file_stem(frame.word, side.name, "map")
                st.plotly_chart(fig, key=state.key(f"compare_map_{j}"), width="stretch", config=exports.png_config(stem))
            chart = figures.frame_separation(side.frame)
            if chart is not None:  # half the page wide: short names, the legend under the bars
                short = [f"layer {j}" for j in range(len(side.frame.separation) - 1)] + ["mix"]
                chart = figures.separation_chart(short, side.frame.separation)
                chart.update_layout(height=300, legend=dict(orientation="h", yanchor="top", y=-0.12, x=0))
                st.plotly_chart(chart, key=state.key(f"compare_sep_{j}"), width="stretch")
    st.markdown("**Separation scores per layer**")
    st.dataframe(compare.score_rows(sides), hide_index=True, width="stretch")
    note = sides[0].frame.separation[0].note if sides[0].frame.separation else ""
    st.caption("1-NN: leave-one-out nearest-neighbour accuracy with your labels; silhouette: cosine, −1…1. "
               + md(note))


def embed_for(loaded: resources.LoadedModel, lines) -> ex.TokenTable | None:
    """Another model's activations of the same sentences (the shared cache; progress for long sets)."""
    key = (loaded.key, tuple(ln.tokens for ln in lines))
    memo = ss.get(state.private("compare_tables"), {})
    if key in memo:
        return memo[key]
    bar = st.empty()
    try:
        with st.spinner(f"Running {md(loaded.display_name)} on the sentences…"):
            acts, _ = resources.embed(loaded, [ln.tokens for ln in lines],
                                      lambda f, text: bar.progress(f, text=text), ex.PROGRESS_FROM)
    except Exception as err:
        st.error(f"{md(loaded.display_name)} failed on these sentences: {md(err)}")
        return None
    bar.empty()
    table = ex.TokenTable(lines, acts)
    memo = {k: v for k, v in memo.items() if k[1] == key[1]}  # same sentences only: at most the two sides
    memo[key] = table
    ss[state.private("compare_tables")] = dict(list(memo.items())[-2:])
    return table


def export_tab(table, occurrences, frame: Frame, model) -> None:
    model_name = model.display_name
    lines = table.lines
    x, proj, word = frame.vectors, frame.projection, frame.word
    settings = exports.Settings.of_frame(frame, model_name)
    clusters = frame.clusters.labels if frame.clusters is not None else None

    def stem(what: str) -> str:
        return exports.file_stem(word, model_name, what)

    layers_occ = table.layers(frame.controls.layer_norm)[:, frame.rows]  # (L+1, n, D), as mixed
    c1, c2, c3 = st.columns(3)
    c1.download_button("Vectors, current mix (CSV)", lambda: exports.vectors_csv(lines, occurrences, x, settings),
                       file_name=stem("mix") + ".csv", mime="text/csv", key=state.key("dl_csv"), on_click="ignore")
    c1.download_button("Vectors, current mix (.npz, n × D)",
                       lambda: exports.npz_bytes({"vectors": x}, settings, lines, occurrences),
                       file_name=stem("mix") + ".npz", mime="application/octet-stream", key=state.key("dl_npy"), on_click="ignore")
    c1.download_button("All layers (.npz, (L+1) × n × D)",
                       lambda: exports.npz_bytes({"layers": layers_occ}, settings, lines, occurrences),
                       file_name=stem("layers") + ".npz", mime="application/octet-stream", key=state.key("dl_layers"),
                       on_click="ignore")
    if not np.isfinite(x).all():
        c2.warning("No Projector export: some vectors have non-finite values, which the Projector cannot read.")
    else:
        c2.download_button("Embedding Projector (vectors.tsv + metadata.tsv, .zip)",
                           lambda: exports.projector_zip(lines, occurrences, x, settings, clusters),
                           file_name=stem("projector") + ".zip", mime="application/zip", key=state.key("dl_projector"),
                           on_click="ignore")
        c2.caption("Unzip, open projector.tensorflow.org, “Load”, then choose vectors.tsv and metadata.tsv.")
    if proj.coords is not None:
        n = len(occurrences)
        c3.download_button("2-D coordinates (CSV)",
                           lambda: exports.coords_csv(lines, occurrences, proj.coords[:n], settings, clusters),
                           file_name=stem("map") + ".csv", mime="text/csv", key=state.key("dl_coords"), on_click="ignore")
        fig = ss.get(state.private("map_figure"))
        if fig is not None:
            c3.download_button("Map figure (HTML, works offline)",
                               lambda: fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8"),
                               file_name=stem("map") + ".html", mime="text/html", key=state.key("dl_html"), on_click="ignore")
        c3.caption(f"PNG: the camera icon in the map's toolbar saves {stem('map')}.png with the map's title "
                   "(this server has no static image export: plotly's needs the kaleido package and a browser).")
    st.caption("Numbers count from 1 as on this page (occurrence #1, sentence 1, token 1). Every file records the "
               "model, w, s, γ, layer norm and the sentences (CSV: in each row; .npz and the zip: "
               "`settings` / settings.json).")
    if not state.text_fits_link(current_view(table.num_layers, model)):
        st.warning(f"These sentences are too long to keep in the link (over {ex.MAX_URL_TEXT:,} characters): the "
                   "page URL keeps the word and the controls only. Share the sentences as a .txt file (the "
                   "upload box reads it).")


# ---- page -------------------------------------------------------------------------------------------------
def main() -> None:
    try:
        model, _ = resources.current_model()
    except Exception as err:
        st.error(f"No model could be loaded: {md(err)}")
        return
    num_layers = model.embedder.num_layers
    init_state(num_layers)
    st.title("ELMo Explorer")
    for note in ss.pop(state.LINK_NOTES, None) or []:
        st.warning(md(note))
    if not presenting():
        st.markdown(INTRO)

    parsed = input_section()
    per_token = model.embedder.num_layers * model.embedder.dim * 4 * 2  # the table and its layer-normed copy
    lines, note = ex.fit_budget(parsed.lines, resources.session_budget_bytes() // per_token)
    if note:
        st.warning(note)
    parsed = ex.ParsedInput(lines, parsed.notes)
    if not parsed.lines:
        st.info("Type or paste some sentences above (one per line), upload a .txt file, or load an example set.")
        sync_url(num_layers, model)
        return
    picked = word_section(parsed.lines)
    if picked is None:
        sync_url(num_layers, model)
        return
    word, occurrences = picked
    table = embed_lines(model, parsed.lines)
    if table is None:
        return
    live_view(model, table, word, occurrences)


main()

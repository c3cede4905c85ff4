"""Explorer page: sentences in, the target word's contextual vectors out (map, neighbours, layers, export).

Widgets and wiring only: the page reads its widgets into ``Controls`` (``app/state.py``), calls
``app.frame.compute_frame`` and draws the frame with the texts ``app/frame.py`` writes for it and the figures of
``app/figures.py``; caches are ``app/resources.py``'s. The page's session keys, its link (URL), the word box and
what survives a page switch are ``app/state.py``'s: every key starts with "explorer_" (private ones with
"_explorer_").
"""
from __future__ import annotations

import html
import json
import time
import urllib.parse

import streamlit as st

from app import activations, inputs, mixing, projections
from app import compare, exports, figures, fit_mix, map_chart, resources, state
from app.clusters import CLEAR_SILHOUETTE, agreement, min_cluster_size
from app.display import kwic_list, kwic_table, plural
from app.examples import EXAMPLE_SETS, find_example
from app.frame import (Frame, Reference, cluster_groups, cluster_summary, compute_frame, embedding_note, layer_maps,
                       layer_name, map_caption, method_name, mix_formula, neighbour_lines, no_neighbours_note,
                       occurrence_layers, occurrence_lines, query_option, same_vector_note, separation_caption,
                       tokenization_rows, word_summary, zero_note)
from app.safe import md

ss = st.session_state
FRAME = state.FRAME
EXAMPLE_TEXTS = {name: e.text for name, e in EXAMPLE_SETS.items()}

LEAD = ("ELMo gives every word a vector that depends on the sentence around it. Load an example set (or your own "
        "sentences), pick a word, then move the layer weights beside the map and watch its senses separate (or not).")
INTRO = """
Type sentences that use one word in different senses, one per line, optionally with a sense label in front
(`[river] We sat on the bank.`), or load an example set; pick the word; then see where its occurrences land.
**Layer 0** is the context-free character-CNN vector: every occurrence of one spelling gets the same vector there,
and the spelling includes capitals ("Spring" and "spring" are different inputs to it). **Layers 1 and 2** are the
biLSTM layers, which see the whole sentence. The ELMo vector mixes them: ELMo = γ · Σ_j s_j · h_j with
s_j = softmax(w)_j. For a projector: presentation mode (in the sidebar, or `present=1` in the link).
"""


# ---- state ----------------------------------------------------------------------------------------------
def model_in_link(model: resources.LoadedModel) -> str:
    """The named model a link carries: the model panel's choice (bundled or published), else the startup
    model's name (an uploaded model cannot travel in a link)."""
    return ss.get(resources.BUNDLED_CHOICE_KEY) or resources.startup_name() or "default"


def current_view(num_layers: int, model: resources.LoadedModel) -> state.View:
    example = find_example(ss.get(state.SENTENCES) or "")
    return state.view_of(ss, num_layers, example.name if example else None, model_in_link(model))


def sync_url(num_layers: int, model: resources.LoadedModel) -> None:
    """Keep the view in the URL (a shared link reopens it) and remember it for when widgets are not shown."""
    view = current_view(num_layers, model)
    ss[state.VIEW] = view
    params = state.view_to_query(view, resources.startup_name() or "default")
    if params != {k: st.query_params[k] for k in st.query_params}:
        st.query_params.from_dict(params)


def link_of(view: state.View) -> str:
    """The full link of ``view`` (the address the browser shows once the URL is synced)."""
    base = (st.context.url or "").split("?")[0]
    return f"{base}?{urllib.parse.urlencode(state.view_to_query(view, resources.startup_name() or 'default'))}"


# ---- callbacks (run before the script, so they may set widget state) --------------------------------------
def load_example(name: str) -> None:
    ss[state.SENTENCES] = EXAMPLE_SETS[name].text
    ss[state.WORD] = EXAMPLE_SETS[name].word
    ss[state.private("upload_message")] = None
    ss[state.SENTENCES_OPEN] = False  # the map comes up where the text was


def on_upload() -> None:
    file = ss.get(state.UPLOAD)
    if file is None:
        ss[state.private("upload_message")] = None
        return
    try:
        resources.check_upload_size("sentences", file.size, file.name)
        text, note = inputs.text_for_box(inputs.decode_upload(file.getvalue(), file.name), file.name)
        ss[state.SENTENCES] = text
        ss[state.WORD] = None
        ss[state.private("upload_message")] = None
        ss[state.private("upload_note")] = note
        ss[state.SENTENCES_OPEN] = False  # loaded: the map comes up where the text was
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


def chart(fig):
    """``fig`` as the page draws it: larger type in presentation mode (``figures.for_projector``)."""
    return figures.for_projector(fig) if presenting() and fig is not None else fig


def input_section() -> inputs.ParsedInput:
    """The example sets' buttons, and the sentences in a box that stays closed once a set is loaded (the map,
    not the text, is what the page is for); it opens for an empty box, and by a click to edit."""
    if state.SENTENCES_OPEN not in ss:  # a session's first run: open only when there is nothing to show
        ss[state.SENTENCES_OPEN] = not (ss.get(state.SENTENCES) or "").strip()
    cols = st.columns([1.35] + [1] * len(EXAMPLE_SETS), vertical_alignment="center")
    cols[0].markdown("**1 · Sentences**")
    for col, (name, example) in zip(cols[1:], EXAMPLE_SETS.items()):
        col.button(name, key=state.key(f"example_{name}"), help=example.title, on_click=load_example, args=(name,),
                   width="stretch")
    box = st.expander("Edit the sentences, type your own or upload a .txt file", key=state.SENTENCES_OPEN,
                      on_change="rerun")
    with box:
        parsed = sentences_box()
    if ss.get(state.private("upload_note")):  # outside the box, which a loaded file closes
        st.info(md(ss.pop(state.private("upload_note"))))
    for note in parsed.notes:
        st.warning(md(note))
    return parsed


def sentences_box() -> inputs.ParsedInput:
    left, right = st.columns([3, 1]) if not presenting() else (st.container(), None)
    if right is not None:
        with right:
            st.file_uploader("…or upload a .txt file (one sentence per line)", type=["txt"], key=state.UPLOAD,
                             on_change=on_upload, max_upload_size=resources.UPLOAD_LIMITS_MB["sentences"])
            if ss.get(state.private("upload_message")):
                st.error(md(ss[state.private("upload_message")]))
    with left:
        st.text_area("One sentence per line. Optional sense label in front: `[river] We sat on the bank.`",
                     key=state.SENTENCES, height=150 if presenting() else 230, max_chars=inputs.MAX_TEXT_CHARS,
                     help=inputs.LABEL_HELP,
                     placeholder="[river] We sat on the bank of the river.\n[money] I went to the bank to pay in a cheque.")
    parsed = resources.parse_sentences(ss.get(state.SENTENCES) or "")
    if parsed.lines and not presenting():
        with st.expander(f"Tokenization the model sees ({plural(len(parsed.lines), 'sentence')}, Moses tokenizer)"):
            st.dataframe(tokenization_rows(parsed.lines), hide_index=True, width="stretch")
    return parsed


def word_section(lines: list[inputs.Line]) -> tuple[str, list[inputs.Occurrence]] | None:
    """The word picker and how often the word occurs; its concordance is drawn under the map
    (``occurrences_section``)."""
    fold_case = bool(ss.get(state.FOLD_CASE, True))
    counts = dict(inputs.word_counts(lines, fold_case))
    if not counts:
        st.warning("Your sentences contain no words (only punctuation or symbols): there is nothing to look at.")
        return None
    note = state.pick_word(ss, counts, lines, fold_case)
    if note:
        st.info(note)
    if presenting():  # the count under the picker: presentation mode's larger type leaves the row no room
        left, right = st.columns([2, 1], vertical_alignment="bottom")
        summary = st.container()
    else:  # the count beside it, one row less above the map
        left, right, summary = st.columns([1.5, 1, 1.6], vertical_alignment="bottom")
    left.selectbox("2 · Target word (type its first letters; most frequent first)", inputs.picker_order(counts.items()),
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
    occurrences = inputs.find_occurrences(lines, word, inflections, fold_case)
    if not occurrences:
        st.warning(f"“{md(word)}” does not occur in your sentences"
                   f"{', with inflections' if inflections else ''}. Pick one of the words in the list.")
        return None
    headline, case_caption = word_summary(word, occurrences)
    summary.markdown(headline)
    if case_caption:
        st.caption(case_caption)
    return word, occurrences


def occurrences_section(lines: list[inputs.Line], word: str, occurrences: list[inputs.Occurrence]) -> None:
    """The word's concordance, under the map and its views (the map's points carry the same sentences)."""
    st.markdown(f"**Occurrences of “{md(word)}”** (numbered as on the map and in the tables)")
    st.html(kwic_table(*occurrence_lines(occurrences, lines, chars=70), max_height_px=None if presenting() else 330))


def embed_lines(model: resources.LoadedModel, lines: list[inputs.Line]) -> activations.TokenTable | None:
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
                                             lambda f, text: bar.progress(f, text=text), activations.PROGRESS_FROM)
    except Exception as err:
        st.error(f"The biLM failed on this input: {md(err)}")
        return None
    seconds = time.perf_counter() - start
    bar.empty()
    table = activations.TokenTable(lines, acts)
    ss[state.private("table")] = (key, table)
    ss["_timings"] = embedding_note(seconds, computed, table)
    return table


def reference_table(model: resources.LoadedModel, word: str, inflections: bool) -> tuple[activations.TokenTable | None, int, str]:
    """The word's reference sentences, embedded on demand (with a progress bar) and cached per model."""
    bar = st.empty()
    try:
        return resources.reference_table(model, word, inflections, lambda f, text: bar.progress(
            f, text=f"Embedding the reference sentences for “{md(word)}”: {text}"))
    finally:
        bar.empty()


# Only the open tab is drawn (a first map sooner, less work per slider move): its widgets keep their values
# while another tab is open, and across a visit to another page, as the URL and the export need them.
KEEP = "session"


# ---- the live part: sliders, map, neighbours, similarity, export --------------------------------------------
def weights_section(num_layers: int) -> list:
    """The weight sliders and γ, one under another in the rail beside the map; returns one container per layer
    for its s_j (filled once the frame is known)."""
    st.subheader("3 · Weights")
    notes = []
    for j in range(num_layers):
        st.slider(f"w_{j} · layer {j}", *state.W_RANGE, step=state.W_STEP, key=state.weight_key(j),
                  help=f"Raw weight of {layer_name(j, num_layers)}; s = softmax(w).")
        notes.append(st.container())
    st.slider("γ (gamma)", *mixing.GAMMA_RANGE, step=0.1, key=state.GAMMA,
              help="Overall scale. γ multiplies every vector equally, so it changes no cosine similarity "
                   "and no map; it matters for the exported vectors.")
    return notes


def preset_buttons(num_layers: int) -> None:
    """Equal / top / layer 0 / reset: short labels, two to a row in the rail (the full name on hover)."""
    presets = (("Equal weights", "Equal", "equal", None), ("Top layer only", "Top only", "top", None),
               ("Layer 0 only", "Layer 0", "bottom", None),
               ("Reset", "Reset", None, "Equal weights, γ = 1, no layer norm, automatic projection."))
    cols = st.columns(2)
    for i, (label, short, preset, help_text) in enumerate(presets):
        click, args = (set_weights, (preset, num_layers)) if preset else (reset_controls, (num_layers,))
        cols[i % 2].button(short, on_click=click, args=args, key=state.key(f"preset_{preset}" if preset else "reset"),
                           width="stretch", help=help_text or label)


def map_controls() -> None:
    """Layer norm, the projection and the grey context words, in the rail under the weights (presentation
    mode leaves them out: fewer controls)."""
    st.checkbox("layer norm", key=state.LAYER_NORM,
                help="Normalise each layer of each sentence with one mean and variance over all its values "
                     "(AllenNLP's do_layer_norm) before mixing.")
    st.selectbox("2-D projection", projections.PROJECTIONS, key=state.PROJECTION, format_func=projections.PROJECTION_NAMES.get,
                 help=f"auto: PCA below {projections.MIN_POINTS_FOR_UMAP} points (too few for UMAP to mean anything), "
                      "else UMAP.")
    st.checkbox("other words in grey", key=state.CONTEXT,
                help="Also place the sentences' other words on the map (projected together with the occurrences).")


def fit_s(table: activations.TokenTable, occurrences: list[inputs.Occurrence]) -> None:
    """Button callback: the s that best separates the labelled senses (``app.fit_mix``) into the sliders."""
    layers = table.layers(bool(ss.get(state.LAYER_NORM)))[:, table.rows(occurrences)]
    labels = [o.label for o in occurrences]
    try:
        fit = fit_mix.fit_mix(layers, labels)
    except ValueError as err:
        ss[state.WEIGHTS_MESSAGE] = ("warning", str(err))
        return
    w = state.set_layer_weights(ss, fit_mix.weights_for_s(fit.s, state.W_RANGE, state.W_STEP))
    s_set = mixing.softmax(w)
    ss[state.WEIGHTS_MESSAGE] = ("success", fit_mix.fit_message(fit, s_set, fit_mix.accuracy(layers, labels, s_set)))


def layer_note(table: activations.TokenTable, occurrences: list[inputs.Occurrence], layer_norm: bool) -> str:
    """``fit_mix.weight_note`` for these occurrences, kept while the table, occurrences and layer norm stay."""
    rows = table.rows(occurrences)
    key = (tuple(rows.tolist()), layer_norm)
    memo = ss.get(state.private("layer_note"))
    if memo is not None and memo[0] is table and memo[1] == key:
        return memo[2]
    note = fit_mix.weight_note(fit_mix.layer_effect(table.layers(layer_norm)[:, rows]), layer_norm)
    ss[state.private("layer_note")] = (table, key, note)
    return note


def fit_s_row(table: activations.TokenTable, occurrences: list[inputs.Occurrence]) -> None:
    """Under the presets: "Fit s to my labels" (when the occurrences carry two senses or more), what it or the
    Layer probes page set, and why moving a weight may change the map little here."""
    labels = [o.label for o in occurrences]
    if fit_mix.can_fit(labels):
        st.button("Fit s to my labels", key=state.key("fit_s"), on_click=fit_s, args=(table, occurrences),
                  width="stretch",
                  help="Tries every s on a 0.1 grid and keeps the one whose mix gives the best leave-one-out "
                       "nearest-neighbour accuracy on your sense labels (each occurrence takes the label of its "
                       "nearest other occurrence), as the ELMo paper learns s for each task. γ changes no cosine.")
    message = ss.pop(state.WEIGHTS_MESSAGE, None)
    if message:
        getattr(st, message[0])(md(message[1]))
    note = layer_note(table, occurrences, bool(ss.get(state.LAYER_NORM)))
    if note:
        st.caption(md(note))


@st.fragment
def live_view(model: resources.LoadedModel, table: activations.TokenTable, word: str, occurrences: list[inputs.Occurrence]) -> None:
    num_layers = table.num_layers
    # Every control that changes the mix or the map stands in this fragment, so that moving one reruns only
    # the mix, the projection and the open view, not the page (sentences, word, model panel). They stand in a
    # rail beside the map, so that one 1,024 x 768 screen shows every slider and the whole map: the points
    # move where the eye already is, with no scrolling between slider and map.
    with st.container(key=state.key("live")):  # the rail's width and the map row's reflow: streamlit_app.py
        rail, main = st.columns([1, 3.2], gap="medium")
    with rail:
        weight_notes = weights_section(num_layers)
        formula = st.container()
        preset_buttons(num_layers)
        fit_s_row(table, occurrences)
        if not presenting():
            map_controls()
        share = st.container()  # the copy-link row, filled once the view is known
    with main:
        frame_and_tabs(model, table, word, occurrences, weight_notes, formula, share)
    sync_url(num_layers, model)
    state.remember(ss)


def frame_and_tabs(model: resources.LoadedModel, table: activations.TokenTable, word: str, occurrences: list[inputs.Occurrence],
                   weight_notes: list, formula, share) -> None:
    """Computes the frame for the current controls, writes s and the formula beside the sliders, then draws the
    share row (into ``share`` when given: the rail) and the open tab."""
    num_layers = table.num_layers
    n = len(occurrences)
    query, note = state.query_of(ss, n)
    if note:
        st.info(md(note))
    controls = state.controls_of(ss, num_layers, query, n)
    ref, ref_total, ref_note = reference_table(model, word, controls.inflections)
    with st.spinner(resources.projecting_text(n, controls.projection)):
        frame = compute_frame(table, occurrences, controls, ss.get(FRAME), model_key=model.key, word=word,
                              reference=Reference(ref, ref_total, ref_note),
                              umap_state=resources.umap_warm_up().state, types=resources.type_vectors(model))
    ss[FRAME] = frame
    ss[state.QUERY] = frame.query  # before the selectbox is drawn, so a click moves it
    for j, s_j in enumerate(frame.s):
        weight_notes[j].markdown(f"s_{j} = **{s_j:.3f}**")
    formula.markdown(mix_formula(frame.s, controls.gamma))
    if zero_note(frame):
        st.warning(zero_note(frame))
    with share:
        share_row(model, num_layers)
    labels = list(state.TABS.values())
    with st.container(key=state.key("views")):  # a narrow page stacks the views' columns: streamlit_app.py
        tabs = st.tabs(labels, key=state.TAB, on_change="rerun")
    views = (lambda: map_and_neighbours(frame, occurrences, table, model.display_name),
             lambda: neighbours_tab(frame, occurrences, table),
             lambda: similarity_tab(frame, occurrences),
             lambda: senses_tab(frame, occurrences, table),
             lambda: compare_tab(model, table, frame, occurrences),
             lambda: export_tab(table, occurrences, frame, model))
    for tab, view in zip(tabs, views):
        with tab:
            if tab.open:
                view()


def share_row(model: resources.LoadedModel, num_layers: int) -> None:
    """The "Copy link" button and, under it, what a link cannot carry."""
    view = current_view(num_layers, model)
    link = link_of(view)
    notes = state.link_notes(view, model.key, model.display_name, ss)
    copy_button(link)
    st.caption(" ".join(notes) or "The link holds this view: sentences, word, every control, the tab and the "
               "model's name; it draws the same map in any browser.")


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


def map_and_neighbours(frame: Frame, occurrences, table, model_name: str) -> None:
    """The map tab: the map, and the neighbours of its query point beside it (under it where the page is
    narrow: the reflow is CSS in streamlit_app.py), so that a click on a point shows its neighbours where the
    eye already is."""
    with st.container(key=state.key("map_row")):
        left, right = st.columns([1.75, 1], gap="medium")
    with left:
        map_view(frame, occurrences, table, model_name)
    with right:
        map_neighbours(frame, occurrences, table)


def map_neighbours(frame: Frame, occurrences, table) -> None:
    """The query occurrence and its nearest occurrences in the mix (k and "same word only" as the Neighbours tab
    sets them, which also has the reference corpus and layer 0)."""
    st.markdown(f"**Nearest to #{frame.query + 1}** in the mix", help="Click a point on the map to make it the "
                "query. The Neighbours tab sets k and “same word only”, and adds the reference corpus and layer 0.")
    st.html(kwic_list(*occurrence_lines(occurrences, table.lines, [frame.query])))
    empty = no_neighbours_note(frame)
    if empty:
        st.info(empty)
    else:
        st.html(kwic_list(*neighbour_lines(frame)))


def map_view(frame: Frame, occurrences, table, model_name: str) -> None:
    if frame.same_vector:
        st.info(same_vector_note(frame))
    map_tab(frame, occurrences, table, model_name)


def colour_choices(frame: Frame, occurrences) -> list[str]:
    """The map's "colour by" choices here; a remembered choice that does not apply becomes the first."""
    return state.color_by_choices(ss, any(o.label for o in occurrences), len(inputs.spellings(occurrences)) > 1,
                                  frame.cluster_labels is not None, label_set=[o.label for o in occurrences])


def map_figure(frame: Frame, occurrences, table, model_name: str, projector: bool = False):
    """The contexts map of the current frame, titled with its settings: what the map tab draws and what the Export
    tab saves (built again there, since only the open tab is drawn and a saved copy could be an older mix's).
    A Vega-Lite chart (``app.map_chart``); ``projector``: presentation mode's larger type and shorter map (the rail's
    sliders and the whole map on one 1,024 x 768 screen)."""
    colour_choices(frame, occurrences)
    settings = exports.Settings.of_frame(frame, model_name)
    title = exports.map_title_text(settings, method_name(frame.projection.method))
    if projector:
        return map_chart.frame_chart(frame, occurrences, table, ss[state.COLOR_BY], title=title,
                                     height=figures.PROJECTOR_MAP_HEIGHT, font=figures.PROJECTOR_FONT)
    return map_chart.frame_chart(frame, occurrences, table, ss[state.COLOR_BY], title=title)


def map_file(frame: Frame, occurrences, table, model_name: str, kind: str) -> bytes:
    """The Export tab's map file: "html" (a page that works offline) or "png" (drawn on the server)."""
    fig = map_figure(frame, occurrences, table, model_name)
    return map_chart.chart_html(fig) if kind == "html" else map_chart.chart_png(fig)


def map_tab(frame: Frame, occurrences, table, model_name: str) -> None:
    n = len(occurrences)
    proj = frame.projection
    if proj.coords is None:
        st.warning(f"“{md(frame.word)}” occurs {plural(n, 'time')}: a 2-D map needs at least "
                   f"{projections.MIN_POINTS_FOR_MAP} points, so there is no map. The occurrences above, the neighbours and "
                   "the export still work.")
        return
    choices = colour_choices(frame, occurrences)
    left, right = st.columns([1, 1], vertical_alignment="center")
    if len(choices) > 1:
        left.radio("colour by", choices, key=state.COLOR_BY, persist_state=KEEP, horizontal=True,
                   help="cluster: the groups found in the current mix without using labels (Senses tab).")
    right.radio("show", list(state.MAP_VIEWS.values()), key=state.MAP_VIEW, persist_state=KEEP, horizontal=True,
                help="Layer 0, 1, 2 and the current mix next to each other, each projected alone with the same "
                     "method and turned onto the mix's map, so you can see where context comes in.")
    color_by = ss[state.COLOR_BY]
    settings = exports.Settings.of_frame(frame, model_name)
    fig = map_figure(frame, occurrences, table, model_name, projector=presenting())
    st.html(map_chart.TOOLTIP_CSS)  # the hover text at 15 px (Streamlit's is 12)
    # a click on an occurrence selects it (map_chart.PICK): the next run makes it the neighbours query
    st.altair_chart(fig, key=state.MAP_CHART, on_select="rerun", selection_mode=[map_chart.PICK], width="stretch",
                    alt=f"Contexts map of “{frame.word}”: {plural(n, 'occurrence')}")
    st.caption(map_caption(frame) + " Drag to pan, shift + scroll to zoom, double-click to reset.")
    if ss.get(state.MAP_VIEW) == state.MAP_VIEWS["layers"]:
        layers_side_by_side(frame, occurrences, table, color_by, settings)


def layers_side_by_side(frame: Frame, occurrences, table, color_by: str, settings) -> None:
    with st.spinner("Projecting each layer…"):
        maps = layer_maps(table, frame, ss.get(state.private("layer_maps")), resources.umap_warm_up().state)
    if maps is None:
        return
    ss[state.private("layer_maps")] = maps
    method = method_name(maps.method)
    clusters = frame.cluster_labels
    fig = figures.small_multiples(maps, occurrences, table.lines, color_by, clusters,
                                  title=exports.map_title(settings, method) + " · layers side by side")
    st.plotly_chart(chart(fig), key=state.key("layer_maps_chart"), width="stretch",
                    config=exports.png_config(exports.file_stem(frame.word, settings.model, "layers")))
    st.caption(f"Each panel is a {method} of one layer's vectors of the {len(occurrences)} occurrences, rotated, "
               "reflected and scaled onto the mix's map (Procrustes), so the same place means the same in every "
               "panel. Layer 0 sees only the word's spelling; layers 1 and 2 see the sentence.")


def neighbours_tab(frame: Frame, occurrences, table) -> None:
    n = len(occurrences)
    lines = table.lines
    c1, c2, c3 = st.columns([3, 1, 1.6], vertical_alignment="bottom")
    c1.selectbox("Query occurrence (or click a point on the map)", list(range(n)), key=state.QUERY, persist_state=KEEP,
                 format_func=lambda i: query_option(occurrences, lines, i))
    c2.number_input("k", min_value=state.K_RANGE[0], max_value=state.K_RANGE[1], key=state.K, persist_state=KEEP)
    c3.checkbox("same word only", key=state.SAME_WORD, persist_state=KEEP,
                help="Search only the other occurrences of the target word, as the ELMo paper's Table 4 does.")
    query_rows, query_columns = occurrence_lines(occurrences, lines, [frame.query], chars=80)
    st.html(kwic_table(query_rows, [("query", "n", query_columns[0][2])]))
    st.markdown("**ELMo mix: your sentences**")
    empty = no_neighbours_note(frame)
    if empty:
        st.info(empty)
    else:
        st.html(kwic_table(*neighbour_lines(frame)))
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
    order = "sorted by label; " if any(o.label for o in occurrences) else ""
    st.markdown(f"**Cosine similarity between the occurrences** ({order}one colour scale for all panels)")
    st.plotly_chart(chart(figures.frame_heatmaps(frame, occurrences)), key=state.key("heatmaps"), width="stretch")
    scores = frame.separation
    st.markdown("**Sense separation per layer**")
    bars = figures.frame_separation(frame)
    if bars is None:
        st.info(scores[0].note or "No score for this input.")
        return
    st.plotly_chart(chart(bars), key=state.key("separation"), width="stretch")
    st.caption(separation_caption(frame, occurrences))


def colour_by_cluster() -> None:
    ss[state.COLOR_BY] = "cluster"


def senses_tab(frame: Frame, occurrences, table) -> None:
    n = len(occurrences)
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    c1.selectbox("number of clusters", [0] + list(range(2, state.MAX_CLUSTERS + 1)), key=state.N_CLUSTERS, persist_state=KEEP,
                 format_func=lambda k: "auto (best silhouette)" if k == 0 else str(k),
                 help=f"Auto tries 2 to {state.MAX_CLUSTERS} clusters, each of at least "
                      f"{min_cluster_size(n)} occurrences, and keeps the split with the highest silhouette; below "
                      f"{CLEAR_SILHOUETTE:.2f} it says there are no clear clusters.")
    found = frame.clusters
    if found is None:
        st.info(f"The {plural(n, 'occurrence')} cannot be split into clusters here: "
                + ("they all have the same vector in this mix." if frame.same_vector else
                   "clustering needs at least 3 occurrences with a non-zero vector."))
        return
    if found.clear:
        c2.button("Colour the map by cluster", key=state.key("colour_by_cluster"), on_click=colour_by_cluster)
    headline, per_k = cluster_summary(found)
    st.markdown(headline)
    if per_k:
        st.caption(per_k)
    if not found.clear:
        return
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
    # every cluster's heading and sentences in one element: one message to the browser, not two per cluster
    st.html("".join(
        f"<div style='margin-top:6px'><span style='display:inline-block;width:12px;height:12px;"
        f"border-radius:6px;background:{figures.cluster_colour(group.cluster)};margin-right:6px'></span>"
        f"<b>{html.escape(group.name)}</b> · {plural(len(group.members), 'occurrence')}</div>"
        + kwic_table(*occurrence_lines(occurrences, lines, group.members)) for group in cluster_groups(found)))
    st.caption("Average-linkage clustering of the occurrences' vectors in the current mix, by cosine distance "
               "(scikit-learn); move the sliders and the clusters follow the mix.")


def compare_tab(model: resources.LoadedModel, table: activations.TokenTable, frame: Frame, occurrences) -> None:
    choices = resources.comparison_choices()
    specs = {spec: label for label, spec in choices.items()}
    state.drop_unknown_models(ss, list(specs))
    st.caption("The same sentences, word and layer weights with two models: the maps side by side (the right "
               "one turned onto the left one, since a projection's rotation means nothing) and the separation "
               "scores per layer.")
    if len(specs) < 2:
        st.info("Only one model is available here. Load your own under “Load your own ELMo” in the sidebar to "
                "compare it with this one.")
        return
    state.default_comparison(ss, list(specs), resources.comparison_spec(model))
    c1, c2 = st.columns(2)
    c1.selectbox("left model", list(specs), key=state.COMPARE_A, persist_state=KEEP, index=None, placeholder="pick a model",
                 format_func=specs.get)
    c2.selectbox("right model", list(specs), key=state.COMPARE_B, persist_state=KEEP, index=None, placeholder="pick a model",
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
        models.append((compare.side_name(label), loaded.key, other))
    with st.spinner("Projecting both models…"):
        sides = compare.compare(models, occurrences, frame.controls, frame.word, ss.get(state.private("compare_sides"), ()),
                                resources.umap_warm_up().state)
    ss[state.private("compare_sides")] = sides
    color_by = ss.get(state.COLOR_BY, "label")
    figs = map_chart.comparison_charts(sides, occurrences, table, color_by,
                                       font=figures.PROJECTOR_FONT if presenting() else map_chart.FONT)
    st.html(map_chart.TOOLTIP_CSS)
    cols = st.columns(len(sides))
    for j, (col, side, fig) in enumerate(zip(cols, sides, figs)):
        with col:
            if fig is None:
                st.info("No map: fewer than 3 occurrences.")
            else:
                with st.container(key=state.key(f"compare_map_{j}")):  # its class names the map for the tests
                    st.altair_chart(fig, width="stretch")
            bars = figures.side_separation(side.frame)
            if bars is not None:
                st.plotly_chart(chart(bars), key=state.key(f"compare_sep_{j}"), width="stretch")
    st.markdown("**Separation scores per layer**")
    st.dataframe(compare.score_rows(sides), hide_index=True, width="stretch")
    st.caption("1-NN: leave-one-out nearest-neighbour accuracy with your labels; silhouette: cosine, −1…1. "
               + md(compare.score_note(sides)))


def embed_for(loaded: resources.LoadedModel, lines) -> activations.TokenTable | None:
    """Another model's activations of the same sentences (the shared cache; progress for long sets)."""
    key = (loaded.key, tuple(ln.tokens for ln in lines))
    kept = state.comparison_table(ss, key)
    if kept is not None:
        return kept
    bar = st.empty()
    try:
        with st.spinner(f"Running {md(loaded.display_name)} on the sentences…"):
            acts, _ = resources.embed(loaded, [ln.tokens for ln in lines],
                                      lambda f, text: bar.progress(f, text=text), activations.PROGRESS_FROM)
    except Exception as err:
        st.error(f"{md(loaded.display_name)} failed on these sentences: {md(err)}")
        return None
    bar.empty()
    table = activations.TokenTable(lines, acts)
    state.keep_comparison_table(ss, key, table)
    return table


def export_tab(table, occurrences, frame: Frame, model) -> None:
    model_name = model.display_name
    lines = table.lines
    x, word = frame.vectors, frame.word
    settings = exports.Settings.of_frame(frame, model_name)
    clusters = frame.cluster_labels

    def stem(what: str) -> str:
        return exports.file_stem(word, model_name, what)

    layers_occ = occurrence_layers(table, frame)
    c1, c2, c3 = st.columns(3)
    c1.download_button("Mix vectors (CSV)", lambda: exports.vectors_csv(lines, occurrences, x, settings),
                       file_name=stem("mix") + ".csv", mime="text/csv", key=state.key("dl_csv"), on_click="ignore")
    c1.download_button("Mix vectors (.npz)",
                       lambda: exports.npz_bytes({"vectors": x}, settings, lines, occurrences),
                       file_name=stem("mix") + ".npz", mime="application/octet-stream", key=state.key("dl_npy"), on_click="ignore",
                       help="The current mix: n × D float32.")
    c1.download_button("All layers (.npz)",
                       lambda: exports.npz_bytes({"layers": layers_occ}, settings, lines, occurrences),
                       file_name=stem("layers") + ".npz", mime="application/octet-stream", key=state.key("dl_layers"),
                       on_click="ignore", help="Every layer as mixed: (L+1) × n × D float32.")
    if exports.projector_refusal(x):
        c2.warning(exports.projector_refusal(x))
    else:
        c2.download_button("Projector files (.zip)",
                           lambda: exports.projector_zip(lines, occurrences, x, settings, clusters),
                           file_name=stem("projector") + ".zip", mime="application/zip", key=state.key("dl_projector"),
                           on_click="ignore", help="vectors.tsv + metadata.tsv for the TensorFlow Embedding Projector.")
        c2.caption("For the TensorFlow Embedding Projector: unzip, open projector.tensorflow.org, “Load”, then choose "
                   "vectors.tsv and metadata.tsv.")
    if frame.occurrence_coords is not None:
        c3.download_button("2-D coordinates (CSV)",
                           lambda: exports.coords_csv(lines, occurrences, frame.occurrence_coords, settings, clusters),
                           file_name=stem("map") + ".csv", mime="text/csv", key=state.key("dl_coords"), on_click="ignore")
        if frame.projection.coords is not None:
            c3.download_button("Map (HTML, offline)", lambda: map_file(frame, occurrences, table, model_name, "html"),
                               file_name=stem("map") + ".html", mime="text/html", key=state.key("dl_html"), on_click="ignore",
                               help="The map as a page that works without a network.")
            c3.download_button("Map (PNG)", lambda: map_file(frame, occurrences, table, model_name, "png"),
                               file_name=stem("map") + ".png", mime="image/png", key=state.key("dl_png"),
                               on_click="ignore", help="The map with its title and legend, drawn on the server.")
    else:
        c3.caption(f"No map files: a 2-D map needs at least {projections.MIN_POINTS_FOR_MAP} points (Map tab).")
    st.caption("Numbers count from 1 as on this page (occurrence #1, sentence 1, token 1). Every file records the "
               "model, w, s, γ, layer norm and the sentences (CSV: in each row; .npz and the zip: "
               "`settings` / settings.json).")


# ---- page -------------------------------------------------------------------------------------------------
def main() -> None:
    try:
        model, _ = resources.current_model()
    except Exception as err:
        st.error(f"No model could be loaded: {md(err)}")
        return
    num_layers = model.embedder.num_layers
    state.init_widgets(ss, num_layers)
    if presenting():
        st.title("ELMo Explorer")
    else:  # the title, a two-line lead and the full introduction behind a button: one row above the sentences
        title, lead, more = st.columns([1.4, 3.2, 0.85], vertical_alignment="center")
        title.title("ELMo Explorer")
        lead.markdown(LEAD)
        with more.popover("How it works", width="stretch"):
            st.markdown(INTRO)
    for note in ss.pop(state.LINK_NOTES, None) or []:
        st.warning(md(note))

    parsed = input_section()
    lines, note = inputs.fit_budget(parsed.lines, inputs.tokens_in_budget(resources.session_budget_bytes(), num_layers,
                                                                  model.embedder.dim))
    if note:
        st.warning(note)
    parsed = inputs.ParsedInput(lines, parsed.notes)
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
    occurrences_section(parsed.lines, word, occurrences)


main()

"""Explorer page: sentences in, the target word's contextual vectors out (map, neighbours, layers, export).

Widgets and wiring only; the logic is in ``app/explore.py``, figures in ``app/figures.py``, caches in
``app/resources.py``. Session-state keys of this page: sentences, word, inflections, w_0..w_L, gamma,
layer_norm, projection, context, color_by, query_occ, nn_k, nn_same_word, map_chart; private ones start
with "_".
"""
from __future__ import annotations

import dataclasses
import html
import time

import numpy as np
import streamlit as st

from app import explore as ex
from app import figures, resources, state
from app.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS, find_example
from app.frame import METHOD_NAMES, Controls, Frame, Reference, compute_frame, layer_name, marked
from app.safe import md

ss = st.session_state
FRAME = "explorer_frame"  # the last Frame: warm start of the next one, and what the tests read
EXAMPLE_TEXTS = {name: e.text for name, e in EXAMPLE_SETS.items()}

INTRO = """
ELMo gives every word a vector that depends on the sentence around it. Type sentences that use one word in
different senses, one per line, optionally with a sense label in front (`[river] We sat on the bank.`), or load an
example set; pick the word; then see where its occurrences land. **Layer 0** is the context-free character-CNN
vector: every occurrence of one spelling gets the same vector there. **Layers 1 and 2** are the biLSTM layers,
which see the whole sentence. The ELMo vector mixes them: ELMo = γ · Σ_j s_j · h_j with s_j = softmax(w)_j.
Move the weights and watch the senses separate (or not).
"""


# ---- state ----------------------------------------------------------------------------------------------
def init_state(num_layers: int) -> None:
    """Fill missing widget state from the last view (or, on a new session, from the URL / default example)."""
    if "_view" not in ss:
        params = {k: st.query_params[k] for k in st.query_params}
        view = ex.view_from_query(params, EXAMPLE_TEXTS)
        asked = str(params.get("ex") or "")
        if asked and asked not in EXAMPLE_TEXTS:
            ss["_link_warning"] = (f"The link asks for an unknown example set '{md(asked[:40])}'; the known ones "
                                   f"are {', '.join(EXAMPLE_TEXTS)}. Load one with the buttons below.")
        if not params:
            start = EXAMPLE_SETS[DEFAULT_EXAMPLE]
            view = ex.View(text=start.text, example=start.name, word=start.word)
        ss["_view"] = view
    state.restore(ss)  # k, same word only, the query and colour-by, if another page made Streamlit drop them
    view: ex.View = ss["_view"]
    defaults = {"sentences": view.text, "word": view.word or None, "inflections": view.inflections,
                "gamma": view.gamma, "layer_norm": view.layer_norm, "projection": view.projection,
                "context": view.context, "color_by": "label"}
    for j, w in enumerate(ex.fit_weights(view.weights, num_layers)):
        defaults[f"w_{j}"] = w
    for key, value in defaults.items():
        if key not in ss:
            ss[key] = value
        else:
            # Values set while this page was not shown (e.g. the Layers page's "use these weights") are kept by
            # Streamlit under the widget id, and a widget that (re)mounts with such a value is sent without
            # "set_value": the browser would show the widget's default (w = -5) and send that back. Writing
            # the value again on every run makes it a fresh session-state value, which the browser adopts.
            ss[key] = ss[key]


def current_view(num_layers: int) -> ex.View:
    text = ss.get("sentences", "")
    example = find_example(text)
    return ex.View(text=text, example=example.name if example else None, word=ss.get("word") or "",
                   weights=tuple(float(ss.get(f"w_{j}", 0.0)) for j in range(num_layers)),
                   gamma=float(ss.get("gamma", 1.0)), layer_norm=bool(ss.get("layer_norm")),
                   projection=ss.get("projection", "auto"), inflections=bool(ss.get("inflections")),
                   context=bool(ss.get("context")))


def sync_url(num_layers: int) -> None:
    """Keep the view in the URL (a shared link reopens it) and remember it for when widgets are not shown."""
    view = current_view(num_layers)
    ss["_view"] = view
    params = ex.view_to_query(view)
    if params != {k: st.query_params[k] for k in st.query_params}:
        st.query_params.from_dict(params)


# ---- callbacks (run before the script, so they may set widget state) --------------------------------------
def load_example(name: str) -> None:
    ss["sentences"] = EXAMPLE_SETS[name].text
    ss["word"] = EXAMPLE_SETS[name].word
    ss["_upload_message"] = None


def on_upload() -> None:
    file = ss.get("upload_txt")
    if file is None:
        ss["_upload_message"] = None
        return
    try:
        resources.check_upload_size("sentences", file.size, file.name)
        text, note = ex.text_for_box(ex.decode_upload(file.getvalue(), file.name), file.name)
        ss["sentences"] = text
        ss["word"] = None
        ss["_upload_message"] = None
        ss["_upload_note"] = note
    except ValueError as err:  # the text box keeps what it had
        ss["_upload_message"] = str(err)


def set_weights(preset: str, num_layers: int) -> None:
    state.set_preset(ss, preset, num_layers)


def reset_controls(num_layers: int) -> None:
    set_weights("equal", num_layers)
    ss["gamma"], ss["layer_norm"], ss["projection"] = 1.0, False, "auto"
    forget_layout()


def forget_layout() -> None:
    """The next projection starts from scratch instead of the previous frame's layout."""
    frame = ss.get(FRAME)
    if frame is not None:
        ss[FRAME] = dataclasses.replace(frame, layout=None)


# ---- sections -------------------------------------------------------------------------------------------
def input_section() -> ex.ParsedInput:
    st.subheader("1 · Sentences")
    st.caption("Example sets (one click loads the sentences and picks the word):")
    cols = st.columns(len(EXAMPLE_SETS))
    for col, (name, example) in zip(cols, EXAMPLE_SETS.items()):
        col.button(name, key=f"example_{name}", help=example.title, on_click=load_example, args=(name,),
                   width="stretch")
    left, right = st.columns([3, 1])
    with right:
        st.file_uploader("…or upload a .txt file (one sentence per line)", type=["txt"], key="upload_txt",
                         on_change=on_upload, max_upload_size=resources.UPLOAD_LIMITS_MB["sentences"])
        if ss.get("_upload_message"):
            st.error(md(ss["_upload_message"]))
        if ss.get("_upload_note"):
            st.info(md(ss.pop("_upload_note")))
    with left:
        st.text_area("One sentence per line. Optional sense label in front: `[river] We sat on the bank.`",
                     key="sentences", height=230, max_chars=ex.MAX_TEXT_CHARS,
                     placeholder="[river] We sat on the bank of the river.\n[money] I went to the bank to pay in a cheque.")
    parsed = resources.parse_sentences(ss.get("sentences") or "")
    for note in parsed.notes:
        st.warning(md(note))
    if parsed.lines:
        with st.expander(f"Tokenization the model sees ({len(parsed.lines)} sentences, Moses tokenizer)"):
            st.dataframe({"#": list(range(1, len(parsed.lines) + 1)),
                          "label": [ln.label or "" for ln in parsed.lines],
                          "tokens": [" · ".join(ln.tokens) for ln in parsed.lines]},
                         hide_index=True, width="stretch")
    return parsed


def word_section(lines: list[ex.Line]) -> tuple[str, list[ex.Occurrence]] | None:
    st.subheader("2 · Target word")
    counts = dict(ex.word_counts(lines))
    if not counts:
        st.warning("Your sentences contain no words (only punctuation or symbols): there is nothing to look at.")
        return None
    asked = ss.get("word")
    if isinstance(asked, str) and asked.strip().casefold() in counts:
        ss["word"] = asked.strip().casefold()
    elif asked:
        suggestion = ex.suggest_word(lines)
        st.warning(f"“{md(asked)}” does not occur in your sentences (case-insensitive match). Showing "
                   f"“{md(suggestion)}” instead; pick another word from the list.")
        ss["word"] = suggestion
    else:
        ss["word"] = ex.suggest_word(lines)
    left, right = st.columns([2, 1], vertical_alignment="bottom")
    left.selectbox("Target word: one of the words that occur, most frequent first (type to filter)",
                   list(counts), key="word", format_func=lambda w: f"{w}  ({counts.get(w, 0)}×)")
    right.checkbox("include simple inflections (-s, -es, -ed, -ing)", key="inflections",
                   help="Crude suffix rules, not a lemmatizer: irregular forms (ran, mice) are not matched.")
    word = ss["word"]
    occurrences = ex.find_occurrences(lines, word, ss.get("inflections", False))
    if not occurrences:
        st.warning(f"“{md(word)}” does not occur in your sentences (case-insensitive match"
                   f"{', with inflections' if ss.get('inflections') else ''}). Pick one of the words in the list.")
        return None
    rows = []
    for i, occ in enumerate(occurrences):
        before, target, after = ex.highlight_parts(lines[occ.line].tokens, occ.position, window=20)
        label = f'<span class="lab">{html.escape(occ.label)}</span> ' if occ.label else ""
        rows.append(f"<li><span class='num'>#{i + 1}</span> {label}{html.escape(before)} "
                    f"<mark>{html.escape(target)}</mark> {html.escape(after)}</li>")
    forms = sorted({o.token for o in occurrences})
    st.markdown(f"**{len(occurrences)} occurrence(s)** of “{md(word)}” in {len({o.line for o in occurrences})} "
                f"sentence(s); forms matched: {', '.join(md(f) for f in forms[:12])}")
    st.html("<style>.occ{max-height:230px;overflow-y:auto;border:1px solid #e6e6e6;border-radius:6px;"
            "padding:6px 10px;margin:0;list-style:none;font-size:0.92rem;line-height:1.6}"
            ".occ mark{background:#ffd54f;padding:0 2px;border-radius:3px;font-weight:600}"
            ".occ .num{color:#888;font-size:0.8rem;margin-right:4px}"
            ".occ .lab{background:#e8eefc;color:#1f4bb4;border-radius:4px;padding:0 5px;font-size:0.8rem}</style>"
            f"<ul class='occ'>{''.join(rows)}</ul>")
    return word, occurrences


def embed_lines(model: resources.LoadedModel, lines: list[ex.Line]) -> ex.TokenTable | None:
    """Stacked activations of all sentences; the biLM only runs for sentences it has not seen."""
    key = (model.key, tuple(ln.tokens for ln in lines))
    memo = ss.get("_table")
    if memo is not None and memo[0] == key:
        return memo[1]
    bar = st.empty()

    def progress(done: int, total: int) -> None:
        if total > 32:
            bar.progress(done / total, text=f"Running the biLM: {done}/{total} new sentences")

    start = time.perf_counter()
    try:
        with st.spinner("Running the biLM…"):
            acts, computed = resources.embed(model, [ln.tokens for ln in lines], progress)
    except Exception as err:
        st.error(f"The biLM failed on this input: {md(err)}")
        return None
    seconds = time.perf_counter() - start
    bar.empty()
    table = ex.TokenTable(lines, acts)
    ss["_table"] = (key, table)
    ss["_timings"] = (f"Last biLM run: {seconds * 1000:.0f} ms for {computed} new of {len(lines)} sentences "
                      f"({table.num_tokens} tokens; the rest came from the cache).")
    return table


def reference_table(model: resources.LoadedModel, word: str, inflections: bool) -> tuple[ex.TokenTable | None, int, str]:
    """Reference-corpus sentences with the word, embedded on demand (progress bar) and cached."""
    if not resources.reference_available():
        return None, 0, (f"No reference corpus at {md(resources.reference_path())}: reference neighbours are skipped "
                         "(set ELMO_EXPLORER_REFERENCE to a file with one sentence per line).")
    tokens, total = resources.reference_for_word(word, inflections)
    if not tokens:
        return None, 0, f"“{md(word)}” does not occur in the reference corpus ({resources.reference_size():,} sentences)."
    key = (model.key, word.casefold(), inflections, len(tokens))
    memo = ss.get("_ref_table")
    if memo is not None and memo[0] == key:
        return memo[1], total, ""
    bar = st.progress(0.0, text=f"Embedding {len(tokens)} reference sentences…")
    try:
        acts, _ = resources.embed(model, tokens, lambda d, t: bar.progress(d / t, text=f"Embedding reference "
                                                                           f"sentences: {d}/{t}"))
    except Exception as err:
        bar.empty()
        return None, 0, f"The biLM failed on the reference sentences: {md(err)}"
    bar.empty()
    table = ex.TokenTable.of_tokenized(tokens, acts)
    ss["_ref_table"] = (key, table)
    return table, total, ""


# ---- the live part: sliders, map, neighbours, layers, export ------------------------------------------------
@st.fragment
def live_view(model: resources.LoadedModel, table: ex.TokenTable, word: str, occurrences: list[ex.Occurrence]) -> None:
    num_layers = table.num_layers
    st.subheader("3 · Layer weights")
    cols = st.columns(num_layers + 1)
    for j in range(num_layers):
        cols[j].slider(f"w_{j}: {layer_name(j, num_layers)}", *state.W_RANGE, step=state.W_STEP,
                       key=state.weight_key(j))
    cols[-1].slider("γ (gamma): overall scale", *ex.GAMMA_RANGE, step=0.1, key="gamma",
                    help="γ multiplies every vector equally, so it changes no cosine similarity and no map; "
                         "it matters for the exported vectors.")
    w = [float(ss[f"w_{j}"]) for j in range(num_layers)]
    gamma = float(ss["gamma"])
    weight_notes = [c.container() for c in cols]  # filled from the frame below

    b = st.columns(4)
    b[0].button("Equal weights", on_click=set_weights, args=("equal", num_layers), key="preset_equal", width="stretch")
    b[1].button("Top layer only", on_click=set_weights, args=("top", num_layers), key="preset_top", width="stretch")
    b[2].button("Layer 0 only", on_click=set_weights, args=("bottom", num_layers), key="preset_bottom", width="stretch")
    b[3].button("Reset", on_click=reset_controls, args=(num_layers,), key="reset", width="stretch",
                help="Equal weights, γ = 1, no layer norm, automatic projection.")
    o = st.columns([1.2, 2, 1.4], vertical_alignment="center")
    o[0].checkbox("layer norm before mixing", key="layer_norm",
                  help="Normalise each layer of each sentence with one mean and variance over all its values "
                       "(AllenNLP's do_layer_norm) before mixing.")
    o[1].selectbox("2-D projection", ex.PROJECTIONS, key="projection", format_func=ex.PROJECTION_NAMES.get)
    o[2].checkbox("show the other words in grey", key="context",
                  help="Also place the sentences' other words on the map (projected together with the occurrences).")

    clicked = None
    try:
        for point in (ss.get("map_chart") or {}).get("selection", {}).get("points", []):
            idx = int((point.get("customdata") or [-1])[0])
            if 0 <= idx < len(occurrences):
                clicked = idx
                break
    except (TypeError, ValueError, AttributeError):
        clicked = None
    controls = Controls(tuple(w), gamma, bool(ss["layer_norm"]), ss["projection"], bool(ss["context"]),
                        int(ss.get("query_occ") or 0), clicked, int(ss.get("nn_k", 10)),
                        bool(ss.get("nn_same_word")), bool(ss.get("inflections")))
    ref, ref_total, ref_note = reference_table(model, word, controls.inflections)
    method_name = METHOD_NAMES.get(controls.projection, "the automatic projection")
    with st.spinner(f"Projecting {len(occurrences)} points with {method_name}…"):
        frame = compute_frame(table, occurrences, controls, ss.get(FRAME), model_key=model.key, word=word,
                              reference=Reference(ref, ref_total, ref_note),
                              umap_state=resources.umap_warm_up().state)
    ss[FRAME] = frame
    ss["query_occ"] = frame.query  # before the selectbox is drawn, so a click moves it
    s = frame.s
    for j in range(num_layers):
        weight_notes[j].markdown(f"s_{j} = softmax(w)_{j} = **{s[j]:.3f}**")
        weight_notes[j].progress(float(s[j]))
    terms = " + ".join(f"{s[j]:.3f}·h_{j}" for j in range(num_layers))
    weight_notes[-1].markdown(f"ELMo = {gamma:g} · ({terms})")

    zero = frame.zero
    if zero.any():
        st.warning(f"{int(zero.sum())} of the {len(zero)} occurrences have an all-zero vector in this mix (numbered "
                   f"{', '.join(f'#{i + 1}' for i in np.flatnonzero(zero)[:10])}): a zero vector has no direction, "
                   "so it has no meaningful cosine similarity. It is left out of the separation scores; check "
                   "the model's weights.")
    tabs = st.tabs(["Contexts map", "Nearest neighbours", "Layers", "Export"])
    with tabs[0]:
        if frame.same_vector:
            why = ("layer 0 is context-free, so a word's vector does not depend on its sentence" if s[0] > 0.99
                   else "the occurrences do not differ in this mix (e.g. identical sentences)")
            st.info(f"All {len(occurrences)} occurrences have the same vector here: {why}. They are drawn at one "
                    "spot; move weight to layers 1 and 2 to see context effects.")
        map_tab(frame, occurrences, table)
    with tabs[1]:
        neighbours_tab(frame, occurrences, table)
    with tabs[2]:
        layers_tab(frame, occurrences)
    with tabs[3]:
        export_tab(table, occurrences, frame.vectors, frame.projection, word)
    sync_url(num_layers)
    state.remember(ss)


def map_tab(frame: Frame, occurrences, table) -> None:
    n = len(occurrences)
    proj, context_rows = frame.projection, frame.context_rows
    if proj.coords is None:
        st.warning(f"“{md(frame.word)}” occurs {n} time(s): a 2-D map needs at least {ex.MIN_POINTS_FOR_MAP} points, "
                   "so there is no map. The occurrences above, the neighbours and the export still work.")
        return
    has_labels = any(o.label for o in occurrences)
    if has_labels:
        st.radio("colour by", ["label", "sentence"], key="color_by", horizontal=True)
    color_by = ss.get("color_by", "label") if has_labels else "sentence"
    fig = figures.frame_map(frame, occurrences, table, color_by)
    ss["_map_figure"] = fig
    st.plotly_chart(fig, key="map_chart", on_select="rerun", selection_mode="points", width="stretch")
    method = METHOD_NAMES.get(proj.method, proj.method)
    what = f"the {n} occurrence vectors" + (f" and {len(context_rows)} other words" if len(context_rows) else "")
    st.caption(f"{method} of {what} (cosine geometry: vectors scaled to unit length; the axes have no units). "
               f"Click a point to make it the neighbours query (ring). {proj.note} "
               f"Mix + projection: {frame.map_ms:.0f} ms.")
    st.button("Re-fit the layout from scratch", key="refit", on_click=forget_layout,
              help="The map normally starts from its previous layout so that points stay put while you move "
                   "the sliders; this computes a fresh one.")


def neighbours_tab(frame: Frame, occurrences, table) -> None:
    n = len(occurrences)
    lines = table.lines
    c1, c2, c3 = st.columns([3, 1, 1.6], vertical_alignment="bottom")
    c1.selectbox("Query occurrence (or click a point on the map)", list(range(n)), key="query_occ",
                 format_func=lambda i: f"#{i + 1} · {occurrences[i].label or ''} · "
                                       f"{marked(lines[occurrences[i].line].tokens, occurrences[i].position, 6)}")
    c2.number_input("k", min_value=1, max_value=50, value=10, key="nn_k")
    c3.checkbox("same word only (Table 4 style)", key="nn_same_word",
                help="Search only the other occurrences of the target word, as the ELMo paper's Table 4 does.")
    q_occ = occurrences[frame.query]
    st.markdown(f"Query: {md(marked(lines[q_occ.line].tokens, q_occ.position, 30))}")
    left, mid, right = st.columns([1, 2.2, 2.2])
    with left:
        st.markdown("**Layer 0 (context-free): nearest word types**")
        found = frame.layer0_neighbours
        st.dataframe({"word": [word for word, _ in found], "cos": [round(sim, 3) for _, sim in found]},
                     hide_index=True, width="stretch",
                     column_config={"cos": st.column_config.NumberColumn(format="%.3f")})
        st.caption("Layer 0 ignores context: these are spelling/usage neighbours of the word type, like the "
                   "GloVe column of the ELMo paper's Table 4.")
    with mid:
        st.markdown("**ELMo mix: your sentences**")
        rows_out = frame.neighbours
        st.dataframe({"cos": [r[2] for r in rows_out], "token": [r[0] for r in rows_out],
                      "label": [r[1] for r in rows_out], "in context": [r[3] for r in rows_out]},
                     hide_index=True, width="stretch",
                     column_config={"cos": st.column_config.NumberColumn(width="small", format="%.3f"),
                                    "token": st.column_config.TextColumn(width="small"),
                                    "label": st.column_config.TextColumn(width="small"),
                                    "in context": st.column_config.TextColumn(width="large")})
    with right:
        st.markdown("**ELMo mix: reference corpus**")
        if frame.reference_neighbours is None:
            st.info(frame.reference_note)
        else:
            found = frame.reference_neighbours
            st.dataframe({"cos": [c for c, _ in found], "in context": [t for _, t in found]},
                         hide_index=True, width="stretch",
                         column_config={"cos": st.column_config.NumberColumn(width="small", format="%.3f"),
                                        "in context": st.column_config.TextColumn(width="large")})
            st.caption(frame.reference_note)


def layers_tab(frame: Frame, occurrences) -> None:
    n = len(occurrences)
    if n < 2:
        st.info("The layer comparison needs at least 2 occurrences.")
        return
    for note in frame.notes:
        st.caption(note)
    st.markdown("**Cosine similarity between the occurrences** (sorted by label; one colour scale for all panels)")
    st.plotly_chart(figures.frame_heatmaps(frame, occurrences), key="heatmaps", width="stretch")
    scores = frame.separation
    st.markdown("**Sense separation per layer**")
    chart = figures.frame_separation(frame)
    if chart is None:
        st.info(scores[0].note or "No score for this input.")
        return
    st.plotly_chart(chart, key="separation", width="stretch")
    has_knn = any(s.knn_accuracy is not None for s in scores)
    st.caption(("1-NN accuracy: share of occurrences whose nearest other occurrence (cosine) has the same label "
                "(leave-one-out; chance = random neighbour). " if has_knn else "")
               + "Silhouette: (b − a)/max(a, b) with cosine distances, −1…1, higher = senses further apart. "
               + (scores[0].note or ""))


def export_tab(table, occurrences, x, proj, word) -> None:
    lines = table.lines
    safe = "".join(ch if ch.isalnum() else "_" for ch in word)[:40] or "word"
    layers_occ = table.layers(False)[:, table.rows(occurrences)]  # (L+1, n, D)
    c1, c2, c3 = st.columns(3)
    c1.download_button("Vectors, current mix (CSV)", lambda: ex.vectors_csv(lines, occurrences, x),
                       file_name=f"elmo_{safe}_mix.csv", mime="text/csv", key="dl_csv", on_click="ignore")
    c1.download_button("Vectors, current mix (.npy, n × D)", lambda: ex.npy_bytes(x),
                       file_name=f"elmo_{safe}_mix.npy", mime="application/octet-stream", key="dl_npy", on_click="ignore")
    c2.download_button("All layers (.npy, (L+1) × n × D)", lambda: ex.npy_bytes(layers_occ),
                       file_name=f"elmo_{safe}_layers.npy", mime="application/octet-stream", key="dl_layers",
                       on_click="ignore")
    if proj.coords is not None:
        n = len(occurrences)
        c2.download_button("2-D coordinates (CSV)", lambda: ex.coords_csv(occurrences, proj.coords[:n], lines),
                           file_name=f"elmo_{safe}_map.csv", mime="text/csv", key="dl_coords", on_click="ignore")
        fig = ss.get("_map_figure")
        if fig is not None:
            c3.download_button("Map figure (HTML, works offline)",
                               lambda: fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8"),
                               file_name=f"elmo_{safe}_map.html", mime="text/html", key="dl_html", on_click="ignore")
        c3.caption("PNG: use the camera icon in the map's toolbar.")
    st.caption("Rows follow the occurrence numbers (#1, #2, …).")
    if not ex.text_fits_link(current_view(table.num_layers)):
        st.warning(f"These sentences are too long to keep in the link (over {ex.MAX_URL_TEXT:,} characters): the "
                   "page URL keeps the word and the weights only. Share the sentences as a .txt file (the "
                   "upload box reads it).")
    else:
        st.caption("The view itself (sentences, word, weights, projection) is in the page URL: copy it to share "
                   "this view.")


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
    if ss.get("_link_warning"):
        st.warning(ss.pop("_link_warning"))
    st.markdown(INTRO)

    parsed = input_section()
    per_token = model.embedder.num_layers * model.embedder.dim * 4 * 2  # the table and its layer-normed copy
    lines, note = ex.fit_budget(parsed.lines, resources.session_budget_bytes() // per_token)
    if note:
        st.warning(note)
    parsed = ex.ParsedInput(lines, parsed.notes)
    if not parsed.lines:
        st.info("Type or paste some sentences above (one per line), upload a .txt file, or load an example set.")
        sync_url(num_layers)
        return
    picked = word_section(parsed.lines)
    if picked is None:
        sync_url(num_layers)
        return
    word, occurrences = picked
    table = embed_lines(model, parsed.lines)
    if table is None:
        return
    live_view(model, table, word, occurrences)


main()

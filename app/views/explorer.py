"""Explorer page: sentences in, the target word's contextual vectors out (map, neighbours, layers, export).

Widgets and wiring only: the page reads its widgets into one ``app.explore.controls.Controls``
(``app.session.widgets.controls_of``), calls ``app.explore.frame.compute_frame`` and draws the frame with the words of
``app.render.words`` and the charts of ``app.render``; caches are ``app.serving``'s. The page's session keys
(``app.session.keys``: every key starts with "explorer_", private ones with "_explorer_"), its link
(``app.session.link``) and the widgets' rules (``app.session.widgets``) are the session part's. This file is the page's skeleton (the top, the live fragment, the tabs); its sections and tabs
are the modules of ``app/views/explorer_parts/``.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from app.explore import activations, inputs
from app.explore.frame import compute_frame
from app.explore.frame_neighbours import Reference
from app.render.safe import md
from app.render.words import mix_formula, word_summary, zero_note
from app.serving import caches, jobs, models
from app.session import keys, widgets
from app.views import live_bridge
from app.views.explorer_parts.common import presenting, ss
from app.views.explorer_parts.compare_tab import compare_tab
from app.views.explorer_parts.embedding import embed_lines, reference_table
from app.views.explorer_parts.export_tab import export_tab
from app.views.explorer_parts.link import share_row, sync_url
from app.views.explorer_parts.map_tab import map_and_neighbours
from app.views.explorer_parts.neighbours_tab import neighbours_tab
from app.views.explorer_parts.rail import fit_s_row, map_controls, preset_buttons, weights_section
from app.views.explorer_parts.senses_tab import senses_tab
from app.views.explorer_parts.sentences import input_section, occurrences_section, word_section
from app.views.explorer_parts.similarity_tab import similarity_tab

FRAME = keys.FRAME

LEAD = (
    "ELMo gives every word a vector that depends on the sentence around it. Load an example set (or your own "
    "sentences), pick a word, then move the layer weights beside the map and watch its senses separate (or not)."
)
INTRO = """
Type sentences that use one word in different senses, one per line, optionally with a sense label in front
(`[river] We sat on the bank.`), or load an example set; pick the word; then see where its occurrences land.
**Layer 0** is the context-free character-CNN vector: every occurrence of one spelling gets the same vector there,
and the spelling includes capitals ("Spring" and "spring" are different inputs to it). **Layers 1 and 2** are the
biLSTM layers, which see the whole sentence. The ELMo vector mixes them: ELMo = γ · Σ_j s_j · h_j with
s_j = softmax(w)_j. For a projector: presentation mode (in the sidebar, or `present=1` in the link).
"""


# ---- the live part: the rail beside the map, and the open tab -------------------------------------------------
@st.fragment
def live_view(
    model: models.LoadedModel, table: activations.TokenTable, word: str, occurrences: list[inputs.Occurrence]
) -> None:
    num_layers = table.num_layers
    # Every control that changes the mix or the map stands in this fragment, so that moving one reruns only
    # the mix, the projection and the open view, not the page (sentences, word, model panel). They stand in a
    # rail beside the map, so that one 1,024 x 768 screen shows every slider and the whole map: the points
    # move where the eye already is, with no scrolling between slider and map.
    with st.container(key=keys.key("live")):  # the rail's width and the map row's reflow: streamlit_app.py
        rail, main = st.columns([1, 3.2], gap="medium")
    with rail:
        weights_section(num_layers, presenting())
        live_bridge.bridge(num_layers)  # the map follows the sliders while they are dragged
        map_controls(presenting())
        formula = st.container()
        preset_buttons(num_layers)
        fit_s_row(table, occurrences)
        case_note = word_summary(word, occurrences)[1]  # layer 0 splits the capitals: beside the sliders
        if case_note:
            st.caption(case_note)
        share = st.container()  # the copy-link row, filled once the view is known
    with main:
        frame_and_tabs(model, table, word, occurrences, formula, share)
    sync_url(num_layers, model)
    widgets.remember(ss)


def frame_and_tabs(
    model: models.LoadedModel,
    table: activations.TokenTable,
    word: str,
    occurrences: list[inputs.Occurrence],
    formula,
    share,
) -> None:
    """Computes the frame for the current controls, writes the formula under the rail's controls, then draws the
    share row (into ``share`` when given: the rail) and the open tab."""
    num_layers = table.num_layers
    n = len(occurrences)
    query, note = widgets.query_of(ss, n)
    if note:
        st.info(md(note))
    controls = dataclasses.replace(widgets.controls_of(ss, num_layers), query=query)
    ref, ref_total, ref_note = reference_table(model, word, controls.inflections)
    with st.spinner(jobs.projecting_text(n, controls.projection)):
        frame = compute_frame(
            table,
            occurrences,
            controls,
            ss.get(FRAME),
            clicked=widgets.map_click(ss, n),
            model_key=model.key,
            word=word,
            reference=Reference(ref, ref_total, ref_note),
            types=jobs.type_vectors(model),
        )
    ss[FRAME] = frame
    ss[keys.QUERY] = frame.query  # before the selectbox is drawn, so a click moves it
    formula.markdown(mix_formula(frame.s, controls.gamma))
    if zero_note(frame):
        st.warning(zero_note(frame))
    with share:
        share_row(model, num_layers)
    labels = list(keys.TABS.values())
    with st.container(key=keys.key("views")):  # a narrow page stacks the views' columns: streamlit_app.py
        tabs = st.tabs(labels, key=keys.TAB, on_change="rerun")
    views = (
        lambda: map_and_neighbours(frame, occurrences, table, model.display_name),
        lambda: neighbours_tab(frame, occurrences, table),
        lambda: similarity_tab(frame, occurrences),
        lambda: senses_tab(frame, occurrences, table),
        lambda: compare_tab(model, table, frame, occurrences),
        lambda: export_tab(table, occurrences, frame, model),
    )
    for tab, view in zip(tabs, views):
        with tab:
            if tab.open:
                view()


# ---- page -------------------------------------------------------------------------------------------------
def main() -> None:
    try:
        model, _ = models.page_model()
    except Exception as err:
        st.error(f"No model could be loaded: {md(err)}")
        return
    num_layers = model.embedder.num_layers
    widgets.init_widgets(ss, num_layers)
    # the title, a two-line lead and the full introduction behind a button: one row above the sentences
    # (presentation mode: none of them; the top bar names the page, and the map starts higher)
    if not presenting():
        title, lead, more = st.columns([1.4, 3.2, 0.85], vertical_alignment="center")
        title.title("ELMo Explorer")
        lead.markdown(LEAD)
        with more.popover("How it works", width="stretch"):
            st.markdown(INTRO)
    for note in ss.pop(keys.LINK_NOTES, None) or []:
        st.warning(md(note))

    parsed, places = input_section()
    lines, note = inputs.fit_budget(
        parsed.lines, inputs.tokens_in_budget(caches.session_budget_bytes(), num_layers, model.embedder.dim)
    )
    if note:
        st.warning(note)
    parsed = inputs.ParsedInput(lines, parsed.notes)
    if not parsed.lines:
        st.info("Type or paste some sentences above (one per line), upload a .txt file, or load an example set.")
        sync_url(num_layers, model)
        return
    picked = word_section(parsed.lines, places)
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

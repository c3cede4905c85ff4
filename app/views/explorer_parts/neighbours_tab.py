"""The Neighbours tab: the query occurrence's nearest occurrences in the mix, in the reference corpus, and the
word's nearest types at layer 0."""

from __future__ import annotations

import streamlit as st

from app.explore.frame import Frame
from app.render.display import kwic_table
from app.render.words import neighbour_lines, no_neighbours_note, occurrence_lines, query_option, reference_note
from app.session import keys
from app.views.explorer_parts.common import KEEP


def neighbours_tab(frame: Frame, occurrences, table) -> None:
    n = len(occurrences)
    lines = table.lines
    c1, c2, c3 = st.columns([3, 1, 1.6], vertical_alignment="bottom")
    c1.selectbox(
        "Query occurrence (or click a point on the map)",
        list(range(n)),
        key=keys.QUERY,
        persist_state=KEEP,
        format_func=lambda i: query_option(occurrences, lines, i),
    )
    c2.number_input("k", min_value=keys.K_RANGE[0], max_value=keys.K_RANGE[1], key=keys.K, persist_state=KEEP)
    c3.checkbox(
        "same word only",
        key=keys.SAME_WORD,
        persist_state=KEEP,
        help="Search only the other occurrences of the target word, as the ELMo paper's Table 4 does.",
    )
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
            st.info(reference_note(frame))
        else:
            found = frame.reference_neighbours
            st.html(kwic_table([k for _, k in found], [("cos", "c", [f"{c:.3f}" for c, _ in found])]))
            st.caption(reference_note(frame))
    with right:
        st.markdown("**Layer 0 (context-free): nearest word types**")
        found = frame.layer0_neighbours
        st.dataframe(
            {"word": [word for word, _ in found], "cos": [round(sim, 3) for _, sim in found]},
            hide_index=True,
            width="stretch",
            column_config={"cos": st.column_config.NumberColumn(format="%.3f")},
        )
        st.caption(
            "Layer 0 ignores context: these are spelling/usage neighbours of the word type, like the "
            f"GloVe column of the ELMo paper's Table 4. {frame.layer0_note}"
        )

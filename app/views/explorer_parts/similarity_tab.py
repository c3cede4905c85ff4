"""The Similarity tab: the occurrences' cosine matrices per layer and the sense separation scores."""

from __future__ import annotations

import streamlit as st

from app.explore.frame import Frame
from app.render import figures
from app.render.words import no_separation_note, separation_caption
from app.session import keys
from app.views.explorer_parts.common import chart


def similarity_tab(frame: Frame, occurrences) -> None:
    n = len(occurrences)
    if n < 2:
        st.info("The layer comparison needs at least 2 occurrences.")
        return
    for note in frame.notes:
        st.caption(note)
    order = "sorted by label; " if any(o.label for o in occurrences) else ""
    st.markdown(f"**Cosine similarity between the occurrences** ({order}one colour scale for all panels)")
    st.plotly_chart(chart(figures.frame_heatmaps(frame, occurrences)), key=keys.key("heatmaps"), width="stretch")
    st.markdown("**Sense separation per layer**")
    bars = figures.frame_separation(frame)
    if bars is None:
        st.info(no_separation_note(frame))
        return
    st.plotly_chart(chart(bars), key=keys.key("separation"), width="stretch")
    st.caption(separation_caption(frame, occurrences))

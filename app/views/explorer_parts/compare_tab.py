"""The Compare tab: the same sentences, word and weights with two models, maps side by side and scores."""
from __future__ import annotations

import streamlit as st

from app.explore import activations, compare
from app.render import figures, map_chart
from app.serving import resources
from app.session import state
from app.explore.frame import Frame
from app.render.safe import md
from app.views.explorer_parts.common import KEEP, chart, presenting, ss
from app.views.explorer_parts.embedding import embed_for


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
                    st.vega_lite_chart(fig.data, fig.spec, width="stretch")
            bars = figures.side_separation(side.frame)
            if bars is not None:
                st.plotly_chart(chart(bars), key=state.key(f"compare_sep_{j}"), width="stretch")
    st.markdown("**Separation scores per layer**")
    st.dataframe(compare.score_rows(sides), hide_index=True, width="stretch")
    st.caption("1-NN: leave-one-out nearest-neighbour accuracy with your labels; silhouette: cosine, −1…1. "
               + md(compare.score_note(sides)))

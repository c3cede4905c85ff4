"""The Compare tab: the same sentences, word and weights with two models, maps side by side and scores."""

from __future__ import annotations

import streamlit as st

from app.explore import activations, compare
from app.explore.frame import Frame
from app.render import figures, map_chart
from app.render.safe import md
from app.serving import models
from app.session import keys, widgets
from app.views.explorer_parts.common import KEEP, chart, presenting, ss
from app.views.explorer_parts.embedding import embed_for


def compare_tab(model: models.LoadedModel, table: activations.TokenTable, frame: Frame, occurrences) -> None:
    choices = models.comparison_choices()
    specs = {spec: label for label, spec in choices.items()}
    widgets.drop_unknown_models(ss, list(specs))
    st.caption(
        "The same sentences, word and layer weights with two models: the maps side by side (the right "
        "one turned onto the left one, since a projection's rotation means nothing) and the separation "
        "scores per layer."
    )
    if len(specs) < 2:
        st.info(
            "Only one model is available here. Load your own under “Load your own ELMo” in the sidebar to "
            "compare it with this one."
        )
        return
    widgets.default_comparison(ss, list(specs), models.comparison_spec(model))
    c1, c2 = st.columns(2)
    c1.selectbox(
        "left model",
        list(specs),
        key=keys.COMPARE_A,
        persist_state=KEEP,
        index=None,
        placeholder="pick a model",
        format_func=specs.get,
    )
    c2.selectbox(
        "right model",
        list(specs),
        key=keys.COMPARE_B,
        persist_state=KEEP,
        index=None,
        placeholder="pick a model",
        format_func=specs.get,
    )
    a, b = ss.get(keys.COMPARE_A), ss.get(keys.COMPARE_B)
    if a is None or b is None:
        st.info("Pick two models to compare.")
        return
    if a == b:
        st.info("Pick two different models.")
        return
    runs = []
    for spec in (a, b):
        label = specs[spec]
        try:
            loaded = models.comparison_model(spec)
        except (KeyError, FileNotFoundError, ValueError) as err:
            st.error(f"Could not load {md(label)}: {md(err)}")
            return
        other = table if loaded.key == model.key else embed_for(loaded, table.lines)
        if other is None:
            return
        runs.append((compare.side_name(label), loaded.key, other))
    with st.spinner("Projecting both models…"):
        sides = compare.compare(
            runs, occurrences, frame.controls, frame.word, ss.get(keys.private("compare_sides"), ())
        )
    ss[keys.private("compare_sides")] = sides
    color_by = ss.get(keys.COLOR_BY, "label")
    figs = map_chart.comparison_charts(
        sides, occurrences, table, color_by, font=figures.PROJECTOR_FONT if presenting() else map_chart.FONT
    )
    st.html(map_chart.TOOLTIP_CSS)
    cols = st.columns(len(sides))
    for j, (col, side, fig) in enumerate(zip(cols, sides, figs)):
        with col:
            if fig is None:
                st.info("No map: fewer than 3 occurrences.")
            else:
                with st.container(key=keys.key(f"compare_map_{j}")):  # its class names the map for the tests
                    st.vega_lite_chart(fig.data, fig.spec, width="stretch")
            bars = figures.side_separation(side.frame)
            if bars is not None:
                st.plotly_chart(chart(bars), key=keys.key(f"compare_sep_{j}"), width="stretch")
    st.markdown("**Separation scores per layer**")
    st.dataframe(compare.score_rows(sides), hide_index=True, width="stretch")
    st.caption(
        "1-NN: leave-one-out nearest-neighbour accuracy with your labels; silhouette: cosine, −1…1. "
        + md(compare.score_note(sides))
    )

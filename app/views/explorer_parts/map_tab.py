"""The Map tab: the contexts map (colour, click-to-pick, the layers side by side) with the query's nearest
occurrences beside it; ``map_file`` draws the same map for the Export tab."""

from __future__ import annotations

import streamlit as st

from app.explore import inputs, projections
from app.explore.frame import Frame
from app.explore.layer_maps import layer_maps
from app.explore.text import plural
from app.render import exports, figures, map_chart, map_spec
from app.render.display import kwic_list
from app.render.safe import md
from app.render.words import (
    frame_title,
    map_caption,
    map_title,
    method_name,
    neighbour_lines,
    no_neighbours_note,
    occurrence_lines,
    same_vector_note,
)
from app.session import keys, widgets
from app.views import live_bridge
from app.views.explorer_parts.common import KEEP, chart, presenting, ss


def map_and_neighbours(frame: Frame, occurrences, table, model_name: str) -> None:
    """The map tab: the map, and the neighbours of its query point beside it (under it where the page is
    narrow: the reflow is CSS in streamlit_app.py), so that a click on a point shows its neighbours where the
    eye already is. The map's options stand in one row above both (each label before its options:
    layout.LAYOUT_CSS), so that the map starts high."""
    if frame.projection.coords is not None:
        map_options(frame, occurrences)
    with st.container(key=keys.key("map_row")):
        left, right = st.columns([1.75, 1], gap="medium")
    with left:
        map_view(frame, occurrences, table, model_name)
    with right:
        map_neighbours(frame, occurrences, table)


def map_neighbours(frame: Frame, occurrences, table) -> None:
    """The query occurrence and its nearest occurrences in the mix (k and "same word only" as the Neighbours tab
    sets them, which also has the reference corpus and layer 0)."""
    st.markdown(
        f"**Nearest to #{frame.query + 1}** in the mix",
        help="Click a point on the map to make it the "
        "query. The Neighbours tab sets k and “same word only”, and adds the reference corpus and layer 0.",
    )
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
    return widgets.color_by_choices(
        ss,
        any(o.label for o in occurrences),
        len(inputs.spellings(occurrences)) > 1,
        frame.offers_clusters(ss.get(keys.COLOR_BY) == "cluster"),
        label_set=[o.label for o in occurrences],
    )


def map_figure(frame: Frame, occurrences, table, model_name: str, projector: bool = False, live: bool = False):
    """The contexts map of the current frame, titled with its settings: what the map tab draws and what the Export
    tab saves (built again there, since only the open tab is drawn and a saved copy could be an older mix's).
    A Vega-Lite chart (``app.render.map_chart``); ``projector``: presentation mode's larger type and shorter map (the rail's
    sliders and the whole map on one 1,024 x 768 screen); ``live``: the map follows the rail's sliders while one
    is dragged (``app.render.map_live``; a file draws the released map)."""
    colour_choices(frame, occurrences)
    title = frame_title(frame, model_name)
    bind = live_bridge.slider_inputs(table.num_layers) if live else None
    if projector:
        return map_chart.frame_chart(
            frame,
            occurrences,
            table,
            ss[keys.COLOR_BY],
            title=title,
            height=figures.PROJECTOR_MAP_HEIGHT,
            font=figures.PROJECTOR_FONT,
            bind=bind,
        )
    return map_chart.frame_chart(frame, occurrences, table, ss[keys.COLOR_BY], title=title, bind=bind)


def map_file(frame: Frame, occurrences, table, model_name: str, kind: str) -> bytes:
    """The Export tab's map file: "html" (a page that works offline) or "png" (drawn on the server)."""
    fig = map_figure(frame, occurrences, table, model_name)
    return map_chart.chart_html(fig) if kind == "html" else map_chart.chart_png(fig)


def map_options(frame: Frame, occurrences) -> None:
    """The map's "colour by" and "show", side by side in a row that wraps where the page is narrow."""
    choices = colour_choices(frame, occurrences)
    row = st.container(key=keys.key("map_options"), horizontal=True, gap="small")
    if len(choices) > 1:
        row.radio(
            "colour by",
            choices,
            key=keys.COLOR_BY,
            persist_state=KEEP,
            horizontal=True,
            help="cluster: the groups found in the current mix without using labels (Senses tab).",
        )
    row.radio(
        "show",
        list(keys.MAP_VIEWS.values()),
        key=keys.MAP_VIEW,
        persist_state=KEEP,
        horizontal=True,
        help="Layer 0, 1, 2 and the current mix next to each other, each projected alone with the same "
        "method and turned onto the mix's map, so you can see where context comes in.",
    )


def map_tab(frame: Frame, occurrences, table, model_name: str) -> None:
    """The contexts map, or the layers side by side in its place (its options: ``map_options``, above the map
    and its neighbours)."""
    n = len(occurrences)
    proj = frame.projection
    if proj.coords is None:
        st.warning(
            f"“{md(frame.word)}” occurs {plural(n, 'time')}: a 2-D map needs at least "
            f"{projections.MIN_POINTS_FOR_MAP} points, so there is no map. The occurrences above, the neighbours and "
            "the export still work."
        )
        return
    color_by = ss[keys.COLOR_BY]
    settings = exports.Settings.of_frame(frame, model_name)
    if ss.get(keys.MAP_VIEW) == keys.MAP_VIEWS["layers"]:  # in the map's place: where the eye already is
        layers_side_by_side(frame, occurrences, table, color_by, settings)
        return
    fig = map_figure(frame, occurrences, table, model_name, projector=presenting(), live=True)
    st.html(map_chart.TOOLTIP_CSS)  # the hover text at 15 px (Streamlit's is 12)
    # a click on an occurrence selects it (map_spec.PICK): the next run makes it the neighbours query
    st.vega_lite_chart(
        fig.data,
        fig.spec,
        key=keys.MAP_CHART,
        on_select="rerun",
        selection_mode=[map_spec.PICK],
        width="stretch",
        alt=f"Contexts map of “{frame.word}”: {plural(n, 'occurrence')}",
    )
    st.caption(map_caption(frame) + " Drag to pan, shift + scroll to zoom, double-click to reset.")


def layers_side_by_side(frame: Frame, occurrences, table, color_by: str, settings) -> None:
    with st.spinner("Projecting each layer…"):
        maps = layer_maps(table, frame, ss.get(keys.private("layer_maps")))
    if maps is None:
        return
    ss[keys.private("layer_maps")] = maps
    method = method_name(maps.method)
    clusters = frame.cluster_labels if color_by == "cluster" else None  # clustered only when coloured so
    fig = figures.small_multiples(
        maps,
        occurrences,
        table.lines,
        color_by,
        clusters,
        title="layers side by side<br>" + map_title(settings.controls, settings.s, method),  # the map's width
    )
    st.plotly_chart(
        chart(fig),
        key=keys.key("layer_maps_chart"),
        width="stretch",
        config=exports.png_config(exports.file_stem(frame.word, settings.controls.model, "layers")),
    )
    how = (
        f"Each panel draws one layer's vectors of the {len(occurrences)} occurrences on the mix's fixed axes (the "
        "mix with that layer's weight alone, at the same γ), nothing refitted, so the same place means the same in "
        "every panel; the panels follow the sliders when you let go."
        if maps.method == "live"
        else f"Each panel is a {method} of one layer's vectors of the {len(occurrences)} occurrences, rotated, "
        "reflected and scaled onto the mix's map (Procrustes), so the same place means the same in every panel."
    )
    st.caption(how + " Layer 0 sees only the word's spelling; layers 1 and 2 see the sentence.")

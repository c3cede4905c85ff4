"""The Export tab: the mix, every layer, the Embedding Projector's files, the coordinates and the map as files."""

from __future__ import annotations

import streamlit as st

from app.explore import projections
from app.explore.frame import Frame, occurrence_layers
from app.render import exports
from app.session import keys
from app.views.explorer_parts.map_tab import map_file


def export_tab(table, occurrences, frame: Frame, model) -> None:
    model_name = model.display_name
    lines = table.lines
    x, word = frame.vectors, frame.word
    settings = exports.Settings.of_frame(frame, model_name)

    def stem(what: str) -> str:
        return exports.file_stem(word, model_name, what)

    layers_occ = occurrence_layers(table, frame)
    c1, c2, c3 = st.columns(3)
    c1.download_button(
        "Mix vectors (CSV)",
        lambda: exports.vectors_csv(lines, occurrences, x, settings),
        file_name=stem("mix") + ".csv",
        mime="text/csv",
        key=keys.key("dl_csv"),
        on_click="ignore",
    )
    c1.download_button(
        "Mix vectors (.npz)",
        lambda: exports.npz_bytes({"vectors": x}, settings, lines, occurrences),
        file_name=stem("mix") + ".npz",
        mime="application/octet-stream",
        key=keys.key("dl_npy"),
        on_click="ignore",
        help="The current mix: n × D float32.",
    )
    c1.download_button(
        "All layers (.npz)",
        lambda: exports.npz_bytes({"layers": layers_occ}, settings, lines, occurrences),
        file_name=stem("layers") + ".npz",
        mime="application/octet-stream",
        key=keys.key("dl_layers"),
        on_click="ignore",
        help="Every layer as mixed: (L+1) × n × D float32.",
    )
    if exports.projector_refusal(x):
        c2.warning(exports.projector_refusal(x))
    else:
        c2.download_button(
            "Projector files (.zip)",
            lambda: exports.projector_zip(lines, occurrences, x, settings, frame.cluster_labels),
            file_name=stem("projector") + ".zip",
            mime="application/zip",
            key=keys.key("dl_projector"),
            on_click="ignore",
            help="vectors.tsv + metadata.tsv for the TensorFlow Embedding Projector.",
        )
        c2.caption(
            "For the TensorFlow Embedding Projector: unzip, open projector.tensorflow.org, “Load”, then choose "
            "vectors.tsv and metadata.tsv."
        )
    if frame.occurrence_coords is not None:
        c3.download_button(
            "2-D coordinates (CSV)",
            lambda: exports.coords_csv(lines, occurrences, frame.occurrence_coords, settings, frame.cluster_labels),
            file_name=stem("map") + ".csv",
            mime="text/csv",
            key=keys.key("dl_coords"),
            on_click="ignore",
        )
        if frame.projection.coords is not None:
            c3.download_button(
                "Map (HTML, offline)",
                lambda: map_file(frame, occurrences, table, model_name, "html"),
                file_name=stem("map") + ".html",
                mime="text/html",
                key=keys.key("dl_html"),
                on_click="ignore",
                help="The map as a page that works without a network.",
            )
            c3.download_button(
                "Map (PNG)",
                lambda: map_file(frame, occurrences, table, model_name, "png"),
                file_name=stem("map") + ".png",
                mime="image/png",
                key=keys.key("dl_png"),
                on_click="ignore",
                help="The map with its title and legend, drawn on the server.",
            )
    else:
        c3.caption(f"No map files: a 2-D map needs at least {projections.MIN_POINTS_FOR_MAP} points (Map tab).")
    st.caption(
        "Numbers count from 1 as on this page (occurrence #1, sentence 1, token 1). Every file records the "
        "model, w, s, γ, layer norm and the sentences (CSV: in each row; .npz and the zip: "
        "`settings` / settings.json)."
    )

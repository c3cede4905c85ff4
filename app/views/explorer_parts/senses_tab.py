"""The Senses tab: clusters found in the current mix without the labels, and their agreement with them."""

from __future__ import annotations

import streamlit as st

from app.explore.clusters import CLEAR_SILHOUETTE, agreement, min_cluster_size
from app.explore.frame import Frame
from app.explore.text import plural
from app.render import figures, safe
from app.render.display import kwic_table
from app.render.words import cluster_groups, cluster_summary, occurrence_lines
from app.session import keys
from app.views.explorer_parts.common import KEEP, ss


def colour_by_cluster() -> None:
    ss[keys.COLOR_BY] = "cluster"


def senses_tab(frame: Frame, occurrences, table) -> None:
    n = len(occurrences)
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    c1.selectbox(
        "number of clusters",
        [0] + list(range(2, keys.MAX_CLUSTERS + 1)),
        key=keys.N_CLUSTERS,
        persist_state=KEEP,
        format_func=lambda k: "auto (best silhouette)" if k == 0 else str(k),
        help=f"Auto tries 2 to {keys.MAX_CLUSTERS} clusters, each of at least "
        f"{min_cluster_size(n)} occurrences, and keeps the split with the highest silhouette; below "
        f"{CLEAR_SILHOUETTE:.2f} it says there are no clear clusters.",
    )
    found = frame.clusters
    if found is None:
        st.info(
            f"The {plural(n, 'occurrence')} cannot be split into clusters here: "
            + (
                "they all have the same vector in this mix."
                if frame.same_vector
                else "clustering needs at least 3 occurrences with a non-zero vector."
            )
        )
        return
    if found.clear:
        c2.button("Colour the map by cluster", key=keys.key("colour_by_cluster"), on_click=colour_by_cluster)
    headline, per_k = cluster_summary(found)
    st.markdown(headline)
    if per_k:
        st.caption(per_k)
    if not found.clear:
        return
    labels = [o.label for o in occurrences]
    agree = agreement(found, labels)
    if agree is not None:
        st.markdown(
            f"**Agreement with your labels:** adjusted Rand index **{agree.ari:.2f}** over {agree.n} "
            "labelled occurrences (1 = the clusters are exactly your senses, about 0 = no better than "
            "chance). Occurrences per sense (rows) and cluster (columns):"
        )
        st.dataframe(
            {
                "sense": agree.senses,
                **{f"cluster {c + 1}": agree.counts[:, j].tolist() for j, c in enumerate(agree.clusters)},
            },
            hide_index=True,
        )
    elif any(labels):
        st.caption("Fewer than two labelled senses: no agreement score.")
    lines = table.lines
    # every cluster's heading and sentences in one element: one message to the browser, not two per cluster
    st.html(
        "".join(
            f"<div style='margin-top:6px'><span style='display:inline-block;width:12px;height:12px;"
            f"border-radius:6px;background:{figures.cluster_colour(group.cluster)};margin-right:6px'></span>"
            f"<b>{safe.html_text(group.name)}</b> · {plural(len(group.members), 'occurrence')}</div>"
            + kwic_table(*occurrence_lines(occurrences, lines, group.members))
            for group in cluster_groups(found)
        )
    )
    st.caption(
        "Average-linkage clustering of the occurrences' vectors in the current mix, by cosine distance "
        "(scikit-learn); move the sliders and the clusters follow the mix."
    )

"""The floor for ``first_map.py``: a Streamlit page that holds nothing but one 12-point scatter, drawn with plotly
or, with ``ELMO_BENCH_CHART=altair``, with Vega-Lite (Altair) as the explorer's contexts map is.

Usage (``first_map.py --compare`` starts both itself):
    streamlit run benchmarks/one_chart_page.py --server.port 8613 --server.headless true
    ELMO_BENCH_CHART=altair streamlit run benchmarks/one_chart_page.py --server.port 8614 --server.headless true
    python benchmarks/first_map.py http://127.0.0.1:8613/ --trials 6

What this page takes to its first drawn point is what Streamlit and the chart library cost on the machine before the
explorer adds anything (the explorer's bank example also has 12 points).
"""

import os

import numpy as np
import streamlit as st

points = np.random.default_rng(0).normal(size=(12, 2))
if os.environ.get("ELMO_BENCH_CHART", "plotly").strip().lower() == "altair":
    import altair as alt
    import pandas as pd

    st.altair_chart(alt.Chart(pd.DataFrame(points, columns=["x", "y"])).mark_circle().encode(x="x", y="y"))
else:
    import plotly.graph_objects as go

    st.plotly_chart(go.Figure(go.Scatter(x=points[:, 0], y=points[:, 1], mode="markers")))

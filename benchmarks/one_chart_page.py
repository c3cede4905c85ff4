"""The floor for ``first_map.py``: a Streamlit page that holds nothing but one 12-point plotly scatter.

Usage:
    streamlit run benchmarks/one_chart_page.py --server.port 8613 --server.headless true
    python benchmarks/first_map.py http://127.0.0.1:8613/ --trials 6

What this page takes to its first drawn point is what Streamlit and plotly.js cost on the machine before the explorer
adds anything (the explorer's bank example also has 12 points).
"""
import numpy as np
import plotly.graph_objects as go
import streamlit as st

points = np.random.default_rng(0).normal(size=(12, 2))
st.plotly_chart(go.Figure(go.Scatter(x=points[:, 0], y=points[:, 1], mode="markers")))

"""What the explorer shows: charts (Vega-Lite, plotly), exports, the page's words, escaping of untrusted text.

Imports from outside this package: app.explore, altair, plotly, vl-convert, and elmo_core's public API; never Streamlit.
"""

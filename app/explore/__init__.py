"""The explorer's computation: the controls record, the mix, the map's projection, neighbours, clusters and probes'
numbers; numbers and plain text in, numbers and plain text out; no Streamlit, no charts, no markup.

Imports from outside this package: numpy, scikit-learn, umap-learn (projections), and elmo_core's public API. It is
the lowest part of app: it imports no other part of app.
"""

"""The explorer's computation: numbers in, numbers out, no Streamlit and no charts.

Imports from outside this package: numpy, scikit-learn, umap-learn (projections), and elmo_core's public API.
"""

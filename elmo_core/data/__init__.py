"""Text and the data made from it: tokenizing and word forms, the training corpus (corpus/), the vocabulary,
the sense items and their sources (WordNet, Brown) and the explorer's reference corpus.

Imports from outside this package: elmo_core.model (to embed sense items), elmo_core.paths and elmo_core.metrics.
"""

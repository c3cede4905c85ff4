"""The corpus atlas: every occurrence of every frequent word of a corpus with its layer vectors, its sentence and
position, a word index and an approximate nearest-neighbour index over all occurrences (docs/ATLAS.md).

``build_atlas`` (one process, or shared among torchrun ranks with embed's machinery: elmo_core.model.shards)
writes the folder; ``Atlas.open`` reads it (memory-mapped) and answers ``occurrences``, ``sentence`` and
``nearest``.

Imports from outside this package: elmo_core.model (the batch plan, the shards, strict JSON), elmo_core.data
(lines, tokens, word tokens), elmo_core.paths; numpy, torch (the weights' hash), faiss (the nearest-neighbour
index). Neither elmo_core.training nor elmo_core.probes (the parts below it that it has no use for).
"""

from elmo_core.atlas.build import build_atlas
from elmo_core.atlas.store import FORMAT, Atlas, Neighbours
from elmo_core.atlas.words import DEFAULT_MIN_COUNT, read_stop_words, word_key

__all__ = ["Atlas", "FORMAT", "Neighbours", "build_atlas", "DEFAULT_MIN_COUNT", "read_stop_words", "word_key"]

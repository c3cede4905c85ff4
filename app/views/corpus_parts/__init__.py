"""The Corpus page's parts (``app/views/corpus.py``): the map of a word's every occurrence (``corpus_map``) and the
panels beside it, the sense groups and the nearest contexts (``panels``)."""

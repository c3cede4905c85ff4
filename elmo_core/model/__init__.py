"""The biLM: characters to layers 0..L (config, chars, char_cnn, lstm, bilm, mix, embedder;
chunked: many sentences a chunk at a time), its weight files (weights, elmo_hdf5; the published models: published,
download) and whole files of sentences embedded (embed_file).

Imports from outside this package: elmo_core.paths and elmo_core.metrics only.
"""

"""Chunked embedding: chunk order and sizes, the progress reports, the same arrays as one batch, bad chunk sizes."""

import numpy as np
import pytest

from elmo_core.model.chunked import embed_in_chunks, embed_with_progress


def test_embed_in_chunks_and_with_progress(tiny_embedder):
    sentences = [["a"], ["b", "c"], ["d", "e", "f"], ["g"], ["h", "i"]]
    seen = []
    parts = list(
        embed_in_chunks(lambda chunk: (seen.append(len(chunk)), tiny_embedder.embed_batch(chunk))[1], sentences, 2)
    )
    assert [done for done, _ in parts] == [2, 4, 5] and seen == [2, 2, 1]
    reported = []
    again = list(embed_in_chunks(tiny_embedder.embed_batch, sentences, 2, lambda f, text: reported.append((f, text))))
    assert [done for done, _ in again] == [2, 4, 5]
    assert reported == [
        (0.4, "running the biLM: 2/5 sentences"),
        (0.8, "running the biLM: 4/5 sentences"),
        (1.0, "running the biLM: 5/5 sentences"),
    ]  # one signature: progress(fraction, text)
    whole = tiny_embedder.embed_batch(sentences)
    chunked = [a for _, arrays in parts for a in arrays]
    assert [a.shape for a in chunked] == [a.shape for a in whole]
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(chunked, whole))
    reports = []
    out = embed_with_progress(
        tiny_embedder,
        sentences,
        batch_size=2,
        chunk_size=3,
        progress=lambda f, text: reports.append((round(f, 3), text)),
    )
    assert reports == [(0.6, "running the biLM: 3/5 sentences"), (1.0, "running the biLM: 5/5 sentences")]
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(out, whole))
    with pytest.raises(ValueError, match="chunk_size"):
        next(embed_in_chunks(tiny_embedder.embed_batch, sentences, 0))

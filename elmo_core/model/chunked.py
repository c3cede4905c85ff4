"""Embedding many sentences a chunk at a time, with progress reports between chunks, and the progress callback type."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

Progress = Callable[[float, str], None]
"""progress(fraction done in [0, 1], what is happening): the one progress callback of the library and the app
(chunked embedding, the probes, the explorer's progress bars, which take the two as they are)."""


def embed_in_chunks(
    embed_batch: Callable[[list[list[str]]], list[np.ndarray]],
    sentences: Sequence[Sequence[str]],
    chunk_size: int,
    progress: Progress | None = None,
) -> Iterator[tuple[int, list[np.ndarray]]]:
    """Embed ``sentences`` a chunk at a time, so that a caller can cache between chunks.

    Args: embed_batch: e.g. ``Embedder.embed_batch`` (token lists -> arrays); chunk_size >= 1 sentences;
        progress: called after each chunk as progress(done / total, "running the biLM: done/total sentences").
    Yields: (sentences done so far, the chunk's arrays float32 (L + 1, n_i, D)), in input order.
    Raises: ValueError when chunk_size < 1.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    total = len(sentences)
    for first in range(0, total, chunk_size):
        chunk = [list(s) for s in sentences[first : first + chunk_size]]
        arrays = embed_batch(chunk)
        done = min(first + chunk_size, total)
        if progress is not None:
            progress(done / total, f"running the biLM: {done:,}/{total:,} sentences")
        yield done, arrays


def embed_with_progress(
    embedder,
    sentences: Sequence[Sequence[str]],
    batch_size: int = 64,
    chunk_size: int = 256,
    progress: Progress | None = None,
) -> list[np.ndarray]:
    """``embedder.embed_batch`` of all sentences, ``chunk_size`` at a time (``embed_in_chunks``, which calls
    ``progress`` after each chunk); anything with ``embed_batch(sentences, batch_size)`` will do.
    Returns: list of float32 (L + 1, n_i, 2P), in input order."""
    arrays: list[np.ndarray] = []
    for _, part in embed_in_chunks(
        lambda chunk: embedder.embed_batch(chunk, batch_size), sentences, chunk_size, progress
    ):
        arrays += part
    return arrays

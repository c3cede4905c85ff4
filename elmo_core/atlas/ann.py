"""The atlas's approximate nearest-neighbour index: faiss HNSW over every occurrence's *index vector*, the equal
mix of its layers, L2-normalised (so inner product is cosine), stored as 8-bit codes inside the index
(``IndexHNSWSQ``, ``QT_8bit``). Saved with ``faiss.write_index`` (faiss's own binary format, no pickle).

Only the candidate search is approximate: ``Atlas.nearest`` asks the index for many more candidates than it
returns and re-ranks them exactly in the requested mix (docs/ATLAS.md, "Exact and approximate").
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

HNSW_M = 16  # graph degree (32 links per vector on the bottom layer)
EF_CONSTRUCTION = 64
CHUNK = 65_536  # occurrences mixed at a time (float32: 65,536 x 3 x 256 x 4 = 192 MiB at most)


def mix_rows(vectors: np.ndarray, weights: np.ndarray, normalise: bool = True) -> np.ndarray:
    """sum_l weights[l] * vectors[:, l] in float32, each row L2-normalised (a zero row stays zero).
    Args: vectors (n, L, D) any float dtype; weights float (L,). Returns: float32 (n, D)."""
    out = np.einsum("nld,l->nd", np.asarray(vectors, dtype=np.float32), weights.astype(np.float32))
    if normalise:
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
    return out


def build_index(vectors: np.ndarray, progress=lambda n: None):
    """A faiss HNSW index over the rows of ``vectors`` (n, L, D), row i with id i, in the equal mix.
    ``progress(n)``: n more rows added. Raises ImportError when faiss is not installed."""
    import faiss

    n, layers, dim = vectors.shape
    # every core of this machine: under torchrun OMP_NUM_THREADS=1 would leave rank 0 one thread, but the other
    # ranks have finished by the merge (the index need not be bitwise reproducible: docs/ATLAS.md); restored after
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    try:
        index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        equal = np.full(layers, 1.0 / layers, dtype=np.float32)
        index.train(mix_rows(vectors[: min(n, CHUNK)], equal))  # 8-bit codes: the value range per dimension
        for first in range(0, n, CHUNK):
            index.add(mix_rows(vectors[first : first + CHUNK], equal))
            progress(min(CHUNK, n - first))
    finally:
        faiss.omp_set_num_threads(previous)
    return index


def write_index(index, path: Path) -> None:
    import faiss

    faiss.write_index(index, str(path))


def read_index(path: Path):
    """The index saved at ``path``. Raises: ValueError when faiss cannot read it (damaged, another format)."""
    import faiss

    try:
        return faiss.read_index(str(path))
    except RuntimeError as exc:  # faiss reports a bad file as RuntimeError with a C++ trace
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unreadable"
        raise ValueError(f"the atlas's nearest-neighbour index {path} cannot be read ({first[:200]})") from None


def search(index, query: np.ndarray, n: int) -> np.ndarray:
    """The ids of (up to) ``n`` approximate nearest rows to ``query`` float32 (D,) (unit length) in the index,
    best first; efSearch is n or 64 if more (HNSW finds no more than efSearch candidates), passed with the call, so
    that threads sharing one index do not set it for each other."""
    import faiss

    params = faiss.SearchParametersHNSW(efSearch=max(n, 64))
    _, ids = index.search(np.ascontiguousarray(query, dtype=np.float32)[None, :], n, params=params)
    return ids[0][ids[0] >= 0]

"""The server's background jobs, one per server process (UMAP's warm-up) or per model (the layer-0 vectors of the
reference corpus's vocabulary), and what the page says while they run."""

from __future__ import annotations

import streamlit as st

from app.explore.text import plural
from app.render.words import method_name
from app.serving.corpus import reference_corpus, reference_path
from app.serving.limits import working_memory
from app.serving.settings import env_flag, env_int
from app.serving.startup import LoadedModel
from app.serving.type_vectors import TypeVectors, TypeVectorStore
from app.serving.warm_up import UmapWarmUp
from elmo_core import INDEX_FILE

# What the sidebar and the map's spinner say while the warm-up runs (``UmapWarmUp``: the seconds are measured there,
# on 2 idle cores).
UMAP_LOADING = (
    "UMAP is loading on this server (its code was compiled at install by `make app`: a few seconds; "
    "where that cache is missing it compiles once, about 30 s, minutes on a busy machine). A UMAP map "
    "waits for it and is the same map as ever."
)


@st.cache_resource
def umap_warm_up() -> UmapWarmUp:
    """UMAP's import and first fits (``UmapWarmUp``), started once per server process by its first page, in a
    background thread, so that the first UMAP map does not wait for them. The maps never depend on its state; a UMAP
    map asked for meanwhile waits for it. ``ELMO_EXPLORER_UMAP_WARMUP=0``: not started (the first UMAP map loads
    UMAP itself)."""
    warm = UmapWarmUp()
    if env_flag("ELMO_EXPLORER_UMAP_WARMUP", True):
        warm.start()
    return warm


def projecting_text(points: int, method: str) -> str:
    """The map's spinner: the projection that runs and, while the server's UMAP warm-up is still running and
    the map may be a UMAP one, that the map waits for it (it never falls back to another projection)."""
    text = f"Projecting {plural(points, 'point')} with {method_name(method)}…"
    if method in ("auto", "umap") and umap_warm_up().state == "warming":
        text += " " + UMAP_LOADING
    return text


@st.cache_resource
def _type_vector_store() -> TypeVectorStore:
    return TypeVectorStore(max_models=env_int("ELMO_EXPLORER_TYPE_MODELS", 3))


def type_vectors(model: LoadedModel) -> TypeVectors | None:
    """The layer-0 vectors of the reference corpus's vocabulary (50,000 most frequent word types) for this
    model, started in a background thread on first use (minutes on a busy 2-core CPU; benchmarks/
    type_vectors.py); None without a reference corpus or with ``ELMO_EXPLORER_TYPE_VECTORS=0``."""
    corpus = reference_corpus()[0]
    if corpus is None or not env_flag("ELMO_EXPLORER_TYPE_VECTORS", True):
        return None
    words = corpus.vocabulary(env_int("ELMO_EXPLORER_TYPE_VOCAB", 50000))
    # keyed by the corpus too: a server (or a test) pointed at another corpus gets that corpus's vocabulary
    index = reference_path() / INDEX_FILE
    key = f"{model.key}|{index}|{index.stat().st_mtime}|{len(words)}"
    memory = working_memory()
    return _type_vector_store().get(key, words, lambda chunk: memory.type_vectors(model.embedder, chunk))

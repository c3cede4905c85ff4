"""The caches every session shares: parsed input texts and the activations of the sentences the models ran on."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app.explore.activations import ActivationCache
from app.explore.inputs import ParsedInput, parse_input
from app.serving.limits import working_memory
from app.serving.memory import CALL_SENTENCES
from app.serving.settings import env_int
from app.serving.startup import LoadedModel
from elmo_core import Progress


@st.cache_data(show_spinner=False, max_entries=32)
def parse_sentences(text: str) -> ParsedInput:
    """``explore.parse_input`` with the Moses tokenizer, cached per text (tokenizing 500 lines takes a while)."""
    return parse_input(text)


@st.cache_resource
def activation_cache() -> ActivationCache:
    """The server's activation cache (``ELMO_EXPLORER_CACHE_MB``, default 256 MB), shared by every session."""
    return ActivationCache(max_bytes=env_int("ELMO_EXPLORER_CACHE_MB", 256) * 2**20)


def session_budget_bytes() -> int:
    """Activations one session may keep for its sentence set (its table, plus a layer-normed copy), in bytes."""
    return env_int("ELMO_EXPLORER_SESSION_MB", 96) * 2**20


def embed(
    model: LoadedModel, token_lists, progress: Progress | None = None, progress_from: int = 1
) -> tuple[list[np.ndarray], int]:
    """Activations (L + 1, n_i, D) float32 per sentence from the shared cache, and how many sentences ran the biLM;
    only new sentences run it, a chunk of ``memory.CALL_SENTENCES`` at a time, each call within the server's working
    memory (``WorkingMemory``) (``progress`` reports on those, when there are at least ``progress_from``:
    ``ActivationCache.get_many``)."""
    memory = working_memory()
    return activation_cache().get_many(
        model.key,
        lambda chunk: memory.embed_batch(model.embedder, chunk),
        token_lists,
        chunk_size=CALL_SENTENCES,
        progress=progress,
        progress_from=progress_from,
    )

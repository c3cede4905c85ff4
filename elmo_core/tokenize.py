"""Moses-style English tokenization, shared by the corpus builder, the CLI and the app.

The 1B Word Benchmark that ELMo was trained on was tokenized with the Moses tokenizer, so we use
sacremoses (a maintained port) with the same conventions: punctuation split off, ``n't`` kept as a
separate token, no HTML escaping (``&`` stays ``&``).
"""
from __future__ import annotations

import functools

from sacremoses import MosesTokenizer


@functools.lru_cache(maxsize=1)
def _moses() -> MosesTokenizer:
    return MosesTokenizer(lang="en")


def tokenize(text: str) -> list[str]:
    """Split one sentence of raw text into tokens.

    Args:
        text: one sentence (str). Newlines are treated as spaces.

    Returns:
        list[str]: tokens, e.g. ``"Don't go."`` -> ``["Don", "'t", "go", "."]``. Empty or
        whitespace-only text gives ``[]``.

    Raises:
        TypeError: if ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize() takes one sentence as str, got {type(text).__name__}")
    text = " ".join(text.split())
    if not text:
        return []
    return _moses().tokenize(text, escape=False, aggressive_dash_splits=False)

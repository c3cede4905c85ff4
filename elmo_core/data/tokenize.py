"""Moses-style English tokenization, shared by the corpus builder, the CLI and the app.

The 1B Word Benchmark that ELMo was trained on was tokenized with the Moses tokenizer, so we use
sacremoses (a maintained port) with the same conventions: punctuation split off, clitics such as ``'s``
kept as separate tokens, no HTML escaping (``&`` stays ``&``).
"""
from __future__ import annotations

import functools
import re

from sacremoses import MosesTokenizer

# A clitic standing alone after a space, as in text that is already tokenized ("industry 's").
_DETACHED_CLITIC = re.compile(r"(?:^|\s)'(s|re|ve|ll|d|m|t)(?=\s|$)", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _moses() -> MosesTokenizer:
    return MosesTokenizer(lang="en")


def tokenize(text: str) -> list[str]:
    """Split one sentence of raw text into tokens.

    Args:
        text: one sentence (str). Newlines are treated as spaces.

    Returns:
        list[str]: tokens, e.g. ``"John's book."`` -> ``["John", "'s", "book", "."]``. Empty or
        whitespace-only text gives ``[]``. Text that is already tokenized keeps its clitics
        (``"industry 's"`` -> ``["industry", "'s"]``), where plain Moses would give ``"'", "s"``.

    Raises:
        TypeError: if ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize() takes one sentence as str, got {type(text).__name__}")
    text = " ".join(text.split())
    if not text:
        return []
    tokens = _moses().tokenize(text, escape=False, aggressive_dash_splits=False)
    detached = {m.group(1).lower() for m in _DETACHED_CLITIC.finditer(text)}
    if not detached:
        return tokens
    merged: list[str] = []
    for token in tokens:
        if merged and merged[-1] == "'" and token.lower() in detached:
            merged[-1] = "'" + token
        else:
            merged.append(token)
    return merged

"""Which words an atlas keeps and where they occur: the corpus's lines and tokens, the word key of a token, the
stop words and the threshold (docs/ATLAS.md, "Which words").

A token's *word* is the token case-folded, when it has at least one letter (``elmo_core.data.reference.is_word``,
the reference corpus's index uses the same rule): "Bank" and "bank" are one word, "," and "1961" are none. An
atlas keeps a word when it occurs at least ``min_count`` times in the corpus (default ``DEFAULT_MIN_COUNT``) and is
not a stop word (``assets/stop_words.txt``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np

from elmo_core.data.reference import is_word
from elmo_core.data.text import line_tokens, split_lines
from elmo_core.paths import STOP_WORDS

DEFAULT_MIN_COUNT = 5
"""A word needs at least this many occurrences in the corpus to be kept: fewer give no spread of uses to look at,
and rare words are mostly names and typos (in the reference corpus, 71% of the word types occur fewer than 5
times; together they are 4.6% of its word tokens)."""


def read_stop_words(path: str | Path = STOP_WORDS) -> frozenset[str]:
    """The case-folded stop words of a list: one per line, ``#`` starts a comment, blank lines skipped.
    Raises: FileNotFoundError when the list is missing."""
    words = set()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        word = line.split("#", 1)[0].strip().casefold()
        if word:
            words.add(word)
    return frozenset(words)


def word_key(token: str) -> str | None:
    """The word a token is an occurrence of: the token case-folded, or None for a token without a letter."""
    return token.casefold() if is_word(token) else None


def read_corpus(path: str | Path) -> list[list[str]]:
    """A corpus file's sentences: one per line (``\\r\\n``, ``\\r`` or ``\\n``; BOM dropped), whitespace tokens after
    ``clean_line``, as ``embed`` reads its input. Sentence i is line i (an empty line is an empty sentence).
    Raises: FileNotFoundError for a missing file; ValueError for a folder or for text that is not UTF-8."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"corpus file not found: {path}")
    if not path.is_file():
        raise ValueError(f"the corpus {path} is not a file; give a text file, one sentence per line")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{path} is not UTF-8 text (byte {err.start + 1} cannot be decoded); one whitespace-tokenized "
            "sentence per line expected"
        ) from None
    return [line_tokens(line) for line in split_lines(text)]


def choose_words(
    sentences: list[list[str]], min_count: int, stop_words: frozenset[str]
) -> tuple[list[str], np.ndarray]:
    """The words an atlas keeps, sorted (the word id is the place in this list), and their counts.
    Returns: (words, counts int64 (W,)). Raises: ValueError when min_count < 1."""
    if min_count < 1:
        raise ValueError(f"min_count must be at least 1, got {min_count}")
    counts = Counter(key for tokens in sentences for token in tokens if (key := word_key(token)) is not None)
    words = sorted(w for w, n in counts.items() if n >= min_count and w not in stop_words)
    return words, np.array([counts[w] for w in words], dtype=np.int64)


def occurrence_table(sentences: list[list[str]], words: list[str]) -> np.ndarray:
    """Every occurrence of the kept ``words``, in sentence then position order.
    Returns: int32 (N, 3): word id (index into ``words``), sentence id (line number), position (token index)."""
    ids = {w: i for i, w in enumerate(words)}
    rows = [
        (word, i, p)
        for i, tokens in enumerate(sentences)
        for p, token in enumerate(tokens)
        if (word := ids.get(token.casefold(), -1)) >= 0 and is_word(token)
    ]
    return np.array(rows, dtype=np.int32).reshape(-1, 3)


def sentences_digest(sentences: list[list[str]]) -> str:
    """sha256 of the sentences as lines of space-joined tokens: names the input of a build."""
    digest = hashlib.sha256()
    for tokens in sentences:
        digest.update(" ".join(tokens).encode("utf-8") + b"\n")
    return digest.hexdigest()

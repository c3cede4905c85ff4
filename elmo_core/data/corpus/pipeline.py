"""The corpus text pipeline, source-independent: character normalisation, paragraphs, sentence splitting,
the junk filter, duplicate removal and the train/dev/test split. Pure functions (tests/data/test_corpus_pipeline.py).
"""
from __future__ import annotations

import functools
import random
import re
import unicodedata
from collections.abc import Iterable

MIN_TOKENS = 3
MAX_TOKENS = 100
TEST_MIN = 7500  # test sentences at least: reference.txt is drawn from the test split

_CHAR_MAP = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"', "`": "'",
    "\u2013": " -- ", "\u2014": " -- ", "\u2015": " -- ",
    "\u2026": "...", "\u00a0": " ", "\u00ad": "", "\ufeff": "", "\u200b": "",
}
_CHAR_TABLE = str.maketrans(_CHAR_MAP)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_DASH_RE = re.compile(r"\s*-{2,}\s*")
_SPACE_RE = re.compile(r"[ \t\r\f\v]+")


def normalize_text(text: str) -> str:
    """Normalise characters so that every source uses one convention.

    Curly quotes become ASCII quotes, en/em dashes and ``--`` become a spaced ``--`` (Gutenberg
    texts write dashes as ``--`` glued to words, which Moses would otherwise keep inside the word),
    control characters are dropped and runs of spaces collapse. Newlines are kept, because the
    paragraph readers use blank lines.

    Args:
        text: raw text (str).

    Returns:
        str: the normalised text (NFC).

    Raises:
        TypeError: if ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"normalize_text() takes str, got {type(text).__name__}")
    text = unicodedata.normalize("NFC", text).translate(_CHAR_TABLE)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_RE.sub(" ", text)
    text = _DASH_RE.sub(" -- ", text)
    return "\n".join(_SPACE_RE.sub(" ", line).strip() for line in text.split("\n"))


def paragraphs(text: str) -> list[str]:
    """Split text at blank lines and join each block's lines with single spaces.

    Args:
        text: text whose paragraphs are separated by one or more blank lines.

    Returns:
        list[str]: non-empty paragraphs, each on one line.
    """
    out = []
    for block in re.split(r"\n\s*\n", text):
        joined = " ".join(block.split())
        if joined:
            out.append(joined)
    return out


@functools.lru_cache(maxsize=1)
def _splitter():
    try:
        from sentence_splitter import SentenceSplitter
    except ImportError as err:
        raise ImportError("the corpus build splits sentences with the package sentence-splitter: "
                          "pip install -r requirements-train.txt (or pip install 'elmo-explorer[corpus]')") from err
    return SentenceSplitter(language="en")


def split_sentences(paragraph: str) -> list[str]:
    """Split one paragraph into sentences with the Koehn and Schroeder splitter of the Moses/Europarl tools
    (PyPI ``sentence-splitter``; why this one: docs/SENTENCE_SPLITTING.md).

    A boundary is terminal punctuation, optional closing quotes or brackets, whitespace and an upper-case
    start; the library's English non-breaking prefixes (``Mr.``, ``e.g.``, initials, ...) never split.

    Args:
        paragraph: one paragraph of running text (newlines are treated as spaces).

    Returns:
        list[str]: the sentences, stripped, in order; ``[]`` for blank input.
    Raises:
        ImportError: when sentence-splitter is not installed (the message says how to install it).
    """
    text = " ".join(paragraph.split())
    if not text:
        return []
    return [s.strip() for s in _splitter().split(text) if s.strip()]


# URLs after Moses tokenisation ("http : / / www.x.com") are noise for a language model.
_URL_RE = re.compile(r"\bhttps? : / /|\bwww\.|\bftp : / /", re.IGNORECASE)


def keep_sentence(tokens: list[str], min_tokens: int = MIN_TOKENS, max_tokens: int = MAX_TOKENS) -> bool:
    """Decide whether a tokenised sentence goes into the corpus.

    Drops sentences outside ``[min_tokens, max_tokens]`` tokens and lines that are not prose:
    fewer than half of the tokens contain a letter (tables, ASCII art, numbered lists), a
    token is longer than 50 characters (the char-CNN's limit; usually a run of symbols), or a
    URL.

    Args:
        tokens: the sentence's tokens.
        min_tokens: smallest accepted length (default 3).
        max_tokens: largest accepted length (default 100).

    Returns:
        bool: True to keep.
    """
    n = len(tokens)
    if n < min_tokens or n > max_tokens:
        return False
    if any(len(t) > 50 for t in tokens):
        return False
    if _URL_RE.search(" ".join(tokens)):
        return False
    with_letter = sum(1 for t in tokens if any(c.isalpha() for c in t))
    return with_letter * 2 >= n


def dedup(lines: Iterable[str]) -> list[str]:
    """Remove exact duplicates, keeping the first occurrence and the original order.

    Args:
        lines: sentences (str), e.g. space-joined token strings.

    Returns:
        list[str]: the unique lines in first-seen order.
    """
    seen: set[str] = set()
    out = []
    for line in lines:
        if line not in seen:
            seen.add(line)
            out.append(line)
    return out


def split_dev_test(n: int, seed: int, frac: float = 0.01, min_dev: int = 5000,
                   min_test: int = 5000) -> tuple[list[int], list[int], list[int]]:
    """Shuffle ``range(n)`` with ``seed`` and cut it into train / dev / test index lists.

    dev gets ``max(min_dev, round(frac * n))`` items and test ``max(min_test, round(frac * n))``,
    but neither more than a third of the data (so tiny inputs still leave a training split).

    Args:
        n: number of items.
        seed: seed for :class:`random.Random`.
        frac: fraction of the items for dev and again for test.
        min_dev: lower bound on the dev size.
        min_test: lower bound on the test size.

    Returns:
        tuple[list[int], list[int], list[int]]: (train, dev, test) indices, disjoint, covering
        ``range(n)``.

    Raises:
        ValueError: if ``n`` is negative or ``frac`` is not in [0, 0.5).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 0 <= frac < 0.5:
        raise ValueError(f"frac must be in [0, 0.5), got {frac}")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    k_dev = min(max(min_dev, round(frac * n)), n // 3)
    k_test = min(max(min_test, round(frac * n)), n // 3)
    return order[k_dev + k_test:], order[:k_dev], order[k_dev:k_dev + k_test]

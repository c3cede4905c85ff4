"""Text normalisation at the input, shared by the ``embed`` command and the explorer (docs/INPUT_RULES.md).

What a line is: the text between two line breaks, where ``\\r\\n``, ``\\r`` and ``\\n`` are each one break
(Windows, classic Mac OS and Unix files). No other character ends a line: form feed, vertical tab, NEL (U+0085),
U+2028 and U+2029 are not line breaks here, although Python's ``str.splitlines`` treats them as such.
A final ``\\n`` ends the last line; it does not start an empty one. A UTF-8 byte-order mark at the start of
the text is dropped.

What a token is, after ``clean_line``:
* control characters (Unicode category Cc: C0/C1 controls, tab, form feed, NEL, ...) and the Unicode line
  and paragraph separators (Zl, Zp) become a space, so they separate tokens but never lines;
* format characters (category Cf: zero-width space U+200B, zero-width (non-)joiners, word joiner, BOM
  U+FEFF, soft hyphen, bidirectional overrides such as U+202E, ...) are removed, so "ba\\u200bnk" is "bank"
  and an invisible character never becomes a token of its own;
* surrogates (Cs; only present in text decoded with ``errors="surrogateescape"``) are removed.
No Unicode normalisation (NFC/NFKC) is applied: the character CNN reads UTF-8 bytes, as the reference
does. The CLI then splits the cleaned line on whitespace; the app tokenizes it with Moses
(``elmo_core.data.tokenize``).
"""
from __future__ import annotations

import re
import unicodedata

BOM = "\ufeff"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text``: ``\\r\\n``, ``\\r`` and ``\\n`` are each one line break (Windows, classic Mac OS and
    Unix files alike), nothing else is; a leading BOM dropped.

    Args:
        text: str, the decoded input.
    Returns:
        list[str], uncleaned lines (``clean_line`` each); ``"a\\nb\\n"`` -> ``["a", "b"]``,
        ``"a\\rb\\r\\nc"`` -> ``["a", "b", "c"]``, ``"a\\x0cb"`` -> ``["a\\x0cb"]``, ``""`` -> ``[]``.
    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"split_lines() takes a str, got {type(text).__name__}")
    if text.startswith(BOM):
        text = text[1:]
    if not text:
        return []
    # A file with CR-only line ends used to become one long sentence while an editor showed its lines.
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()  # the final line break ends the last line
    return lines


def _clean_char(ch: str) -> str:
    category = unicodedata.category(ch)
    if category in ("Cc", "Zl", "Zp"):
        return " "
    if category in ("Cf", "Cs"):
        return ""
    return ch


def clean_line(line: str) -> str:
    """One line with control characters turned into spaces and invisible format characters removed
    (see the module doc). Runs of whitespace are kept as they are; ``str.split()`` or the tokenizer
    handles them.

    Returns:
        str, never containing a line break, control or format character.
    """
    if line.isprintable():  # the common case: nothing to do
        return line
    return "".join(ch if ch.isprintable() else _clean_char(ch) for ch in line)


def line_tokens(line: str) -> list[str]:
    """Whitespace tokens of one line after ``clean_line`` (the ``embed`` command's tokens)."""
    return clean_line(line).split()


def clean_token(token: str) -> str:
    """A token (e.g. a word from a link) with format characters removed and controls as spaces, stripped."""
    return " ".join(clean_line(token).split())


def read_token_lines(path, limit: int = 0) -> list[list[str]]:
    """The sentences of a tokenized corpus file: one sentence per non-empty line, tokens split on whitespace.

    A sentence's index is its number among the non-empty lines (the numbering that precomputed teacher
    states use). ``limit`` > 0 stops after that many sentences. Raises FileNotFoundError for a missing file.
    """
    out: list[list[str]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            tokens = line.split()
            if tokens:
                out.append(tokens)
                if limit and len(out) >= limit:
                    break
    return out

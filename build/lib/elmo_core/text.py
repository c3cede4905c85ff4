"""Text normalisation at the input, shared by the ``embed`` command and the explorer (docs/INPUT_RULES.md).

What a line is: the text between two ``\\n`` characters (a ``\\r`` right before the ``\\n`` belongs to the
line break, so CRLF files work). No other character ends a line: form feed, vertical tab, NEL (U+0085),
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
(``elmo_core.tokenize``).
"""
from __future__ import annotations

import unicodedata

BOM = "\ufeff"


def split_lines(text: str) -> list[str]:
    """The lines of ``text``: split on ``\\n`` only, one ``\\r`` before it dropped, a leading BOM dropped.

    Args:
        text: str, the decoded input.
    Returns:
        list[str], uncleaned lines (``clean_line`` each); ``"a\\nb\\n"`` -> ``["a", "b"]``,
        ``"a\\x0cb"`` -> ``["a\\x0cb"]``, ``""`` -> ``[]``.
    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"split_lines() takes a str, got {type(text).__name__}")
    if text.startswith(BOM):
        text = text[1:]
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final newline ends the last line
    return [line[:-1] if line.endswith("\r") else line for line in lines]


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

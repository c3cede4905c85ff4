"""Text helpers below any markup: counts with their plural, concordance lines (keyword in context), and making
invisible characters and server paths visible or hidden in plain text. No Streamlit, no markup: ``app.render``
escapes what these return for the place it is shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

ELLIPSIS = "…"


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``"1 occurrence"``, ``"2 occurrences"``, ``"1,200 sentences"``."""
    word = singular if n == 1 else (plural_form or singular + "s")
    return f"{n:,} {word}"


@dataclass(frozen=True)
class Kwic:
    """One concordance line: left context, the target token as written, right context."""

    left: str
    target: str
    right: str

    def plain(self) -> str:
        """One line of plain text with the target in «»."""
        return f"{self.left} «{self.target}» {self.right}".strip()


def kwic(tokens: Sequence[str], position: int, left_chars: int = 60, right_chars: int = 60) -> Kwic:
    """The sentence around ``tokens[position]``: whole tokens up to ``left_chars`` characters on the left and
    ``right_chars`` on the right (with "…" where tokens were left out). The target is always whole.

    Raises: IndexError when ``position`` is not a token index.
    """
    if not 0 <= position < len(tokens):
        raise IndexError(f"token {position} of a sentence with {len(tokens)} tokens")
    left: list[str] = []
    used = 0
    for tok in reversed(tokens[:position]):
        if used + len(tok) + 1 > left_chars:
            # a nearest token longer than the budget keeps its end; otherwise the cut tokens become "…"
            left.insert(0, ELLIPSIS if left else ELLIPSIS + tok[-max(left_chars - 1, 1) :])
            break
        left.insert(0, tok)
        used += len(tok) + 1
    right: list[str] = []
    used = 0
    for tok in tokens[position + 1 :]:
        if used + len(tok) + 1 > right_chars:
            right.append(ELLIPSIS if right else tok[: max(right_chars - 1, 1)] + ELLIPSIS)
            break
        right.append(tok)
        used += len(tok) + 1
    return Kwic(" ".join(left), tokens[position], " ".join(right))


def visible(text: object) -> str:
    """``text`` with every character that shows nothing or not itself (the ones Python's ``str.isprintable``
    refuses: control and format characters such as a zero-width space, line separators, no-break spaces) written
    as its escape, as ``repr`` writes it (``"ba\\u200bnk"``, ``"a\\tb"``), so a message that quotes a user's
    word or label shows why it differs from one that looks the same. Plain text: ``md`` it for markdown."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


# An absolute path at the start of a word: "/home/x/data", "~/data", "C:\data" (up to a space, comma, semicolon,
# closing bracket or quote: the separators of the library's "looked in A, B, C" lists).
_SERVER_PATH = re.compile(r"""(?:(?<=^)|(?<=[\s('"=]))(?:~?/|[A-Za-z]:\\)[^\s,;)'"]*""")
_LOOKED_IN = re.compile(r"\s*\(looked in [^)]*\)")


def hide_paths(text: object) -> str:
    """A message of the library for a visitor who may not see the server's folders: the "(looked in ...)" list of a
    missing dataset's message becomes " on this server", and any other absolute path "…". Relative paths (the
    project's own ``data/probes/``) and commands stay. Plain text: ``md`` or ``md_with_code`` it for markdown."""
    return _SERVER_PATH.sub("…", _LOOKED_IN.sub(" on this server", str(text)))

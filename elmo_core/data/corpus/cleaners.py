"""Per-source markup cleaners: raw package text -> plain paragraphs. Pure; tested on literal strings
(tests/data/test_corpus_cleaners.py). Each source's format: docs/DATA_SOURCES.md.
"""
from __future__ import annotations

import re

from elmo_core.data.corpus.pipeline import paragraphs

_OSIS_DROP_RE = re.compile(
    r"<(note|title|speaker|catchWord)\b[^>]*?(?<!/)>.*?</\1>", re.DOTALL
)
_OSIS_BREAK_RE = re.compile(r"<(?:div|lg|chapter|lb|list|item)\b[^>]*>|</(?:item|list)>")
_TAG_RE = re.compile(r"<[^>]+>")


def osis_to_text(osis: str) -> str:
    """Strip OSIS markup from Sword module text, keeping the readable words.

    Footnotes, cross references, headings, speaker labels and catch-words are removed with their
    content; paragraph, stanza, chapter and list markers become blank lines (paragraph breaks);
    every other tag (``<w lemma=...>``, ``<q>``, ``<l>``...) is removed but its text kept. Verse
    numbers are attributes in OSIS, so none survive.

    Args:
        osis: OSIS/XML fragment (str).

    Returns:
        str: plain text with ``\\n\\n`` between paragraphs.
    """
    text = _OSIS_DROP_RE.sub(" ", osis)
    text = _OSIS_BREAK_RE.sub("\n\n", text)
    text = _TAG_RE.sub("", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return text


def strip_gutenberg(text: str) -> str:
    """Keep only the book between Project Gutenberg's ``*** START OF`` and ``*** END OF`` (or
    ``End of Project Gutenberg``) lines.

    Args:
        text: a Gutenberg e-text.

    Returns:
        str: the body; the whole text when the markers are absent.
    """
    start = re.search(r"^\*\*\*\s*START OF.*$", text, re.MULTILINE)
    end = re.search(r"^(?:\*\*\*\s*END OF|End of (?:the )?Project Gutenberg).*$", text, re.MULTILINE)
    body_start = start.end() if start else 0
    body_end = end.start() if end and end.start() > body_start else len(text)
    return text[body_start:body_end]


_HEADING_RE = re.compile(r"^(CHAPTER|Chapter|BOOK|VOLUME|ACT|SCENE|Scene|EPILOGUE|PROLOGUE)\b[^a-z]*\.?$")


def is_heading(paragraph: str) -> bool:
    """True for chapter / act headings and other paragraphs with no lower-case letter.

    Args:
        paragraph: one paragraph on one line.

    Returns:
        bool: True when the paragraph should be dropped as a heading.
    """
    p = paragraph.strip()
    return bool(_HEADING_RE.match(p)) or not any(c.islower() for c in p)


_STAGE_RE = re.compile(r"\[[^\]]*\]")


def is_speaker_line(line: str, prev_line: str, next_line: str) -> bool:
    """True when ``line`` is a speaker label in a play (``LUCIO.``, ``Lady Montague.``, ``Cor.``).

    A label opens a speech: it follows a blank line, is followed by a non-blank line, has at
    most four words, ends with a full stop and every word is capitalised. A one-line speech
    such as ``Farewell.`` follows its label, not a blank line, so it is kept.

    Args:
        line: the candidate line.
        prev_line: the line before it (``""`` at the start).
        next_line: the line after it (``""`` at the end).

    Returns:
        bool: True for a speaker label.
    """
    s = line.strip()
    words = s.split()
    return (
        not prev_line.strip()
        and bool(next_line.strip())
        and 0 < len(words) <= 4
        and s.endswith(".")
        and all(w[0].isupper() for w in words)
    )
# "SCENE I. An apartment in the DUKE'S Palace." and "SCENE: Vienna" have lower case, so
# is_heading misses them.
_SCENE_RE = re.compile(r"^(?:ACT|Act|SCENE|Scene)(?:\s*:|\s+(?:[IVXLC]+|\d+)\b)")


def play_to_paragraphs(text: str) -> list[str]:
    """Turn a Gutenberg play text into speeches without speaker names or stage directions.

    Everything before the first ``ACT``/``SCENE``/``PROLOGUE``/``INDUCTION`` line (title page and
    the list of persons) is skipped when such a line exists. Lines that are only a capitalised
    speaker name (``LUCIO.``) are dropped, bracketed stage directions are removed, and the verse
    lines of one speech are joined.

    Args:
        text: the play (str).

    Returns:
        list[str]: one paragraph per speech.
    """
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^\s*(ACT|SCENE|Scene|PROLOGUE|INDUCTION|Induction)\b", line):
            lines = lines[i:]
            break
    kept = []
    for i, line in enumerate(lines):
        if is_speaker_line(line, lines[i - 1] if i else "", lines[i + 1] if i + 1 < len(lines) else ""):
            kept.append("")  # a speaker name starts a new speech
            continue
        kept.append(line)
    text = _STAGE_RE.sub(" ", "\n".join(kept))
    return [p for p in paragraphs(text) if not is_heading(p) and not _SCENE_RE.match(p)]


_JARGON_HEAD_RE = re.compile(r"^:[^:]+:")
_JARGON_SENSE_RE = re.compile(
    r"^(?:\d+\.\s*)?(?:\[[^\]]*\]\s*)?(?:(?:n|v|vt|vi|adj|adv|interj|pref|suff|excl|prep|conj)\.,?\s*)*"
)


def jargon_paragraph_to_text(paragraph: str) -> str:
    """Clean one paragraph of the Jargon File's plain-text rendering.

    Headword lines (``:zorch: /zorch/, n.``) give ``""``. Sense prefixes such as
    ``5. [MIT] n.`` are removed and ``{cross-reference}`` braces are dropped.

    Args:
        paragraph: one paragraph on one line.

    Returns:
        str: the cleaned paragraph, or ``""`` to skip it.
    """
    p = paragraph.strip()
    if _JARGON_HEAD_RE.match(p):
        return ""
    p = _JARGON_SENSE_RE.sub("", p)
    return p.replace("{", "").replace("}", "").strip()


# '"Quote." -- Some Author' at the very end of a fortune.
_INLINE_ATTRIBUTION_RE = re.compile(r"""(?<=["'.!?])\s*--\s+[A-Z][^"!?\n]{0,80}$""")


# Chat logs ("<nick> text") read as noise once tokenised.
_IRC_RE = re.compile(r"^\s*<[^<>\s]+>")


def fortune_to_text(fortune: str) -> str:
    """Clean one fortune cookie: drop attribution lines (``-- Author``) and a trailing inline one.

    Fortunes that are IRC chat logs (lines starting ``<nick>``) give ``""``.

    Args:
        fortune: the text between two ``%`` lines.

    Returns:
        str: the fortune as paragraphs separated by blank lines.
    """
    lines = [ln for ln in fortune.split("\n") if not ln.strip().startswith("--")]
    if any(_IRC_RE.match(ln) for ln in lines):
        return ""
    return _INLINE_ATTRIBUTION_RE.sub("", "\n".join(lines).rstrip())

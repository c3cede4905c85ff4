"""The one WordNet 3.0 reader: synsets of the ``data.*`` files, their definitions and example sentences.

Both the corpus build (definitions go into training) and the sense probes (examples are test sentences)
read WordNet through ``parse_data_line``, so the rule that keeps probe sentences out of training cannot
drift from the rule that picks them: ``Synset.examples`` is always a subset of ``Synset.quoted``, and the
corpus drops every quoted span. File format: docs/DATA_SOURCES.md, "WordNet".
"""
from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from elmo_core.data.fetch import deb_root
from elmo_core.paths import probe_data_dir

SYSTEM_WORDNET = Path("/usr/share/wordnet")  # Debian's wordnet-base
PREPARE_HINT = ("install it with `apt-get install -y wordnet-base` (Debian/Ubuntu), or run "
                "`python -m elmo_core probe --prepare`, or point ELMO_WORDNET_DIR at a folder with "
                "data.noun, data.verb, data.adj, data.adv and the .exc files")

# Lexicographer files of WordNet 3.0 by number (the `lexnames` file; the same in every 3.0 release).
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling",
    "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object", "noun.person",
    "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
    "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition",
    "verb.communication", "verb.competition", "verb.consumption", "verb.contact", "verb.creation",
    "verb.emotion", "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
)
POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_QUOTED = re.compile(r'"[^"]*"')


@dataclass(frozen=True)
class Synset:
    """One line of a ``data.*`` file.

    offset: the synset's byte offset (its id within the POS); lexname: the coarse sense (lexicographer
    file, e.g. "noun.object"); pos: "n", "v", "a" (satellites "s" count as "a") or "r"; lemmas: lower case,
    adjective markers such as "(a)" removed, multiword lemmas joined by "_"; definitions: the
    ``;``-separated gloss parts with every quoted span removed; examples: the quoted sentences after the
    gloss's first ``;`` (the sense probes' data); quoted: every quoted span of the gloss, whitespace
    collapsed (what the corpus must never train on; a superset of ``examples``).
    """

    offset: str
    lexname: str
    pos: str
    lemmas: tuple[str, ...]
    definitions: tuple[str, ...]
    examples: tuple[str, ...]
    quoted: tuple[str, ...]


def wordnet_dirs() -> list[Path]:
    """The folders looked in when no path is given: $ELMO_WORDNET_DIR, Debian's, then the prepared data
    (``probe --prepare`` unpacks wordnet-base under ``paths.probe_data_dir()``)."""
    env = os.environ.get("ELMO_WORDNET_DIR")
    prepared = probe_data_dir()
    return [*([Path(env)] if env else []), SYSTEM_WORDNET, deb_root(prepared) / "usr/share/wordnet",
            prepared / "wordnet"]


def find_wordnet_dir(path: str | Path | None = None) -> Path:
    """The WordNet dictionary folder: ``path`` if given, else the first of ``wordnet_dirs()`` with data.noun.

    Raises: FileNotFoundError with the command that installs the data.
    """
    candidates = [Path(path)] if path else wordnet_dirs()
    for c in candidates:
        if (c / "data.noun").is_file():
            return c
    raise FileNotFoundError(f"WordNet not found (looked in {', '.join(map(str, candidates))}): {PREPARE_HINT}")


def _definitions(gloss: str) -> tuple[str, ...]:
    gloss = _QUOTED.sub(" ", gloss)
    if '"' in gloss:  # an unbalanced quote: cut at it rather than risk keeping part of an example
        gloss = gloss.split('"', 1)[0]
    parts = (" ".join(p.split()) for p in gloss.split(";"))
    return tuple(p for p in parts if p and any(c.isalpha() for c in p))


def parse_data_line(line: str) -> Synset | None:
    """One ``data.*`` line (decoded from latin-1) -> its Synset; None for a licence header line.

    Format (wndb(5)): offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt [pointer]... | gloss.
    """
    line = line.rstrip("\n")
    if not line or line.startswith(" "):
        return None
    head, sep, gloss = line.partition(" | ")
    fields = head.split()
    count = int(fields[3], 16)
    lemmas = tuple(re.sub(r"\(\w+\)$", "", fields[4 + 2 * k]).lower() for k in range(count))
    first_semicolon = gloss.find(";")
    spans = list(_QUOTED.finditer(gloss)) if sep else []
    quoted = tuple(" ".join(m.group()[1:-1].split()) for m in spans if m.group()[1:-1].strip())
    examples = tuple(m.group()[1:-1].strip() for m in spans
                     if 0 <= first_semicolon < m.start() and m.group()[1:-1].strip())
    return Synset(fields[0], LEXNAMES[int(fields[1])], "a" if fields[2] == "s" else fields[2], lemmas,
                  _definitions(gloss) if sep else (), examples, quoted)


def read_synsets(wordnet_dir: str | Path, pos: Iterable[str] = ("n", "v", "a", "r")) -> Iterator[Synset]:
    """Every synset of the given parts of speech, in file order (``data.noun`` first).

    Raises: FileNotFoundError when a data file is missing.
    """
    for p in pos:
        with open(Path(wordnet_dir) / f"data.{POS_FILES[p]}", encoding="latin-1") as f:
            for line in f:
                synset = parse_data_line(line)
                if synset is not None:
                    yield synset


def read_exceptions(wordnet_dir: str | Path) -> dict[str, dict[str, set[str]]]:
    """Irregular inflections from the ``.exc`` files: {pos: {lemma: {inflected forms}}}.

    Raises: FileNotFoundError when a .exc file is missing.
    """
    out: dict[str, dict[str, set[str]]] = {}
    for pos, name in POS_FILES.items():
        table: dict[str, set[str]] = defaultdict(set)
        with open(Path(wordnet_dir) / f"{name}.exc", encoding="latin-1") as f:
            for line in f:
                parts = line.split()
                for base in parts[1:]:
                    table[base.lower()].add(parts[0].lower())
        out[pos] = dict(table)
    return out

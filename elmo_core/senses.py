"""Sense-labelled sentences for the sense probes: WordNet example sentences and our own hand-written set.

A ``SenseItem`` is one occurrence of a target word in a tokenized sentence, with a coarse sense label.
WordNet: the examples are the double-quoted parts of a synset's gloss after the first ``;``; the coarse
sense of a synset is its lexicographer file (``noun.artifact``, ``verb.motion``, ...), the second field of
each ``data.*`` line. A lemma/POS pair is kept when its examples span two or more coarse senses.
Data: Debian ``wordnet-base`` (WordNet 3.0, latin-1 files in /usr/share/wordnet); see
../shared/reference/CORPUS_SOURCES.md, "Sense-labelled data". Nothing here downloads anything.
"""
from __future__ import annotations

import csv
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .tokenize import tokenize

REPO_ROOT = Path(__file__).resolve().parent.parent
OWN_SENTENCES = REPO_ROOT / "assets" / "probes" / "sense_sentences.tsv"
SENSE_PROBE = REPO_ROOT / "assets" / "probes" / "sense_probe.tsv"  # the fresh 34-word probe (SENSE_PROBE.md)
WORDNET_DIRS = (Path("/usr/share/wordnet"), REPO_ROOT / "data" / "probes" / "wordnet")
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
_VOWELS = set("aeiou")


@dataclass(frozen=True)
class SenseItem:
    """One target-word occurrence with its coarse sense.

    lemma: the dictionary form, lower case ("bank"); pos: "n", "v", "a", "r" or "" (own sentences);
    sense: coarse sense label ("noun.object", or ours: "river"); tokens: the tokenized sentence;
    position: index of the target in ``tokens``; source: where it came from (synset offset or TSV line).
    """

    lemma: str
    pos: str
    sense: str
    tokens: tuple[str, ...]
    position: int
    source: str = ""

    @property
    def key(self) -> str:
        """The grouping key of the probes: lemma and POS, e.g. "bank.n" ("bank" when the POS is unknown)."""
        return f"{self.lemma}.{self.pos}" if self.pos else self.lemma

    @property
    def word(self) -> str:
        return self.tokens[self.position]


# ---- word forms -----------------------------------------------------------------------------------------
def regular_forms(lemma: str, pos: str) -> set[str]:
    """The lemma and its regular English inflections for a POS ("n", "v", "a", "r"; "" = all of them).

    Over-generates a little (e.g. "bankes"); only forms that occur in a sentence ever match.
    """
    w = lemma.lower()
    forms = {w}
    if pos in ("n", "v", ""):
        forms |= {w + "s", w + "es"}
        if w.endswith("y") and len(w) > 1 and w[-2] not in _VOWELS:
            forms.add(w[:-1] + "ies")
    if pos in ("v", ""):
        stem = w[:-1] if w.endswith("e") else w
        forms |= {stem + "ed", stem + "ing", w + "d"}
        if w.endswith("y") and len(w) > 1 and w[-2] not in _VOWELS:
            forms.add(w[:-1] + "ied")
        if len(w) >= 3 and w[-1] not in _VOWELS | set("wxy") and w[-2] in _VOWELS and w[-3] not in _VOWELS:
            forms |= {w + w[-1] + "ed", w + w[-1] + "ing"}  # stop -> stopped, stopping
        if w.endswith("ie"):
            forms.add(w[:-2] + "ying")
    if pos in ("a", "r", ""):
        stem = w[:-1] if w.endswith("e") else w
        forms |= {stem + "er", stem + "est"}
        if w.endswith("y") and len(w) > 1:
            forms |= {w[:-1] + "ier", w[:-1] + "iest"}
    return forms


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


def find_target(tokens: Sequence[str], forms: set[str]) -> int | None:
    """Index of the first token whose lower-cased text is one of ``forms``, or None."""
    for i, token in enumerate(tokens):
        if token.lower() in forms:
            return i
    return None


# ---- WordNet --------------------------------------------------------------------------------------------
def find_wordnet_dir(path: str | Path | None = None) -> Path:
    """The WordNet dictionary folder: ``path``, else $ELMO_WORDNET_DIR, else /usr/share/wordnet, else
    data/probes/wordnet in the repository.

    Raises: FileNotFoundError with the command that installs the data.
    """
    candidates = [Path(path)] if path else []
    if not path and os.environ.get("ELMO_WORDNET_DIR"):
        candidates.append(Path(os.environ["ELMO_WORDNET_DIR"]))
    if not path:
        candidates += list(WORDNET_DIRS)
    for c in candidates:
        if (c / "data.noun").is_file():
            return c
    raise FileNotFoundError(f"WordNet not found (looked in {', '.join(map(str, candidates))}): {PREPARE_HINT}")


_EXAMPLE = re.compile(r'"([^"]+)"')


def parse_data_line(line: str) -> tuple[str, str, str, list[str], list[str]] | None:
    """One ``data.*`` line -> (offset, lexname, pos, lemmas, examples), or None for the licence header.

    Format (wndb(5)): offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt [pointer]... | gloss.
    Adjective markers like ``(a)``, ``(p)``, ``(ip)`` are removed from the words; satellites ("s") count as "a".
    """
    if not line or line.startswith(" "):
        return None
    head, _, gloss = line.partition(" | ")
    fields = head.split()
    offset, lexnum, ss_type = fields[0], int(fields[1]), fields[2]
    count = int(fields[3], 16)
    lemmas = [re.sub(r"\(\w+\)$", "", fields[4 + 2 * k]).lower() for k in range(count)]
    _, sep, rest = gloss.partition(";")
    examples = [m.strip() for m in _EXAMPLE.findall(rest)] if sep else []
    return offset, LEXNAMES[lexnum], "a" if ss_type == "s" else ss_type, lemmas, examples


def read_wordnet_examples(wordnet_dir: str | Path | None = None, min_senses: int = 2,
                          pos: Iterable[str] = ("n", "v", "a", "r")) -> list[SenseItem]:
    """Sense items from WordNet's example sentences, for lemma/POS pairs with examples in >= ``min_senses``
    coarse senses (lexicographer files).

    Each example is tokenized (``elmo_core.tokenize``) and credited to every single-word lemma of its synset
    that occurs in it (lemma, regular inflection or a ``.exc`` irregular form); multiword lemmas and examples
    without the lemma are skipped; a repeated (lemma, POS, sentence) is kept once.

    Returns: list of SenseItem, sorted by key then source (deterministic).
    Raises: FileNotFoundError when WordNet is missing (message says how to install it).
    Source: issue 3 item 5; Peters et al. 2018 section 5.3 uses SemCor, which no package ships, so WordNet's
    own examples stand in.
    """
    root = find_wordnet_dir(wordnet_dir)
    exceptions = read_exceptions(root)
    items: list[SenseItem] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for p in pos:
        with open(root / f"data.{POS_FILES[p]}", encoding="latin-1") as f:
            for line in f:
                parsed = parse_data_line(line)
                if parsed is None:
                    continue
                offset, lexname, ss_pos, lemmas, examples = parsed
                single = [lem for lem in dict.fromkeys(lemmas) if "_" not in lem and "-" not in lem]
                for example in examples:
                    tokens = tuple(tokenize(example))
                    for lemma in single:
                        forms = regular_forms(lemma, ss_pos) | exceptions[ss_pos].get(lemma, set())
                        position = find_target(tokens, forms)
                        if position is None or (lemma, ss_pos, tokens) in seen:
                            continue
                        seen.add((lemma, ss_pos, tokens))
                        items.append(SenseItem(lemma, ss_pos, lexname, tokens, position, f"{ss_pos}:{offset}"))
    return filter_polysemous(items, min_senses)


def filter_polysemous(items: Sequence[SenseItem], min_senses: int = 2) -> list[SenseItem]:
    """Keep the items whose key has >= ``min_senses`` distinct senses; sorted by (key, source, tokens)."""
    senses: dict[str, set[str]] = defaultdict(set)
    for it in items:
        senses[it.key].add(it.sense)
    kept = [it for it in items if len(senses[it.key]) >= min_senses]
    return sorted(kept, key=lambda it: (it.key, it.source, it.tokens))


# ---- our own sentences ------------------------------------------------------------------------------------
def read_sense_sentences(path: str | Path = OWN_SENTENCES) -> list[SenseItem]:
    """Our hand-written set: a TSV with a header ``word<TAB>sense<TAB>sentence``.

    The target is the first token that is the word or a regular inflection of it (any POS).
    Returns: list of SenseItem (pos ""), in file order.
    Raises: FileNotFoundError; ValueError naming the line when a row is malformed or lacks its word.
    """
    items = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t")
        header = next(reader, None)
        if header is None or [h.strip().lower() for h in header[:3]] != ["word", "sense", "sentence"]:
            raise ValueError(f"{path}: the first line must be the header word<TAB>sense<TAB>sentence")
        for lineno, row in enumerate(reader, start=2):
            if not row or not "".join(row).strip():
                continue
            if len(row) != 3:
                raise ValueError(f"{path}:{lineno}: expected 3 tab-separated columns, got {len(row)}")
            word, sense, sentence = (c.strip() for c in row)
            tokens = tuple(tokenize(sentence))
            position = find_target(tokens, regular_forms(word, ""))
            if position is None:
                raise ValueError(f"{path}:{lineno}: the word {word!r} does not occur in {sentence!r}")
            items.append(SenseItem(word.lower(), "", sense, tokens, position, f"line {lineno}"))
    return items


def group_by_key(items: Sequence[SenseItem]) -> dict[str, list[int]]:
    """{key: indices into items}, keys in first-seen order."""
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(it.key, []).append(i)
    return groups

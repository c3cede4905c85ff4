"""The explorer's reference corpus: sentences the app embeds on demand for one word at a time, a word ->
sentence index over them, and the corpus vocabulary that layer-0 neighbours are searched in. The only module
that knows the files' layout (``assets/reference/``; data note: ``assets/reference/README.md``).

Files (written by ``write_reference``, built by ``scripts/build_reference_corpus.py``):

* ``sentences.txt.xz``: one Moses-tokenized sentence per line (tokens separated by single spaces), xz.
* ``index.npz`` (``numpy.savez_compressed``, no pickled objects; read with ``allow_pickle=False``):
  ``format`` str (``FORMAT``); ``words`` str (W,) the case-folded word tokens, sorted; ``offsets`` int64
  (W + 1,) and ``postings`` int32 (offsets[-1],): the ids (line numbers, from 0) of the sentences that hold
  ``words[i]`` are ``postings[offsets[i]:offsets[i + 1]]``, ascending; ``vocab`` str (V,) the corpus's most
  frequent word types, case kept (layer 0 is case-sensitive), most frequent first; ``vocab_counts`` int64 (V,)
  their counts in the built training corpus; ``meta`` str, a JSON object with the build's settings and counts.

A "word token" is a token with at least one letter (``is_word``); punctuation and numbers are not indexed.
"""
from __future__ import annotations

import collections
import json
import lzma
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from elmo_core.model.strict_json import loads_strict
from elmo_core.paths import REFERENCE_CORPUS

FORMAT = "elmo-explorer-reference/1"
REFERENCE_DIR = REFERENCE_CORPUS
SENTENCES_FILE = "sentences.txt.xz"
INDEX_FILE = "index.npz"
OFFENSIVE_TERMS = REFERENCE_DIR / "offensive_terms.txt"


def is_word(token: str) -> bool:
    """True for a token with at least one letter ("bank", "U.S.", "'s"); False for "," or "1961"."""
    return any(ch.isalpha() for ch in token)


# ---- offensive terms ----------------------------------------------------------------------------------------
def read_terms(path: str | Path = OFFENSIVE_TERMS) -> frozenset[str]:
    """The case-folded terms of a word list: one term per line, ``#`` starts a comment, blank lines skipped.

    Raises: FileNotFoundError when the list is missing; ValueError for a term with a space (the filter
    matches single tokens).
    """
    terms = set()
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        term = line.split("#", 1)[0].strip().casefold()
        if not term:
            continue
        if " " in term:
            raise ValueError(f"{path}:{number}: {term!r} has a space; the list holds single tokens")
        terms.add(term)
    return frozenset(terms)


def offensive_tokens(tokens: Sequence[str], terms: frozenset[str]) -> list[str]:
    """The tokens of a sentence that are on the list: matched case-insensitively as whole tokens, and also
    each part of a hyphenated token ("half-breed" is caught by "half-breed", "x-nigger" by its part).

    Returns: the offending tokens in sentence order (empty: the sentence is clean).
    """
    found = []
    for token in tokens:
        t = token.casefold()
        if t in terms or ("-" in t and any(part in terms for part in t.split("-"))):
            found.append(token)
    return found


# ---- reading --------------------------------------------------------------------------------------------------
@dataclass
class ReferenceCorpus:
    """The shipped reference corpus in memory (about 10 MB for 60,000 sentences).

    sentences: str (one space-joined tokenized sentence each); words, offsets, postings, vocab, vocab_counts:
    as in the module docstring; meta: the build's settings and counts.
    """

    sentences: list[str]
    words: np.ndarray
    offsets: np.ndarray
    postings: np.ndarray
    vocab: np.ndarray
    vocab_counts: np.ndarray
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self._row = {w: i for i, w in enumerate(self.words.tolist())}
        self._clean_vocab: list[str] | None = None  # ``vocabulary`` with the shipped list, made once

    @classmethod
    def load(cls, directory: str | Path = REFERENCE_DIR) -> "ReferenceCorpus":
        """Read ``sentences.txt.xz`` and ``index.npz`` from ``directory``.

        Raises:
            FileNotFoundError: a file is missing.
            ValueError: the files are not this format, or the index does not fit the sentences.
        """
        directory = Path(directory)
        for name in (SENTENCES_FILE, INDEX_FILE):
            if not (directory / name).is_file():
                raise FileNotFoundError(f"no {name} in {directory}")
        try:
            with lzma.open(directory / SENTENCES_FILE, "rt", encoding="utf-8") as f:
                sentences = f.read().splitlines()
            with np.load(directory / INDEX_FILE, allow_pickle=False) as z:
                arrays = {k: z[k] for k in ("format", "words", "offsets", "postings", "vocab", "vocab_counts", "meta")}
        except (OSError, EOFError, lzma.LZMAError, KeyError, ValueError) as err:
            raise ValueError(f"{directory} is not a readable reference corpus: {err}") from None
        if str(arrays["format"]) != FORMAT:
            raise ValueError(f"{directory / INDEX_FILE}: format {str(arrays['format'])!r}, expected {FORMAT!r}")
        offsets, postings = arrays["offsets"].astype(np.int64), arrays["postings"]
        if (len(offsets) != len(arrays["words"]) + 1 or offsets[0] != 0 or offsets[-1] != len(postings)
                or np.any(np.diff(offsets) < 0) or (len(postings) and not 0 <= postings.min() <= postings.max() < len(sentences))):
            raise ValueError(f"{directory / INDEX_FILE} does not fit the {len(sentences)} sentences")
        return cls(sentences, arrays["words"], offsets, postings, arrays["vocab"], arrays["vocab_counts"],
                   loads_strict(str(arrays["meta"]), f"{directory / INDEX_FILE}: meta", constants=True))

    def __len__(self) -> int:
        return len(self.sentences)

    def tokens(self, i: int) -> tuple[str, ...]:
        """Sentence ``i`` as tokens (split on spaces: it is stored tokenized, and tokenizing it again would
        break tokens such as "'s")."""
        return tuple(self.sentences[i].split(" "))

    def sentence_ids(self, forms: Iterable[str]) -> np.ndarray:
        """int64 (m,) ascending ids of the sentences holding any of ``forms`` (case-folded word tokens)."""
        parts = [self.postings[self.offsets[r]:self.offsets[r + 1]]
                 for r in (self._row.get(f.casefold()) for f in forms) if r is not None]
        return np.unique(np.concatenate(parts)).astype(np.int64) if parts else np.zeros(0, np.int64)

    def count(self, word: str) -> int:
        """How many sentences hold ``word`` (case-folded)."""
        r = self._row.get(word.casefold())
        return 0 if r is None else int(self.offsets[r + 1] - self.offsets[r])

    def contexts(self, forms: Iterable[str], limit: int) -> tuple[list[tuple[str, ...]], int]:
        """Up to ``limit`` sentences holding any of ``forms``, spread evenly over all that do, and how many do.

        The sentences are stored in a seeded random order, so an even spread over ids is a fair sample.
        Returns: ([tokens per sentence], total); ([], 0) when none holds the word.
        """
        ids = self.sentence_ids(forms)
        total = len(ids)
        if limit >= 0 and total > limit:
            ids = ids[np.linspace(0, total - 1, limit).round().astype(int)] if limit else ids[:0]
        return [self.tokens(int(i)) for i in ids], total

    def vocabulary(self, n: int | None = None, terms: frozenset[str] | None = None) -> list[str]:
        """The ``n`` (default: all) most frequent word types of the corpus, most frequent first, without the
        offensive terms (``terms``, default the shipped list): the vocabulary comes from the whole training
        split, which the sentence filter never saw, and its words are shown as layer-0 neighbours."""
        if terms is None:
            # The explorer asks on every script run (slider moves too): filtering the 50,000 types took 76 ms
            # on a busy 2-core machine.
            if self._clean_vocab is None:
                self._clean_vocab = self._clean(read_terms())
            words = self._clean_vocab
        else:
            words = self._clean(terms)
        return words[:n] if n is not None else list(words)

    def _clean(self, terms: frozenset[str]) -> list[str]:
        return [w for w in self.vocab.tolist() if not offensive_tokens([w], terms)]


# ---- building -------------------------------------------------------------------------------------------------
def word_counts(lines: Iterable[str], fold: bool) -> collections.Counter:
    """Counts of the word tokens (``is_word``) of space-tokenized lines; ``fold``: case-folded."""
    counts: collections.Counter = collections.Counter()
    for line in lines:
        counts.update(t.casefold() if fold else t for t in line.split() if is_word(t))
    return counts


def select_sentences(candidates: Sequence[str], tiers: Sequence[int], needs: dict[str, int], size: int,
                     seed: int = 0) -> list[int]:
    """Pick sentences so that every word in ``needs`` gets its number of sentences where the candidates allow,
    then fill up to ``size``; lower tiers first (tier 0: the preferred text).

    The candidates are shuffled with ``seed`` within each tier. A first pass takes a sentence when it holds a
    word still short of its need (counted case-folded, once per sentence); a second pass fills with the
    sentences left, in the same order.

    Args:
        candidates: space-tokenized sentences; tiers: int per candidate; needs: {case-folded word: sentences}.
        size: the number of sentences wanted in all (more are kept when the needs take more).
    Returns: indices into ``candidates``, ascending within each tier's shuffled order as picked.
    """
    rng = random.Random(seed)
    order = list(range(len(candidates)))
    rng.shuffle(order)
    order.sort(key=lambda i: tiers[i])  # stable: the shuffle holds within a tier
    need = {w: n for w, n in needs.items() if n > 0}
    picked: list[int] = []
    taken = bytearray(len(candidates))
    for i in order:
        if not need:
            break
        words = {t.casefold() for t in candidates[i].split() if is_word(t)}
        hit = [w for w in words if w in need]
        if not hit:
            continue
        picked.append(i)
        taken[i] = 1
        for w in hit:
            need[w] -= 1
            if need[w] == 0:
                del need[w]
    for i in order:
        if len(picked) >= size:
            break
        if not taken[i]:
            picked.append(i)
            taken[i] = 1
    return picked


def build_index(sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(words str (W,), offsets int64 (W + 1,), postings int32) over the case-folded word tokens."""
    lists: dict[str, list[int]] = collections.defaultdict(list)
    for i, line in enumerate(sentences):
        for w in sorted({t.casefold() for t in line.split() if is_word(t)}):
            lists[w].append(i)
    words = sorted(lists)
    offsets = np.zeros(len(words) + 1, np.int64)
    offsets[1:] = np.cumsum([len(lists[w]) for w in words])
    postings = np.fromiter((i for w in words for i in lists[w]), np.int32, count=int(offsets[-1]))
    return np.array(words, dtype=str), offsets, postings


def write_reference(directory: str | Path, sentences: Sequence[str], vocab: Sequence[tuple[str, int]],
                    meta: dict) -> None:
    """Write ``sentences.txt.xz`` and ``index.npz`` (the module docstring's layout) into ``directory``.

    Args:
        sentences: space-tokenized sentences, in the order to store (ids are line numbers).
        vocab: [(word type, count)], most frequent first; meta: JSON-serialisable settings and counts.
    Raises: ValueError for a sentence with a newline or an empty one.
    """
    if any("\n" in s or not s.strip() for s in sentences):
        raise ValueError("a reference sentence is empty or holds a newline")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # preset 9 + extreme: the file ships in the repository, so size beats build time
    with lzma.open(directory / SENTENCES_FILE, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as f:
        f.write("".join(s + "\n" for s in sentences))
    words, offsets, postings = build_index(sentences)
    np.savez_compressed(directory / INDEX_FILE, format=np.array(FORMAT), words=words, offsets=offsets,
                        postings=postings, vocab=np.array([w for w, _ in vocab], dtype=str),
                        vocab_counts=np.array([c for _, c in vocab], dtype=np.int64),
                        meta=np.array(json.dumps(meta, sort_keys=True)))

"""Sense-labelled sentences for the sense probes: WordNet example sentences and our own hand-written set.

A ``SenseItem`` is one occurrence of a target word in a tokenized sentence, with a coarse sense label;
``subsample_keys`` picks whole words of a set and ``embed_items`` gives the vectors both sense probes use.
WordNet (read by ``elmo_core.data.wordnet``): the examples of a synset, credited to its lemmas; the coarse sense of
a synset is its lexicographer file (``noun.artifact``, ``verb.motion``, ...). A lemma/POS pair is kept when
its examples span two or more coarse senses. Data: docs/DATA_SOURCES.md. Nothing here downloads anything.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from elmo_core.model.chunked import Progress, embed_with_progress
from elmo_core.paths import OWN_SENTENCES
from elmo_core.data.tokenize import tokenize
from elmo_core.data.wordforms import find_form, word_forms
from elmo_core.data.wordnet import find_wordnet_dir, read_exceptions, read_synsets


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


# ---- WordNet --------------------------------------------------------------------------------------------
def read_wordnet_examples(
    wordnet_dir: str | Path | None = None, min_senses: int = 2, pos: Iterable[str] = ("n", "v", "a", "r")
) -> list[SenseItem]:
    """Sense items from WordNet's example sentences, for lemma/POS pairs with examples in >= ``min_senses``
    coarse senses (lexicographer files).

    Each example is tokenized (``elmo_core.data.tokenize``) and credited to every single-word lemma of its synset
    that occurs in it (``elmo_core.data.wordforms``: the lemma, a regular inflection for the synset's POS or a
    ``.exc`` irregular form); multiword lemmas and examples
    without the lemma are skipped; a repeated (lemma, POS, sentence) is kept once.

    Returns: list of SenseItem, sorted by key then source (deterministic).
    Raises: FileNotFoundError when WordNet is missing (message says how to install it).
    Source: Peters et al. 2018 section 5.3 uses SemCor, which no package ships, so WordNet's
    own examples stand in.
    """
    root = find_wordnet_dir(wordnet_dir)
    exceptions = read_exceptions(root)
    items: list[SenseItem] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for synset in read_synsets(root, pos):
        single = [lem for lem in dict.fromkeys(synset.lemmas) if "_" not in lem and "-" not in lem]
        for example in synset.examples:
            tokens = tuple(tokenize(example))
            for lemma in single:
                forms = word_forms(lemma, synset.pos, irregular=exceptions[synset.pos].get(lemma, ()))
                position = find_form(tokens, forms)
                if position is None or (lemma, synset.pos, tokens) in seen:
                    continue
                seen.add((lemma, synset.pos, tokens))
                items.append(
                    SenseItem(lemma, synset.pos, synset.lexname, tokens, position, f"{synset.pos}:{synset.offset}")
                )
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

    The target is the first token that counts as the word (``elmo_core.data.wordforms.word_forms`` with an
    unknown POS: the word or a regular noun or verb inflection of it).
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
            position = find_form(tokens, word_forms(word))
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


def subsample_note(kept: int, total: int, unit: str, seed: int) -> str:
    """How much of a probe's data ``subsample_keys`` kept, for result files: "N of M items (whole UNIT, seed S)"
    or "all M items"."""
    return f"{kept} of {total} items (whole {unit}, seed {seed})" if kept < total else f"all {total} items"


def subsample_keys(items: Sequence[SenseItem], max_items: int, seed: int = 0) -> list[SenseItem]:
    """Whole lemma groups, picked in a seeded random order until ``max_items`` items (0 = keep all)."""
    if not max_items or len(items) <= max_items:
        return list(items)
    groups = group_by_key(items)
    keys = list(groups)
    np.random.default_rng(seed).shuffle(keys)
    picked: list[int] = []
    for k in keys:
        if len(picked) + len(groups[k]) > max_items and picked:
            continue
        picked += groups[k]
        if len(picked) >= max_items:
            break
    return [items[i] for i in sorted(picked)]


def embed_items(
    embedder, items: Sequence[SenseItem], batch_size: int = 64, progress: Progress | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The target vectors and bag-of-context vectors of sense items.

    Each distinct sentence runs through the biLM once (stateless), in chunks so ``progress(fraction, text)``
    can report.

    Returns:
        targets: float32 (N, L + 1, D), every layer at each item's target position;
        context: float32 (N, D), mean layer-0 vector of the sentence's other tokens (zeros if there are none).
    """
    sentences = list(dict.fromkeys(it.tokens for it in items))
    index = {s: i for i, s in enumerate(sentences)}
    acts = embed_with_progress(embedder, sentences, batch_size, max(batch_size * 8, 256), progress)
    n, layers, dim = len(items), embedder.num_layers, embedder.dim
    targets = np.zeros((n, layers, dim), dtype=np.float32)
    context = np.zeros((n, dim), dtype=np.float32)
    for k, it in enumerate(items):
        a = acts[index[it.tokens]]  # (L + 1, n_tokens, D)
        targets[k] = a[:, it.position]
        others = np.delete(a[0], it.position, axis=0)
        if len(others):
            context[k] = others.mean(axis=0)
    return targets, context

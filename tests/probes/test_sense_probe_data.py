"""The sense probe of issue 9 item 4 (assets/probes/sense_probe.tsv): its data. The probe that scores it is
tested in test_probes_loo_sense.py, its metrics in test_metrics.py."""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from elmo_core.data.senses import read_sense_sentences
from elmo_core.data.wordforms import word_forms
from elmo_core.paths import OWN_SENTENCES

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "assets" / "probes" / "sense_probe.tsv"
CONTEXT = REPO / "assets" / "probes" / "sense_probe_context.tsv"
TRAIN = REPO / "data" / "corpus" / "train.txt"


@pytest.fixture(scope="module")
def items():
    return read_sense_sentences(PROBE)  # raises on a malformed row or a sentence without its word


@pytest.fixture(scope="module")
def rows():
    with open(PROBE, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_every_row_parses(items, rows):
    assert len(items) == len(rows) >= 32 * 2 * 8
    assert all(it.sense == it.sense.lower() and it.sense.isalpha() for it in items)


def test_words_senses_and_sentences_per_sense(items):
    senses = defaultdict(Counter)
    for it in items:
        senses[it.lemma][it.sense] += 1
    assert len(senses) >= 32
    for word, counts in senses.items():
        assert 2 <= len(counts) <= 3, (word, counts)
        assert min(counts.values()) >= 8, (word, counts)


def test_no_word_of_the_app_examples_or_the_older_probe(items):
    from app.explore.examples import EXAMPLE_SETS

    taken = {s.word for s in EXAMPLE_SETS.values()} | {it.lemma for it in read_sense_sentences(OWN_SENTENCES)}
    assert not {it.lemma for it in items} & taken


def test_sentences_are_unique_and_hold_their_word_once(items, rows):
    normal = [" ".join(it.tokens).lower() for it in items]
    assert not [s for s, c in Counter(normal).items() if c > 1]
    for it, row in zip(items, rows):
        forms = word_forms(it.lemma)
        assert sum(t.lower() in forms for t in it.tokens) == 1, row["sentence"]
        assert 6 <= len(row["sentence"].split()) <= 25, row["sentence"]


def test_context_annotation_matches_and_is_balanced(items):
    with open(CONTEXT, encoding="utf-8", newline="") as f:
        ann = list(csv.DictReader(f, delimiter="\t"))
    assert [(int(a["line"]), a["word"], a["sense"]) for a in ann] == [
        (int(it.source.split()[1]), it.lemma, it.sense) for it in items
    ]
    per_sense = defaultdict(Counter)
    for a in ann:
        assert a["context"] in ("before", "after", "both")
        per_sense[a["word"], a["sense"]][a["context"]] += 1
    for key, counts in per_sense.items():
        assert min(counts[c] for c in ("before", "after", "both")) >= 2, (key, counts)


def test_no_probe_sentence_is_in_the_training_corpus(items):
    if not TRAIN.is_file():
        pytest.skip(f"no training corpus at {TRAIN} (build it with `python -m elmo_core corpus build data/corpus`)")
    probe = {" ".join(it.tokens).lower() for it in items}
    with open(TRAIN, encoding="utf-8") as f:
        found = [line.strip() for line in f if line.strip().lower() in probe]
    assert not found


# ---- the held-out sets: each chose between trained models once, never steered training -----------------------------
HOLDOUT = REPO / "assets" / "probes" / "holdout_sentences.tsv"
HOLDOUT2 = REPO / "assets" / "probes" / "holdout2_sentences.tsv"
HELD_OUT_SETS = [(HOLDOUT, 20, []), (HOLDOUT2, 24, [HOLDOUT])]  # (file, words, earlier held-out sets)


@pytest.mark.parametrize("path, n_words, earlier", HELD_OUT_SETS, ids=["holdout", "holdout2"])
def test_holdout_shape_words_and_placement(items, path, n_words, earlier):
    from app.explore.examples import EXAMPLE_SETS

    held = read_sense_sentences(path)
    per_sense = defaultdict(list)
    for it in held:
        per_sense[it.lemma, it.sense].append(it)
    assert len({w for w, _ in per_sense}) == n_words and len(per_sense) == 2 * n_words
    assert all(len(group) == 6 for group in per_sense.values())
    taken = (
        {s.word for s in EXAMPLE_SETS.values()}
        | {it.lemma for it in read_sense_sentences(OWN_SENTENCES)}
        | {it.lemma for it in items}
        | {it.lemma for e in earlier for it in read_sense_sentences(e)}
    )
    assert not {it.lemma for it in held} & taken
    normal = [" ".join(it.tokens).lower() for it in held]
    assert len(set(normal)) == len(normal)
    for it in held:
        forms = word_forms(it.lemma)
        assert sum(t.lower() in forms for t in it.tokens) == 1, it.tokens
        assert it.tokens[0].lower() not in forms, it.tokens  # never the first word: the "before" rows need context


def test_no_held_out_sentence_is_in_the_training_corpus():
    if not TRAIN.is_file():
        pytest.skip(f"no training corpus at {TRAIN} (build it with `python -m elmo_core corpus build data/corpus`)")
    held = {" ".join(it.tokens).lower() for path, _, _ in HELD_OUT_SETS for it in read_sense_sentences(path)}
    assert len(held) == 240 + 288
    with open(TRAIN, encoding="utf-8") as f:
        assert not [line.strip() for line in f if line.strip().lower() in held]

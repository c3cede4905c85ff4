"""The sense probe of issue 9 item 4 (assets/probes/sense_probe.tsv): its data, and the silhouette of
elmo_core.evaluate.loo_sense_probe on synthetic vectors whose answer is known."""
from __future__ import annotations

import csv
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from elmo_core.evaluate import loo_sense_probe
from elmo_core.metrics import mean_over_groups, silhouette_by_sense
from elmo_core.paths import OWN_SENTENCES
from elmo_core.senses import read_sense_sentences
from elmo_core.wordforms import word_forms

REPO = Path(__file__).resolve().parent.parent
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
    from app.examples import EXAMPLE_SETS

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
    assert [(int(a["line"]), a["word"], a["sense"]) for a in ann] == \
        [(int(it.source.split()[1]), it.lemma, it.sense) for it in items]
    per_sense = defaultdict(Counter)
    for a in ann:
        assert a["context"] in ("before", "after", "both")
        per_sense[a["word"], a["sense"]][a["context"]] += 1
    for key, counts in per_sense.items():
        assert min(counts[c] for c in ("before", "after", "both")) >= 2, (key, counts)


def test_no_probe_sentence_is_in_the_training_corpus(items):
    if not TRAIN.is_file():
        pytest.skip(f"no training corpus at {TRAIN} (build it with `python -m elmo_core.corpus build data/corpus`)")
    probe = {" ".join(it.tokens).lower() for it in items}
    with open(TRAIN, encoding="utf-8") as f:
        found = [line.strip() for line in f if line.strip().lower() in probe]
    assert not found


# ---- silhouette ---------------------------------------------------------------------------------------------
def test_silhouette_by_sense_on_known_cases():
    rng = np.random.default_rng(0)
    centres = np.eye(8)[:2] * 10
    labels = ["a"] * 10 + ["b"] * 10
    separated = np.repeat(centres, 10, axis=0) + rng.normal(scale=0.1, size=(20, 8))
    assert silhouette_by_sense(separated, labels) > 0.9
    assert abs(silhouette_by_sense(rng.normal(size=(200, 64)), ["a", "b"] * 100)) < 0.05
    assert silhouette_by_sense(np.ones((4, 3)), ["a", "a", "b", "b"]) == 0.0  # identical vectors
    assert np.isnan(silhouette_by_sense(separated, ["a"] * 20))  # one sense: undefined
    assert np.isnan(silhouette_by_sense(separated[:2], ["a", "b"]))  # every item its own sense
    assert mean_over_groups([0.5, float("nan"), 0.1]) == pytest.approx(0.3)
    assert mean_over_groups([float("nan")]) is None


class SyntheticEmbedder:
    """Three layers for sentences "<word> <sense> <k>": layer 0 the same vector for every token (context-free,
    like a char CNN on one word form), layer 1 a tight cluster per (word, sense), layer 2 random."""

    num_layers, dim = 3, 16

    def __init__(self):
        self.rng = np.random.default_rng(1)
        self.centres: dict[tuple[str, str], np.ndarray] = {}

    def embed_batch(self, sentences, batch_size=64):
        out = []
        for s in sentences:
            a = np.ones((3, len(s), self.dim), dtype=np.float32)
            centre = self.centres.setdefault((s[0], s[1]), self.rng.normal(size=self.dim) * 5)
            a[1, 0] = centre + self.rng.normal(scale=0.05, size=self.dim)
            a[2] = self.rng.normal(size=(len(s), self.dim))
            out.append(a)
        return out


def test_sense_probe_silhouette_keys_on_synthetic_vectors():
    from elmo_core.senses import SenseItem

    items = [SenseItem(w, "", sense, (w, sense, str(k)), 0) for w in ("bass", "pen", "mole", "organ")
             for sense in ("x", "y") for k in range(12)]
    r = loo_sense_probe(SyntheticEmbedder(), items)
    assert len(r["silhouette"]) == 3
    assert r["silhouette"][0] == 0.0  # identical vectors: no separation
    assert r["silhouette"][1] > 0.9 and r["layers"][1] == 1.0  # senses perfectly separated
    assert abs(r["silhouette"][2]) < 0.1 and r["layers"][2] < 0.75  # random vectors
    assert -1.0 <= r["silhouette_mix_equal"] <= 1.0 and -1.0 <= r["silhouette_bag_of_context"] <= 1.0
    for key in ("layers", "mix_equal", "bag_of_context", "mfs", "chance_random_neighbour", "chance_uniform"):
        assert key in r  # the older keys stay


def test_sense_probe_silhouette_on_the_tiny_model(tiny_embedder, items):
    some = [it for it in items if it.lemma in ("bass", "pen", "mole")]
    r = loo_sense_probe(tiny_embedder, some)
    assert r["n_keys"] == 3 and len(r["silhouette"]) == tiny_embedder.num_layers
    assert all(-1.0 <= s <= 1.0 for s in [*r["silhouette"], r["silhouette_mix_equal"], r["silhouette_bag_of_context"]])

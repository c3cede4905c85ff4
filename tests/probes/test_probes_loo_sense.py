"""elmo_core.probes.loo_sense (the leave-one-out sense probe, task "loo_sense"): on synthetic vectors whose
answer is known, on the tiny fixture biLM, as a task of the table, and in the layout of the `evaluate` report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from elmo_core import probes
from elmo_core.data.senses import SenseItem, read_sense_sentences, read_wordnet_examples
from elmo_core.paths import SENSE_PROBE
from elmo_core.probes.loo_sense import LooSenseResult, loo_sense_probe, loo_sense_table
from tests.conftest import PROBE_DATA, check_task_result

ROOT = Path(__file__).resolve().parents[2]
WORDNET = PROBE_DATA / "wordnet"
# the keys of one data set in the `evaluate` report, as assets/*/evaluation.json hold them
EVALUATION_KEYS = [
    "dataset",
    "n_items",
    "n_keys",
    "n_sentences",
    "layers",
    "mix_equal",
    "bag_of_context",
    "mfs",
    "chance_random_neighbour",
    "chance_uniform",
    "silhouette",
    "silhouette_mix_equal",
    "silhouette_bag_of_context",
    "seconds",
]


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


def synthetic_items() -> list[SenseItem]:
    return [
        SenseItem(w, "", sense, (w, sense, str(k)), 0)
        for w in ("bass", "pen", "mole", "organ")
        for sense in ("x", "y")
        for k in range(12)
    ]


def test_known_answers_on_synthetic_vectors():
    r = loo_sense_probe(SyntheticEmbedder(), synthetic_items(), dataset="synthetic")
    assert isinstance(r, LooSenseResult) and r.data.source == "synthetic"
    assert r.layers[0] == pytest.approx(11 / 23)  # identical vectors: every other occurrence ties, 11 of 23 agree
    assert r.silhouette[0] == 0.0  # identical vectors: no separation
    assert r.silhouette[1] > 0.9 and r.layers[1] == 1.0  # senses perfectly separated
    assert abs(r.silhouette[2]) < 0.1 and r.layers[2] < 0.75  # random vectors
    assert r.baselines["chance"] == pytest.approx(11 / 23) and r.chance_uniform == 0.5
    assert r.mfs == 0.0  # balanced senses: the majority of the other 23 is always the other sense
    assert -1.0 <= r.silhouette_mix_equal <= 1.0 and -1.0 <= r.silhouette_bag_of_context <= 1.0
    assert r.data.counts == {"n_items": 96, "n_keys": 4, "n_sentences": 96} and r.data.n_test == 96


def test_on_the_tiny_model(tiny_embedder):
    items = read_wordnet_examples(WORDNET)
    r = loo_sense_probe(tiny_embedder, items, dataset="fixture")
    check_task_result(r, tiny_embedder.num_layers, "loo_sense")
    assert r.data.counts["n_items"] == len(items) and r.data.counts["n_keys"] == 6 and r.data.source == "fixture"
    assert all(s is None or -1.0 <= s <= 1.0 for s in [*r.silhouette, r.silhouette_mix_equal])
    own = loo_sense_probe(tiny_embedder, read_sense_sentences(), batch_size=16)
    assert own.data.counts["n_keys"] >= 15


def test_needs_a_word_with_two_occurrences(tiny_embedder):
    single = [SenseItem("bank", "n", "noun.object", ("the", "bank"), 1)]
    with pytest.raises(ValueError, match="two or more"):
        loo_sense_probe(tiny_embedder, single)


def test_a_task_of_the_table_on_the_shipped_probe(tiny_embedder):
    entry = probes.TASKS["loo_sense"]
    assert entry.paper is None and entry.result_type is LooSenseResult
    assert entry.find_data({"wordnet": None, "brown": None}) == SENSE_PROBE  # ships: no --prepare
    seen = []
    r = probes.run_probe(tiny_embedder, "loo_sense", "quick", progress=lambda f, text: seen.append(f))
    check_task_result(r, tiny_embedder.num_layers, "loo_sense")
    assert r.data.n_test == len(read_sense_sentences(SENSE_PROBE)) and r.data.subsample.startswith("all ")
    assert seen and seen[-1] == 1.0
    part = probes.run_probe(tiny_embedder, "loo_sense", max_items=100, seed=2)
    assert part.data.n_test <= 100 and "of 750 items (whole words, seed 2)" in part.data.subsample


def test_the_evaluate_layout_and_json_round_trip(tiny_embedder):
    r = loo_sense_probe(tiny_embedder, read_sense_sentences(), dataset="own sentences")
    row = r.to_evaluation_json()
    assert list(row) == EVALUATION_KEYS and row["dataset"] == "own sentences"
    assert row["layers"] == r.layers and row["bag_of_context"] == r.baselines["layer-0 bag of context"]
    assert row["chance_random_neighbour"] == r.baselines["chance"] and row["n_items"] == r.data.n_test
    assert LooSenseResult.from_json(json.loads(json.dumps(r.to_json()))) == r
    table = loo_sense_table([r])
    assert "| own sentences |" in table and f"{100 * r.layers[2]:.1f}" in table


@pytest.mark.parametrize("model", ["default", "lm-only"])
def test_the_shipped_evaluation_files_keep_their_layout(model):
    shipped = json.loads((ROOT / "assets" / model / "evaluation.json").read_text(encoding="utf-8"))
    for name, row in shipped["sense_probe"].items():
        if "skipped" not in row:
            assert list(row) == EVALUATION_KEYS, (model, name)


def test_a_broken_result_is_a_clear_error(tiny_embedder):
    data = loo_sense_probe(SyntheticEmbedder(), synthetic_items()).to_json()
    assert data["s"] is None and data["paper"] is None
    with pytest.raises(ValueError, match="all be set or all be null"):
        LooSenseResult.from_json({**data, "gamma": 1.0})
    with pytest.raises(ValueError, match=r"silhouette\[1\] must be a number in \[-1, 1\]"):
        LooSenseResult.from_json({**data, "silhouette": [0.1, 3.0, None]})
    with pytest.raises(ValueError, match="has no 'mfs'"):
        LooSenseResult.from_json({k: v for k, v in data.items() if k != "mfs"})

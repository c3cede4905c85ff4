"""elmo_core.probes.sense_means (the sense-means probe, task "wsd") on the tiny fixture biLM and WordNet files."""

from __future__ import annotations

from elmo_core.data.senses import read_wordnet_examples
from elmo_core.probes import sense_means
from tests.conftest import PROBE_DATA, check_task_result


def test_sense_means_probe_on_tiny_model(tiny_embedder):
    items = read_wordnet_examples(PROBE_DATA / "wordnet")
    result = sense_means.sense_means_probe(tiny_embedder, items, test_fraction=0.4, epochs=3)
    check_task_result(result, tiny_embedder.num_layers, "wsd")
    assert 0.0 <= result.mix_linear <= 1.0
    assert result.data.n_train + result.data.n_test <= len(items)
    side = dict(zip((it.tokens for it in items), sense_means.split_by_sentence(items, 0.4)))
    assert all(side[it.tokens] == t for it, t in zip(items, sense_means.split_by_sentence(items, 0.4)))

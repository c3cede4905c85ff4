"""elmo_core.probes.pos (the part-of-speech probe, task "pos") on the tiny fixture biLM and two Brown documents."""

from __future__ import annotations

from elmo_core.data.brown import read_brown
from elmo_core.probes import pos
from tests.conftest import PROBE_DATA, check_task_result


def test_split_documents_by_name():
    train, test = pos.split_documents([f"c{g}{k:02d}" for g in "ab" for k in range(1, 6)], test_every=5)
    assert test == ["ca05", "cb05"] and len(train) == 8 and not set(train) & set(test)


def test_pos_probe_on_tiny_model(tiny_embedder):
    result = pos.pos_probe(
        tiny_embedder, read_brown(PROBE_DATA / "brown"), max_train_sentences=10, max_test_sentences=3, epochs=2
    )
    check_task_result(result, tiny_embedder.num_layers, "pos")
    assert result.data.counts["n_train_sentences"] == 10 and result.data.counts["test_documents"] == 1
    assert len(result.layers_converged) == tiny_embedder.num_layers

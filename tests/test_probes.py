"""The WSD and POS probes (elmo_core.probes) and the Brown reader, on the tiny fixture biLM and tiny data."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from elmo_core import probes
from elmo_core.brown import read_brown
from elmo_core.senses import read_wordnet_examples

FIXTURES = Path(__file__).parent / "fixtures" / "probes"
WORDNET, BROWN = FIXTURES / "wordnet", FIXTURES / "brown"


def check_task(result: dict, num_layers: int, task: str) -> None:
    assert result["task"] == task
    assert len(result["layers"]) == num_layers and len(result["s"]) == num_layers
    values = [*result["layers"], result["mix_learned"], *result["baselines"].values()]
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in values)
    assert abs(sum(result["s"]) - 1.0) < 1e-6 and all(0 < v < 1 for v in result["s"])
    assert result["paper"]["layer_1"] and result["paper"]["layer_2"]
    assert result["data"]["n_train"] > 0 and result["data"]["n_test"] > 0
    json.dumps(result)


def test_split_documents_by_name():
    train, test = probes.split_documents([f"c{g}{k:02d}" for g in "ab" for k in range(1, 6)], test_every=5)
    assert test == ["ca05", "cb05"] and len(train) == 8 and not set(train) & set(test)


# ---- probes ------------------------------------------------------------------------------------------------
def test_sense_means_probe_on_tiny_model(tiny_embedder):
    items = read_wordnet_examples(WORDNET)
    result = probes.sense_means_probe(tiny_embedder, items, test_fraction=0.4, epochs=3)
    check_task(result, tiny_embedder.num_layers, "wsd")
    assert 0.0 <= result["mix_linear"] <= 1.0
    assert result["data"]["n_train"] + result["data"]["n_test"] <= len(items)
    side = dict(zip((it.tokens for it in items), probes.split_by_sentence(items, 0.4)))
    assert all(side[it.tokens] == t for it, t in zip(items, probes.split_by_sentence(items, 0.4)))


def test_pos_probe_on_tiny_model(tiny_embedder):
    result = probes.pos_probe(tiny_embedder, read_brown(BROWN), max_train_sentences=10, max_test_sentences=3,
                              epochs=2)
    check_task(result, tiny_embedder.num_layers, "pos")
    assert result["data"]["n_train_sentences"] == 10 and result["data"]["test_documents"] == 1


def test_mix_classifier_learns_the_informative_layer():
    rng = np.random.default_rng(0)
    n, d = 600, 8
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 3, d)).astype(np.float32)
    x[:, 1, 0] += 3 * (2 * y - 1)  # only layer 1 carries the label
    model = probes.train_mix_classifier(x, y, 2, epochs=15, lr=2e-2)
    s = model.mix.s.detach().numpy()
    assert abs(s.sum() - 1) < 1e-6 and s.argmax() == 1


def test_probe_command_and_report(tmp_path, allennlp_files, monkeypatch):
    from elmo_core.cli import main
    options, weights = allennlp_files
    out = tmp_path / "probes.json"
    common = ["probe", "--options", str(options), "--weights", str(weights), "--device", "cpu", "--threads", "1",
              "--wordnet-dir", str(WORDNET), "--brown-dir", str(BROWN), "--out", str(out)]
    assert main([*common, "--task", "pos"]) == 0
    assert main([*common, "--task", "wsd"]) == 0  # added to the same model's file
    report = probes.load_report(out)
    assert report["format"] == probes.FORMAT and set(report["tasks"]) == {"wsd", "pos"}
    for task, result in report["tasks"].items():
        check_task(result, 3, task)
    table = out.with_suffix(".md").read_text()
    assert "97.3" in table and "69.0" in table and "Not comparable" in table


def test_missing_data_is_a_clear_error(tiny_embedder, tmp_path, monkeypatch):
    monkeypatch.delenv("ELMO_WORDNET_DIR", raising=False)
    monkeypatch.setattr("elmo_core.wordnet.wordnet_dirs", list)
    with pytest.raises(FileNotFoundError, match="probe --prepare"):
        probes.run_probe(tiny_embedder, "wsd")
    with pytest.raises(ValueError, match="task must be"):
        probes.run_probe(tiny_embedder, "ner")


def test_load_report_rejects_other_json(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"tasks": {}}')
    with pytest.raises(ValueError, match="not a probe results file"):
        probes.load_report(bad)


def test_every_task_in_the_table_reports_its_data(tmp_path):
    for name, task in probes.TASKS.items():
        assert task.name == name and task.title and task.label and task.colour.startswith("#")
        with pytest.raises(FileNotFoundError, match="--prepare"):
            task.find_data(tmp_path, tmp_path)
    assert len(probes.data_problems(wordnet_dir=tmp_path, brown_dir=tmp_path)) == len(probes.TASKS)
    assert probes.data_problems(wordnet_dir=WORDNET, brown_dir=BROWN) == []

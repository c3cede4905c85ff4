"""elmo_core.training.evaluate (held-out perplexity, the model's fingerprint) and the `evaluate` command on the tiny
fixture biLM. The leave-one-out sense probe it runs has its own tests (test_probes_loo_sense.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elmo_core.training.evaluate import heldout_perplexity, model_fingerprint
from tests.probes.test_probes_loo_sense import EVALUATION_KEYS

WORDNET = Path(__file__).parents[1] / "fixtures" / "probes" / "wordnet"


def test_fingerprint_is_stable(tiny_embedder, allennlp_files):
    from elmo_core import Embedder

    again = Embedder.from_elmo_files(*allennlp_files, device="cpu")
    assert model_fingerprint(tiny_embedder) == model_fingerprint(again)


def test_heldout_perplexity_on_tiny_checkpoint(tmp_path, allennlp_files):
    from elmo_core.data.vocab import Vocabulary
    from elmo_core.model.weights import load_bilm_from_elmo_files
    from elmo_core.training.checkpoints import export_model
    from elmo_core.training.lm import BiLanguageModel

    sentences = [["the", "cat", "sat"], ["a", "dog", "ran", "home"]]
    vocab = Vocabulary.build(sentences, max_size=50)
    model = BiLanguageModel(load_bilm_from_elmo_files(*allennlp_files), len(vocab), dropout=0.0)
    export_model(model, vocab, tmp_path)
    ppl = heldout_perplexity(tmp_path, sentences)
    assert ppl["tokens"] == 9 and ppl["forward"] > 1 and ppl["backward"] > 1
    (tmp_path / "softmax.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="softmax"):
        heldout_perplexity(tmp_path, sentences)


def test_evaluate_command(tmp_path, monkeypatch, allennlp_files):
    from elmo_core.cli import main

    monkeypatch.setenv("ELMO_WORDNET_DIR", str(WORDNET))
    out = tmp_path / "eval.json"
    options, weights = allennlp_files
    assert (
        main(
            [
                "evaluate",
                "--options",
                str(options),
                "--weights",
                str(weights),
                "--device",
                "cpu",
                "--threads",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    report = json.loads(out.read_text())
    assert set(report) == {"model", "sense_probe", "perplexity"}
    assert set(report["sense_probe"]) == {"WordNet examples", "own sentences", "sense probe (34 words)"}
    for name, row in report["sense_probe"].items():  # the layout of assets/*/evaluation.json
        assert list(row) == EVALUATION_KEYS and row["dataset"] == name and len(row["layers"]) == 3
    assert report["sense_probe"]["sense probe (34 words)"]["n_items"] == 750
    assert "skipped" in report["perplexity"]

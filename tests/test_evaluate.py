"""The leave-one-out sense probe (elmo_core.evaluate) on toy vectors and on the tiny fixture biLM."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from elmo_core.evaluate import heldout_perplexity, loo_sense_probe, model_fingerprint, subsample_keys
from elmo_core.senses import SenseItem, read_sense_sentences, read_wordnet_examples

WORDNET = Path(__file__).parent / "fixtures" / "probes" / "wordnet"


def _check(result, num_layers):
    assert len(result["layers"]) == num_layers
    for key in ("mix_equal", "bag_of_context", "mfs", "chance_random_neighbour", "chance_uniform"):
        assert 0.0 <= result[key] <= 1.0
    assert all(0.0 <= a <= 1.0 for a in result["layers"])
    json.dumps(result)


def test_sense_probe_on_tiny_model(tiny_embedder):
    items = read_wordnet_examples(WORDNET)
    result = loo_sense_probe(tiny_embedder, items, dataset="fixture")
    _check(result, tiny_embedder.num_layers)
    assert result["n_items"] == len(items) and result["n_keys"] == 6 and result["dataset"] == "fixture"
    own = loo_sense_probe(tiny_embedder, read_sense_sentences(), batch_size=16)
    _check(own, tiny_embedder.num_layers)
    assert own["n_keys"] >= 15


def test_sense_probe_needs_pairs(tiny_embedder):
    single = [SenseItem("bank", "n", "noun.object", ("the", "bank"), 1)]
    with pytest.raises(ValueError, match="two or more"):
        loo_sense_probe(tiny_embedder, single)


def test_subsample_keeps_whole_lemmas():
    items = read_wordnet_examples(WORDNET)
    sub = subsample_keys(items, 10, seed=1)
    keys = {it.key for it in sub}
    assert sub and all(sum(it.key == k for it in items) == sum(it.key == k for it in sub) for k in keys)
    assert subsample_keys(items, 0) == items


def test_fingerprint_is_stable(tiny_embedder, allennlp_files):
    from elmo_core import Embedder
    again = Embedder.from_elmo_files(*allennlp_files, device="cpu")
    assert model_fingerprint(tiny_embedder) == model_fingerprint(again)


def test_heldout_perplexity_on_tiny_checkpoint(tmp_path, allennlp_files):
    from elmo_core.lm import BiLanguageModel
    from elmo_core.train import export_model
    from elmo_core.vocab import Vocabulary
    from elmo_core.weights import load_bilm_from_elmo_files

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
    assert main(["evaluate", "--options", str(options), "--weights", str(weights), "--device", "cpu",
                 "--threads", "1", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert set(report["sense_probe"]) == {"WordNet examples", "own sentences", "sense probe (34 words)"}
    assert "skipped" in report["perplexity"]

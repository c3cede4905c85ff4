"""The shipped default biLM (assets/default): loads offline, documented shapes, and context matters."""

import numpy as np
import pytest
import torch

from elmo_core import Embedder, tokenize
from elmo_core.paths import DEFAULT_MODEL_DIR

RIVER = [
    "We sat on the bank of the river and watched the water.",
    "The boat drifted toward the muddy bank.",
    "Fish swam near the grassy bank of the stream.",
]
MONEY = [
    "She deposited the money in the bank.",
    "The bank raised its interest rates.",
    "He borrowed gold from the bank to pay his debts.",
]


def bank_vectors(embedder):
    sentences = [tokenize(s) for s in RIVER + MONEY]
    return np.stack([a[:, s.index("bank")] for a, s in zip(embedder.embed_batch(sentences), sentences)], axis=1)


def test_default_model_files_are_small_and_complete():
    names = {p.name for p in DEFAULT_MODEL_DIR.iterdir()}
    assert {"options.json", "model.safetensors", "MODEL_CARD.md"} <= names
    bundled = [p for d in (DEFAULT_MODEL_DIR, DEFAULT_MODEL_DIR.parent / "lm-only") for p in d.iterdir()]
    assert sum(p.stat().st_size for p in bundled) < 50 * 2**20  # both bundled models together


def test_default_model_shapes_and_context():
    e = Embedder.default(device="cpu")
    out = e.embed_sentence(["The", "bank", "closed", "."])
    assert out.shape == (3, 4, e.dim) and out.dtype == np.float32 and e.dim == 256
    v = bank_vectors(e)  # (3 layers, 6 occurrences of "bank", D)
    unit = v / np.linalg.norm(v, axis=-1, keepdims=True)
    np.testing.assert_allclose(unit[0] @ unit[0].T, 1.0, atol=1e-5)  # layer 0 is context-free: one vector for all
    assert np.abs(unit[1] @ unit[1].T - 1.0).max() > 0.05  # layers 1 and 2 depend on the sentence
    assert np.abs(unit[2] @ unit[2].T - 1.0).max() > 0.05


@pytest.mark.slow
def test_default_model_separates_senses_better_than_layer0():
    """Leave-one-out 1-NN sense accuracy on our 123 hand-written sense sentences (MODEL_CARD.md: layer 0 38.5 %,
    layer 1 61.0 %, layer 2 65.9 %). The bag of the sentence's other layer-0 vectors (70.7 %) beats both here: the
    lexical target gave layer 0 much of GloVe, and these sentences' senses show in their neighbours' words."""
    from elmo_core.data.senses import read_sense_sentences
    from elmo_core.probes.loo_sense import loo_sense_probe

    result = loo_sense_probe(Embedder.default(device="cpu"), read_sense_sentences(), dataset="own sentences")
    layers = result.layers
    assert layers[1] > layers[0] + 0.1 and layers[2] > layers[0] + 0.1
    np.testing.assert_allclose(layers, [0.385, 0.610, 0.659], atol=0.002)  # the model card's numbers
    assert result.baselines["layer-0 bag of context"] == pytest.approx(0.707, abs=0.002)


@pytest.mark.slow
@pytest.mark.parametrize("name, expected", [("default", [0.399, 0.529, 0.771]), ("lm-only", [0.399, 0.463, 0.455])])
def test_bundled_models_on_the_fresh_sense_probe(name, expected):
    """The model cards' per-layer numbers on the 34-word probe (assets/probes/SENSE_PROBE.md); the bundled
    models are stored as float16 and widened on load, so these also check that round trip."""
    import json

    from elmo_core import probes

    e = Embedder.bundled(name, device="cpu")
    assert e.name == name and e.bilm.char_cnn.char_embedding.weight.dtype == torch.float32
    result = probes.run_probe(e, "loo_sense")  # the task of the table: the 34-word probe, whole
    np.testing.assert_allclose(result.layers, expected, atol=0.002)
    # the same numbers as the shipped `evaluate` report, in its layout
    shipped = json.loads((DEFAULT_MODEL_DIR.parent / name / "evaluation.json").read_text(encoding="utf-8"))
    row, now = shipped["sense_probe"]["sense probe (34 words)"], result.to_evaluation_json()
    assert list(now) == list(row)
    for key in (
        "layers",
        "mix_equal",
        "bag_of_context",
        "mfs",
        "chance_random_neighbour",
        "chance_uniform",
        "silhouette",
        "silhouette_mix_equal",
        "silhouette_bag_of_context",
    ):
        np.testing.assert_allclose(now[key], row[key], atol=1e-4, err_msg=key)
    assert (now["n_items"], now["n_keys"]) == (row["n_items"], row["n_keys"]) == (750, 34)


def test_unknown_bundled_model_is_named():
    with pytest.raises(KeyError, match="lm-only"):
        Embedder.bundled("nope")


def _within_minus_across(embedder, layer: int) -> float:
    """Mean cosine between occurrences of "bank" of the same sense minus that between the two senses."""
    v = bank_vectors(embedder)[layer]
    u = v / np.linalg.norm(v, axis=-1, keepdims=True)
    s = u @ u.T
    within = (s[:3, :3].sum() - 3 + s[3:, 3:].sum() - 3) / 12
    return float(within - s[:3, 3:].mean())


def test_default_top_layer_pulls_the_senses_of_bank_apart():
    """The side-bag term (docs/TEACHERS.md) in the shipped default: in layer 2 the river sentences are closer to
    each other than to the money sentences (0.808 against 0.737; stage 7f alone: 0.713 against 0.601); the LM-only
    model's layer 2 does not do this (0.779 against 0.786)."""
    assert _within_minus_across(Embedder.default(device="cpu"), 2) == pytest.approx(0.071, abs=0.005)
    assert _within_minus_across(Embedder.bundled("lm-only", device="cpu"), 2) == pytest.approx(-0.007, abs=0.005)

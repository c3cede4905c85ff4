"""The shipped default biLM (assets/default): loads offline, documented shapes, and context matters."""
import numpy as np

from elmo_core import Embedder, tokenize
from elmo_core.paths import DEFAULT_MODEL_DIR

RIVER = ["We sat on the bank of the river and watched the water.", "The boat drifted toward the muddy bank.",
         "Fish swam near the grassy bank of the stream."]
MONEY = ["She deposited the money in the bank.", "The bank raised its interest rates.",
         "He borrowed gold from the bank to pay his debts."]


def bank_vectors(embedder):
    sentences = [tokenize(s) for s in RIVER + MONEY]
    return np.stack([a[:, s.index("bank")] for a, s in zip(embedder.embed_batch(sentences), sentences)], axis=1)


def test_default_model_files_are_small_and_complete():
    names = {p.name for p in DEFAULT_MODEL_DIR.iterdir()}
    assert {"options.json", "model.safetensors", "MODEL_CARD.md"} <= names
    assert sum(p.stat().st_size for p in DEFAULT_MODEL_DIR.iterdir()) < 50 * 2**20


def test_default_model_shapes_and_context():
    e = Embedder.default(device="cpu")
    out = e.embed_sentence(["The", "bank", "closed", "."])
    assert out.shape == (3, 4, e.dim) and out.dtype == np.float32 and e.dim == 256
    v = bank_vectors(e)  # (3 layers, 6 occurrences of "bank", D)
    unit = v / np.linalg.norm(v, axis=-1, keepdims=True)
    np.testing.assert_allclose(unit[0] @ unit[0].T, 1.0, atol=1e-5)  # layer 0 is context-free: one vector for all
    assert np.abs(unit[1] @ unit[1].T - 1.0).max() > 0.05  # layers 1 and 2 depend on the sentence
    assert np.abs(unit[2] @ unit[2].T - 1.0).max() > 0.05


def test_default_model_separates_senses_better_than_layer0_and_bag_of_context():
    """Leave-one-out 1-NN sense accuracy on our 123 hand-written sense sentences (MODEL_CARD.md: layer 0 38.5 %,
    layer 1 55.3 %, layer 2 54.5 %, bag of context words 46.3 %)."""
    from elmo_core.evaluate import loo_sense_probe
    from elmo_core.senses import read_sense_sentences

    result = loo_sense_probe(Embedder.default(device="cpu"), read_sense_sentences(), dataset="own sentences")
    layers = result["layers"]
    assert layers[1] > layers[0] + 0.1 and layers[2] > layers[0] + 0.1
    assert max(layers[1], layers[2]) > result["bag_of_context"] + 0.05
    np.testing.assert_allclose(layers, [0.385, 0.553, 0.545], atol=0.002)  # the model card's numbers

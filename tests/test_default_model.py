"""The shipped default biLM (assets/default): loads offline, documented shapes, and context matters."""
import numpy as np

from elmo_core import Embedder, tokenize
from elmo_core.embedder import DEFAULT_MODEL_DIR

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
    v = bank_vectors(e)  # (3 layers, 6 occurrences, D)
    unit = v / np.linalg.norm(v, axis=-1, keepdims=True)
    sim = np.einsum("lid,ljd->lij", unit, unit)
    within = np.array([sim[l][np.triu_indices(3, 1)].mean() + sim[l][3:, 3:][np.triu_indices(3, 1)].mean()
                       for l in range(3)]) / 2
    across = sim[:, :3, 3:].mean(axis=(1, 2))
    np.testing.assert_allclose(sim[0], 1.0, atol=1e-5)  # layer 0 is context-free: every "bank" is the same vector
    assert (within - across)[1:].max() > 0.02  # the biLSTM layers put the two senses apart

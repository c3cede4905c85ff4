"""The biLM on an accelerator: ELMO_TEST_DEVICE=cuda (benchmarks/gpu_check.sh sets it); skipped without one.

Float32 must match the reference fixtures there too (TF32 is off), stateless invariance must hold, the
reduced precisions the Embedder offers must stay close to float32, and a training step must run.
"""

import os

import numpy as np
import pytest
import torch

from elmo_core import Embedder, batch_to_ids
from elmo_core.model.embedder import fast_dtypes
from tests.conftest import ALLENNLP

DEVICE = os.environ.get("ELMO_TEST_DEVICE", "")
pytestmark = pytest.mark.skipif(
    not DEVICE or DEVICE == "cpu" or (DEVICE.startswith("cuda") and not torch.cuda.is_available()),
    reason="set ELMO_TEST_DEVICE=cuda on a machine with a GPU",
)
SENT = ["The", "bank", "raised", "its", "interest", "rates", "."]


def test_stateful_fixture_on_device(fixture_sentences, allennlp_files):
    import h5py

    embedder = Embedder.from_elmo_files(*allennlp_files, device=DEVICE, stateful=True)
    for i in range(10):
        batch = [fixture_sentences[k][i].split() for k in range(3)]
        outputs = embedder.embed_batch(batch)
        for k in range(3):
            with h5py.File(ALLENNLP / f"lm_embeddings_{k}.hdf5") as f:
                expected = np.concatenate([f[str(i)][0], f[str(i)][1]], axis=-1)
            np.testing.assert_allclose(outputs[k][2], expected, atol=1e-6, rtol=1e-5)


def test_stateless_invariance_and_cpu_agreement(allennlp_files):
    gpu = Embedder.from_elmo_files(*allennlp_files, device=DEVICE)
    cpu = Embedder.from_elmo_files(*allennlp_files, device="cpu")
    alone = gpu.embed_sentence(SENT)
    in_batch = gpu.embed_batch([["A"], SENT, ["x"] * 30], batch_size=3)[1]
    np.testing.assert_allclose(in_batch, alone, atol=1e-6, rtol=0)
    np.testing.assert_allclose(alone, cpu.embed_sentence(SENT), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduced_precision_is_close(dtype, allennlp_files):
    if dtype not in fast_dtypes(DEVICE):
        pytest.skip(f"{dtype} not offered on {DEVICE}")
    ref = Embedder.from_elmo_files(*allennlp_files, device=DEVICE).embed_sentence(SENT)
    low = Embedder.from_elmo_files(*allennlp_files, device=DEVICE, dtype=dtype).embed_sentence(SENT)
    assert low.dtype == np.float32
    cos = (ref * low).sum(-1) / np.linalg.norm(ref, axis=-1) / np.linalg.norm(low, axis=-1)
    assert cos.min() > 0.99


def test_training_step_on_device(allennlp_files):
    from elmo_core.model.weights import load_bilm_from_elmo_files
    from elmo_core.training.lm import BiLanguageModel

    torch.manual_seed(0)
    model = BiLanguageModel(load_bilm_from_elmo_files(*allennlp_files).train(), 50).to(DEVICE)
    for p in model.parameters():
        p.requires_grad_(True)
    ids = batch_to_ids([SENT, ["a", "b"]]).to(DEVICE)
    words = torch.randint(0, 50, (2, len(SENT) + 2), device=DEVICE)
    with torch.autocast(torch.device(DEVICE).type, dtype=torch.bfloat16):
        loss = model(ids, words)
    loss.mean.backward()
    assert torch.isfinite(loss.mean)
    assert all(
        p.grad is not None and torch.isfinite(p.grad).all()
        for p in model.bilm.parameters()
        if p.requires_grad and p is not model.bilm.char_cnn.char_embedding.weight
    )

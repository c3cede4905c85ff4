"""The char CNN's stacked-GEMM max-pool against the plain definition (one Conv1d per width, max over all
50 windows), including tokens that defeat its shortcuts; the inference and autograd paths agree."""

import random
import string

import pytest
import torch
import torch.nn.functional as F

from elmo_core import batch_to_ids
from elmo_core.model.char_cnn import PAD_ID
from elmo_core.model.weights import load_bilm_from_elmo_files


def plain_pooled(cnn, ids):
    """Max over every window of every filter, as the reference defines it (ELMO_SPEC.md section 3)."""
    x = cnn.char_embedding(ids).transpose(1, 2)
    return torch.cat([F.conv1d(x, conv.weight, conv.bias).amax(-1) for conv in cnn.convs], -1)


@pytest.fixture(scope="module")
def model(allennlp_files):
    return load_bilm_from_elmo_files(*allennlp_files)


@pytest.fixture(scope="module")
def awkward_ids():
    rng = random.Random(0)
    words = ["".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(1, 12))) for _ in range(300)]
    words += ["x" * 60, "y" * 48, "z" * 47, "q" * 46, "naïve", "東京", "<S>", "</S>", ""]
    ids = batch_to_ids([words])[0]
    g = torch.Generator().manual_seed(0)
    return torch.cat(
        [
            ids,
            torch.zeros(3, 50, dtype=torch.long),  # padded token positions
            torch.full((2, 50), 261),  # nothing but character padding
            torch.randint(0, 262, (40, 50), generator=g),
        ]
    )  # padding ids anywhere


@pytest.mark.parametrize("one_product", [1 << 30, 0], ids=["one product", "running max"])
def test_pooled_matches_plain_convolution(model, awkward_ids, monkeypatch, one_product):
    import elmo_core.model.char_cnn as char_cnn

    monkeypatch.setattr(char_cnn, "ONE_PRODUCT_ELEMENTS", one_product)
    with torch.inference_mode():
        torch.testing.assert_close(
            model.char_cnn.pooled_convolutions(awkward_ids),
            plain_pooled(model.char_cnn, awkward_ids),
            atol=1e-6,
            rtol=1e-6,
        )


def test_chunks_and_order_do_not_matter(model, awkward_ids, monkeypatch):
    import elmo_core.model.char_cnn as char_cnn

    with torch.inference_mode():
        whole = model.char_cnn(awkward_ids)
        monkeypatch.setattr(char_cnn, "CHUNK", 7)
        monkeypatch.setattr(
            char_cnn, "ONE_PRODUCT_ELEMENTS", 7 * 20 * model.char_cnn.column_width.numel()
        )  # some chunks each way
        perm = torch.randperm(len(awkward_ids), generator=torch.Generator().manual_seed(1))
        torch.testing.assert_close(model.char_cnn(awkward_ids[perm]), whole[perm], atol=1e-6, rtol=0)
    assert model.char_cnn(awkward_ids[:0]).shape == (0, whole.shape[1])


def test_autograd_path_equals_inference_path(model, awkward_ids):
    with torch.inference_mode():
        fast = model.char_cnn(awkward_ids)
    for p in model.parameters():
        p.requires_grad_(True)
    try:
        out = model.char_cnn(awkward_ids)
        out.square().sum().backward()
        torch.testing.assert_close(out.detach(), fast, atol=1e-6, rtol=0)
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.char_cnn.convs.parameters())
    finally:
        for p in model.parameters():
            p.requires_grad_(False)
            p.grad = None


def test_bfloat16_and_autocast_run(model):
    ids = batch_to_ids([["The", "bank", "raised", "rates", "."], ["x" * 60]])
    with torch.inference_mode():
        ref = model(ids).activations
        with torch.autocast("cpu", dtype=torch.bfloat16):
            auto = model(ids).activations
    for a, b in zip(ref, auto):
        assert torch.nn.functional.cosine_similarity(a.flatten(), b.float().flatten(), dim=0) > 0.999


def test_cached_kernel_follows_changed_weights(allennlp_files, awkward_ids):
    """Inference reuses the stacked kernel, bias and padding-window value; changing a conv or the character
    embedding in place, or replacing a parameter, must rebuild them."""
    cnn = load_bilm_from_elmo_files(*allennlp_files).char_cnn
    with torch.inference_mode():
        cnn.pooled_convolutions(awkward_ids)
        kernel = cnn.stacked_parameters()[0]
        assert cnn.stacked_parameters()[0] is kernel  # cached
    with torch.no_grad():
        cnn.convs[2].weight.mul_(-2.0)
        cnn.char_embedding.weight[PAD_ID].add_(0.5)
    with torch.inference_mode():
        torch.testing.assert_close(
            cnn.pooled_convolutions(awkward_ids), plain_pooled(cnn, awkward_ids), atol=1e-6, rtol=1e-6
        )
    cnn.convs[0].bias = torch.nn.Parameter(cnn.convs[0].bias.detach() + 1.0)
    with torch.inference_mode():
        torch.testing.assert_close(
            cnn.pooled_convolutions(awkward_ids), plain_pooled(cnn, awkward_ids), atol=1e-6, rtol=1e-6
        )

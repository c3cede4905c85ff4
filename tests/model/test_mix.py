"""ScalarMix and the downstream Elmo module (Peters et al. 2018 eq. 1; AllenNLP ScalarMix semantics)."""

import numpy as np
import pytest
import torch

from elmo_core import Elmo, ScalarMix, batch_to_ids
from elmo_core.model.mix import whole_tensor_norm
from elmo_core.model.weights import load_bilm_from_elmo_files


def test_mix_is_gamma_times_softmax_weighted_sum():
    layers = [torch.full((2, 3, 4), float(v)) for v in (1.0, 2.0, 4.0)]
    mix = ScalarMix(3, initial_w=[0.0, np.log(2.0), np.log(5.0)], initial_gamma=0.5)
    s = np.array([1, 2, 5]) / 8
    np.testing.assert_allclose(mix.s.detach().numpy(), s, rtol=1e-6)
    expected = 0.5 * (s[0] * 1 + s[1] * 2 + s[2] * 4)
    torch.testing.assert_close(mix(layers), torch.full((2, 3, 4), float(expected)))


def test_layer_norm_uses_whole_tensor_masked_statistics():
    h = torch.tensor([[[1.0, 3.0], [5.0, 7.0], [100.0, 100.0]]])
    mask = torch.tensor([[True, True, False]])
    out = whole_tensor_norm(h, mask)
    # mean 4, var 5 over the 4 unmasked elements; the masked row is normalised with the same statistics
    torch.testing.assert_close(out[0, 0], torch.tensor([-3.0, -1.0]) / np.sqrt(5.0))
    torch.testing.assert_close(out[0, 2], torch.tensor([96.0, 96.0]) / np.sqrt(5.0))


def test_wrong_layer_count_raises():
    with pytest.raises(ValueError, match="3 layers"):
        ScalarMix(3)([torch.zeros(2)] * 2)


def test_elmo_module_only_mix_parameters_get_gradients(allennlp_files):
    elmo = Elmo(load_bilm_from_elmo_files(*allennlp_files), num_output_representations=2, dropout=0.0)
    out = elmo(batch_to_ids([["a", "b", "c"], ["d"]]))
    assert len(out.representations) == 2 and out.representations[0].shape == (2, 3, 32)
    assert out.mask.tolist() == [[True, True, True], [True, False, False]]
    loss = sum(r.sum() for r in out.representations) + elmo.regularization(0.001)
    loss.backward()
    trainable = {n for n, p in elmo.named_parameters() if p.requires_grad}
    assert trainable == {"scalar_mixes.0.w", "scalar_mixes.0.gamma", "scalar_mixes.1.w", "scalar_mixes.1.gamma"}
    assert all(p.grad is None for n, p in elmo.named_parameters() if n.startswith("bilm."))
    assert elmo.scalar_mixes[0].w.grad.abs().sum() > 0


def test_elmo_equals_manual_mix_of_embedder_layers(allennlp_files, tiny_embedder):
    elmo = Elmo(load_bilm_from_elmo_files(*allennlp_files), dropout=0.0).eval()
    with torch.no_grad():
        rep = elmo(batch_to_ids([["The", "cat", "sat"]])).representations[0][0].numpy()
    layers = tiny_embedder.embed_sentence(["The", "cat", "sat"])
    np.testing.assert_allclose(rep, layers.mean(axis=0), atol=1e-6)


def test_regularization_value():
    mix = ScalarMix(3, initial_w=[1.0, 2.0, -2.0])
    assert float(mix.regularization(0.01).detach()) == pytest.approx(0.01 * 9.0)

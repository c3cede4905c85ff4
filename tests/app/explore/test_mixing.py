"""app/explore/mixing.py, the explorer's mixing without Streamlit.

Expected values are worked out by hand in the comments, or follow from the definitions (softmax, cosine,
Procrustes) on small arrays built for the purpose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]

from app.explore import mixing  # noqa: E402


# ---- mixing --------------------------------------------------------------------------------------------------
def test_softmax_and_scalar_mix_values():
    s = mixing.softmax([0.0, 0.0, np.log(2.0)])
    np.testing.assert_allclose(s, [0.25, 0.25, 0.5])
    layers = np.stack([np.full((2, 3), 1.0), np.full((2, 3), 2.0), np.full((2, 3), 4.0)]).astype(np.float32)
    # gamma * (0.25*1 + 0.25*2 + 0.5*4) = 2 * 2.75
    np.testing.assert_allclose(mixing.scalar_mix(layers, [0, 0, np.log(2.0)], 2.0), np.full((2, 3), 5.5), rtol=1e-6)
    np.testing.assert_allclose(mixing.scalar_mix(layers, [0, 0, 0], 1.0), np.full((2, 3), 7 / 3), rtol=1e-6)
    with pytest.raises(ValueError):
        mixing.scalar_mix(layers, [0, 0], 1.0)


def test_scalar_mix_matches_elmo_core():
    torch = pytest.importorskip("torch")
    from elmo_core import ScalarMix

    rng = np.random.default_rng(0)
    layers = rng.normal(size=(3, 7, 5)).astype(np.float32)
    w = [0.3, -1.2, 0.8]
    ref = ScalarMix(3, initial_w=w, initial_gamma=1.7, trainable=False)(torch.from_numpy(layers)).numpy()
    np.testing.assert_allclose(mixing.scalar_mix(layers, w, 1.7), ref, rtol=1e-5, atol=1e-6)


def test_sentence_layer_norm_matches_elmo_core_per_sentence():
    torch = pytest.importorskip("torch")
    from elmo_core.model.mix import whole_tensor_norm

    rng = np.random.default_rng(1)
    acts = (rng.normal(size=(3, 9, 4)) * 3 + 1).astype(np.float32)
    offsets = np.array([0, 4, 9])
    out = mixing.sentence_layer_norm(acts, offsets)
    for a, b in [(0, 4), (4, 9)]:
        for j in range(3):
            block = torch.from_numpy(acts[j, a:b][None])
            ref = whole_tensor_norm(block, torch.ones(1, b - a, dtype=torch.bool))[0].numpy()
            np.testing.assert_allclose(out[j, a:b], ref, rtol=1e-5, atol=1e-5)
        assert abs(out[:, a:b].mean(axis=(1, 2))).max() < 1e-5


def test_presets():
    assert mixing.preset_weights("equal", 3) == (0.0, 0.0, 0.0)
    s_top = mixing.softmax(mixing.preset_weights("top", 3))
    s_bottom = mixing.softmax(mixing.preset_weights("bottom", 3))
    assert s_top[2] > 0.9999 and s_bottom[0] > 0.9999
    assert mixing.fit_weights((1.0,), 3) == (1.0, 0.0, 0.0) and mixing.fit_weights((1, 2, 3, 4), 3) == (1, 2, 3)

"""The scalar mix of the explorer: ELMo = gamma * sum_j s_j * h_j with s = softmax(w) (Peters et al. 2018, eq. 1), the
optional per-sentence layer norm (AllenNLP's do_layer_norm) and the weight presets (no Streamlit here)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.explore.blas import one_blas_thread


def softmax(w: Sequence[float]) -> np.ndarray:
    """s = softmax(w), float64, sums to 1."""
    w = np.asarray(w, dtype=np.float64)
    e = np.exp(w - w.max())
    return e / e.sum()


@one_blas_thread()
def scalar_mix(layers: np.ndarray, w: Sequence[float], gamma: float) -> np.ndarray:
    """ELMo's scalar mix: gamma * sum_j s_j * layers[j] with s = softmax(w).

    Args:
        layers: (L + 1, ..., D) activations.
        w: L + 1 raw weights.
    Returns:
        (..., D) float32.
    Source: Peters et al. 2018 eq. (1); same as ``elmo_core.ScalarMix`` without layer norm.
    """
    if len(w) != layers.shape[0]:
        raise ValueError(f"{len(w)} weights for {layers.shape[0]} layers")
    s = softmax(w).astype(np.float32)
    return (np.float32(gamma) * np.tensordot(s, layers, axes=1)).astype(np.float32, copy=False)


def sentence_layer_norm(acts: np.ndarray, offsets: np.ndarray, eps: float = 1e-13) -> np.ndarray:
    """Normalise each layer of each sentence with one mean and variance over all its (token, feature) values.

    This is AllenNLP's ``ScalarMix(do_layer_norm=True)`` applied to a batch of one sentence (whole-tensor
    statistics, not per-token LayerNorm), so a sentence's vectors do not depend on the other sentences.
    Statistics exclude ``<S>``/``</S>`` (bilm-tf's choice; AllenNLP includes them).
    """
    out = np.empty_like(acts)
    for a, b in zip(offsets[:-1], offsets[1:]):
        if b <= a:
            continue
        block = acts[:, a:b].astype(np.float64)
        mean = block.mean(axis=(1, 2), keepdims=True)
        var = ((block - mean) ** 2).mean(axis=(1, 2), keepdims=True)
        out[:, a:b] = ((block - mean) / np.sqrt(var + eps)).astype(np.float32)
    return out


# ---- slider ranges and presets (the link itself: ``app.session.link``) ----------------------------------------------
W_RANGE = (-5.0, 5.0)
W_STEP = 0.1  # the w sliders' step: a weight pushed to them lands on it
GAMMA_RANGE = (0.1, 3.0)


def fit_weights(weights: Sequence[float], num_layers: int) -> tuple[float, ...]:
    """Pad with zeros / cut to ``num_layers`` values (a link made with another model)."""
    w = tuple(weights)[:num_layers]
    return w + (0.0,) * (num_layers - len(w))


def preset_weights(name: str, num_layers: int) -> tuple[float, ...]:
    """Raw w for a preset: "equal" (s_j = 1/(L+1)), "top" (s_L ~ 1) or "bottom" (layer 0 only, s_0 ~ 1).

    The extremes use w = +-5 (the slider range): with three layers the chosen one gets s = 0.99991.
    """
    lo, hi = W_RANGE
    if name == "equal":
        return (0.0,) * num_layers
    if name == "top":
        return (lo,) * (num_layers - 1) + (hi,)
    if name == "bottom":
        return (hi,) + (lo,) * (num_layers - 1)
    raise ValueError(f"unknown preset {name!r}")

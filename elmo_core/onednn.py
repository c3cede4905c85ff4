"""Large float32 matrix products through oneDNN at CPU inference.

PyTorch's CPU ``addmm``/``bmm`` call MKL. For this project's largest weights oneDNN's matmul is faster:
measured with ``python benchmarks/onednn_products.py`` (2 threads, this project's 2-core AVX512 EPYC), e.g.
the published Original's recurrent product (64 x 512) x (512 x 16384) took 7.2 ms instead of 11.9 ms, its
projection (1 x 4096) x (4096 x 512) 0.14 ms instead of 0.19 ms, and the Small/Original highway
(22 x 2048) x (2048 x 2048) 1.3 ms instead of 2.1 ms (2026-12-02, docs/performance.md). For small weights MKL is as fast or faster (oneDNN's
per-call overhead), so only weights of at least ``MIN_WEIGHT_ELEMENTS`` go through oneDNN: in practice the
published Small's highway and Original's highway and per-step LSTM products (recurrent and projection); the
bundled models stay on MKL. (Original's hoisted LSTM input product measured no faster there, so it stays too.)

The weights are repacked once into oneDNN's own layout and cached beside the module (a second copy of
those weights in memory; refreshed when the parameter is changed in place or replaced). The results equal
MKL's up to float rounding (a different summation order, about 1e-6 relative; tested against both reference
test sets). Training, autograd, autocast, other dtypes and other devices always take the plain products.
"""
from __future__ import annotations

import torch
from torch import nn

from .derived import cached

# 2^21 float32 elements = 8 MB. Below it oneDNN measured slower here: e.g. Small's (1 x 1024) x (1024 x 128)
# projection 0.06 ms against 0.02 ms, its hoisted input product (1408 x 128) x (128 x 4096) 25 ms against 12 ms.
MIN_WEIGHT_ELEMENTS = 1 << 21
ENABLED = True  # benchmarks and tests switch oneDNN off to compare


def applies(weight: torch.Tensor, x: torch.Tensor) -> bool:
    """True when ``x @ weight`` should go through oneDNN: enabled, CPU float32 inference, a large weight."""
    return (ENABLED and weight.numel() >= MIN_WEIGHT_ELEMENTS and x.device.type == "cpu"
            and weight.dtype == torch.float32 and x.dtype == torch.float32
            and not (torch.is_grad_enabled() and (weight.requires_grad or x.requires_grad))
            and not torch.is_autocast_enabled("cpu") and torch.backends.mkldnn.is_available())


def packed(owner: nn.Module, name: str, weight: torch.Tensor, out_in: bool) -> torch.Tensor:
    """``weight`` repacked for oneDNN as (out, in) matrices, cached on ``owner`` under ``name`` (module ``derived``:
    repacked when the weight changes; a copied or pickled module repacks on use).

    Args:
        owner: the module that holds the weight (the cache lives in its ``_onednn`` dict).
        name: a key unique within ``owner``.
        weight: float32 (out, in) when ``out_in``, else (in, out); either may carry leading batch dims
            (the LSTM's direction axis), packed one matrix each.
        out_in: the layout of ``weight``.

    Returns:
        A oneDNN tensor (one matrix), or a list of them when ``weight`` has leading dims.
    """
    return cached(owner, "_onednn", name, [weight], lambda: _pack(weight, out_in))


def _pack(weight: torch.Tensor, out_in: bool):
    with torch.no_grad():
        dense = weight.detach()
        if not out_in:
            dense = dense.transpose(-1, -2)
        if dense.dim() == 2:
            return dense.contiguous().to_mkldnn()
        return [m.contiguous().to_mkldnn() for m in dense.reshape(-1, *dense.shape[-2:])]


def run_linear(layer: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """``layer(x)`` for x (N, in), through oneDNN when ``applies``; the same (N, out) float32 result."""
    if applies(layer.weight, x):
        return linear(x, packed(layer, "weight", layer.weight, out_in=True), layer.bias)
    return layer(x)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``x @ weight.T + bias`` through oneDNN.

    Args:
        x: float32 (M, in) dense.
        weight: a oneDNN (out, in) tensor from ``packed``.
        bias: float32 (out,) dense, or None.

    Returns:
        float32 (M, out), a new dense tensor.
    """
    return torch._C._nn.mkldnn_linear(x.contiguous().to_mkldnn(), weight, bias).to_dense()

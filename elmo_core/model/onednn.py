"""Large float32 matrix products through oneDNN at CPU inference.

PyTorch's CPU ``addmm``/``bmm`` call MKL. For this project's largest weights oneDNN's matmul, with the weight in
its blocked layout, is faster: measured with ``python benchmarks/onednn_products.py`` (2 threads, a 2-core AVX2
EPYC, docs/performance.md), e.g. the published Original's recurrent product (64 x 512) x (512 x 16384)
took 7.7 ms instead of 12.6 ms and the Small/Original highway (22 x 2048) x (2048 x 2048) 1.5 ms instead of 2.0 ms.
For small weights MKL is as fast or faster (oneDNN's per-call overhead), so only weights of at least
``MIN_WEIGHT_ELEMENTS`` go through oneDNN: in practice the published Small's highway and Original's highway and
per-step LSTM products (recurrent and projection); the bundled models stay on MKL. (Original's hoisted LSTM input
product measured no faster there, so it stays too; so does a highway of more than ``MAX_ROWS`` rows.)

The weights are reordered once into oneDNN's blocked layout for ``REORDER_ROWS`` rows and cached beside the module
(a second copy of those weights in memory; refreshed when the parameter is changed in place or replaced); the
highway's gate activations are fused into its products. The results equal
MKL's up to float rounding (a different summation order, about 1e-6 relative; tested against both reference
test sets). Training, autograd, autocast, other dtypes and other devices always take the plain products.
"""

from __future__ import annotations

import torch
from torch import nn

from elmo_core.model.derived import cached

# 2^21 float32 elements = 8 MB. Below it oneDNN measured slower here: e.g. Small's (1 x 1024) x (1024 x 128)
# projection 0.06 ms against 0.02 ms, its hoisted input product (1408 x 128) x (128 x 4096) 25 ms against 12 ms.
MIN_WEIGHT_ELEMENTS = 1 << 21
ENABLED = True  # benchmarks and tests switch oneDNN off to compare
# The number of rows oneDNN lays a weight out for (its blocked format depends on it). Measured on the published
# Small's highway (both products and the gates, medians of alternating runs, 2 threads, an AVX2 EPYC):
# a layout for 64 rows was as fast as one for the exact size at 22 rows (3.8 ms against 4.3 ms for the plain oneDNN
# layout) and at 1,400 rows (165 against 179 ms); a layout for 1 row was slower at both.
REORDER_ROWS = 64
# Above this many rows MKL was the faster highway on that machine (1,280 rows: 124 ms against 146 for the blocked
# layout and 167 for the plain one; 256 rows: 27.1 against 28.5), so ``run_linear`` takes oneDNN only up to it.
MAX_ROWS = 128
ACTIVATIONS = {"none": lambda y: y, "sigmoid": torch.sigmoid, "relu": torch.relu}


def applies(weight: torch.Tensor, x: torch.Tensor) -> bool:
    """True when ``x @ weight`` should go through oneDNN: enabled, CPU float32 inference, a large weight."""
    return (
        ENABLED
        and weight.numel() >= MIN_WEIGHT_ELEMENTS
        and x.device.type == "cpu"
        and weight.dtype == torch.float32
        and x.dtype == torch.float32
        and not (torch.is_grad_enabled() and (weight.requires_grad or x.requires_grad))
        and not torch.is_autocast_enabled("cpu")
        and torch.backends.mkldnn.is_available()
    )


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
        An (out, in) matrix in oneDNN's blocked layout for ``REORDER_ROWS`` rows (an opaque oneDNN tensor that only
        ``linear`` reads), or a list of them when ``weight`` has leading dims.
    """
    return cached(owner, "_onednn", name, [weight], lambda: _pack(weight, out_in))


def _pack(weight: torch.Tensor, out_in: bool):
    with torch.no_grad():
        dense = weight.detach()
        if not out_in:
            dense = dense.transpose(-1, -2)
        if dense.dim() == 2:
            return _reorder(dense)
        return [_reorder(m) for m in dense.reshape(-1, *dense.shape[-2:])]


def _reorder(matrix: torch.Tensor) -> torch.Tensor:
    """A float32 (out, in) matrix in oneDNN's blocked layout for ``REORDER_ROWS`` rows: an opaque oneDNN tensor that
    only ``linear`` reads."""
    return torch.ops.mkldnn._reorder_linear_weight(matrix.contiguous(), REORDER_ROWS)


def run_linear(layer: nn.Linear, x: torch.Tensor, activation: str = "none") -> torch.Tensor:
    """``activation(layer(x))`` for x (N, in): through oneDNN when ``applies`` and N <= ``MAX_ROWS``, with the
    weight reordered once into oneDNN's blocked layout for ``REORDER_ROWS`` rows and the activation fused into the
    product; else ``layer`` (MKL) and the activation. The same (N, out) result either way, to float rounding.

    Raises:
        KeyError: ``activation`` is not one of ``ACTIVATIONS``.
    """
    post = ACTIVATIONS[activation]
    if applies(layer.weight, x) and x.shape[0] <= MAX_ROWS:
        return linear(x, packed(layer, "weight", layer.weight, out_in=True), layer.bias, activation)
    return post(layer(x))


def linear(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, activation: str = "none"
) -> torch.Tensor:
    """``activation(x @ weight.T + bias)`` in one oneDNN call (the activation fused into the product).

    Args:
        x: float32 (M, in) dense.
        weight: an (out, in) matrix from ``packed``.
        bias: float32 (out,) dense, or None.
        activation: "none", "sigmoid" or "relu".

    Returns:
        float32 (M, out), a new dense tensor.
    """
    return torch.ops.mkldnn._linear_pointwise(x.contiguous(), weight, bias, activation, [], "")

"""MKL (PyTorch's CPU addmm) against oneDNN for the matrix products of the published ELMo sizes.

Usage: python benchmarks/onednn_products.py [--threads 2]

Each row is one product of the biLM at inference, (M x K) x (K x N) float32, wall time per call (best of
3 runs of many calls), and the largest difference between the two results. ``elmo_core.model.onednn`` sends a
product through oneDNN when its weight has at least ``MIN_WEIGHT_ELEMENTS`` elements; the last column says
whether it does for that shape. The threshold was chosen from this table. "oneDNN blocked" is the same product with the
weight in oneDNN's blocked layout for ``REORDER_ROWS`` rows (``onednn.packed``/``linear``), the path the embedder takes;
"oneDNN ms" the plain oneDNN layout (``to_mkldnn``), which it took before.
"""

from __future__ import annotations

import argparse
import time

import torch

from elmo_core.model import onednn  # noqa: E402

# (what, M, K, N): rows = tokens (22 per 20-token sentence with boundaries), or batch rows per time step.
SHAPES = [
    ("Small LSTM recurrent, batch 1", 1, 128, 4096),
    ("Small LSTM projection, batch 1", 1, 1024, 128),
    ("Small LSTM recurrent, batch 64", 64, 128, 4096),
    ("Small LSTM projection, batch 64", 64, 1024, 128),
    ("Small LSTM input, 64 sentences", 1408, 128, 4096),
    ("highway (Small, Original), 1 sentence", 22, 2048, 2048),
    ("highway (Small, Original), 64 sentences", 1280, 2048, 2048),
    ("Original LSTM recurrent, batch 1", 1, 512, 16384),
    ("Original LSTM projection, batch 1", 1, 4096, 512),
    ("Original LSTM recurrent, batch 64", 64, 512, 16384),
    ("Original LSTM projection, batch 64", 64, 4096, 512),
    ("Original LSTM input, 64 sentences", 1408, 512, 16384),
]


def per_call(fn, budget_s: float = 0.3) -> float:
    fn()
    t0 = time.perf_counter()
    fn()
    calls = max(3, int(budget_s / max(time.perf_counter() - t0, 1e-6)))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    if not torch.backends.mkldnn.is_available():
        raise SystemExit("this torch build has no oneDNN")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"{args.threads} thread(s), torch {torch.__version__}, wall ms per call (best of 3)\n")
    print(
        "| product | M x K x N | MKL ms | oneDNN plain ms | oneDNN blocked ms | speed-up (MKL / blocked) | max abs diff (max abs value) | oneDNN used |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with torch.inference_mode():
        for what, m, k, n in SHAPES:
            x, weight, bias = torch.randn(m, k), torch.randn(k, n) * k**-0.5, torch.randn(n)
            packed = weight.t().contiguous().to_mkldnn()
            mkl = per_call(lambda: torch.addmm(bias, x, weight))
            dnn = per_call(lambda: torch._C._nn.mkldnn_linear(x.to_mkldnn(), packed, bias).to_dense())
            blocked = onednn.packed(torch.nn.Module(), "w", weight, out_in=False)
            dnn_blocked = per_call(lambda: onednn.linear(x, blocked, bias))
            ref = torch.addmm(bias, x, weight)
            diff = (onednn.linear(x, blocked, bias) - ref).abs().max().item()
            used = "yes" if k * n >= onednn.MIN_WEIGHT_ELEMENTS else "no"
            print(
                f"| {what} | {m} x {k} x {n} | {1e3 * mkl:.3f} | {1e3 * dnn:.3f} | {1e3 * dnn_blocked:.3f} | {mkl / dnn_blocked:.2f}x | "
                f"{diff:.1e} ({ref.abs().max().item():.1f}) | {used} |",
                flush=True,
            )


if __name__ == "__main__":
    main()

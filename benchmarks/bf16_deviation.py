"""How far bfloat16 moves the ELMo vectors from float32, per layer, on real text; and its speed against float32.

Usage: python benchmarks/bf16_deviation.py [--device cpu|cuda] [--sentences N] [--model DIR] [--json OUT]

Embeds the first N sentences of the reference corpus (``assets/reference/``, already tokenized, split on spaces)
with the shipped default model (or ``--model``, a checkpoint directory) twice, stateless, in batches of 64:
once in float32 and once with the whole biLM cast to bfloat16 (weights and activations; matrix products
accumulate in float32 inside the kernels, results are rounded to bfloat16). For every layer and every
token it takes the cosine similarity of the two vectors and reports 1 - cos (max and mean over tokens), the
max absolute difference, and for layers 1+ the share of tokens whose nearest neighbour among all tokens of
the sample (by cosine, the app's explorer metric) is the same in both precisions.

On a CPU without native bfloat16 (``elmo_core.model.embedder.cpu_has_fast_bfloat16()`` False) the Embedder does
not offer bfloat16, so this script casts the biLM itself; that fallback is very slow (the timings it prints
show how slow), hence the smaller default sample there.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent


def embed_all(bilm, sentences, device, batch_size=64) -> tuple[list[np.ndarray], float]:
    """Stateless embedding as ``Embedder._run`` does it: list of (L + 1, n_i, 2P) float32 arrays, seconds."""
    from elmo_core import batch_to_ids

    out: list[np.ndarray] = []
    start = time.perf_counter()
    with torch.inference_mode():
        for first in range(0, len(sentences), batch_size):
            chunk = sentences[first : first + batch_size]
            acts = bilm(batch_to_ids(chunk).to(device)).activations
            stacked = torch.stack(acts).float().cpu().numpy()
            out.extend(np.ascontiguousarray(stacked[:, k, 1 : len(s) + 1]) for k, s in enumerate(chunk))
    if device.type == "cuda":
        torch.cuda.synchronize()
    return out, time.perf_counter() - start


def deviation(a: list[np.ndarray], b: list[np.ndarray]) -> list[dict]:
    """Per layer: 1 - cos between the two precisions' vectors of each token (max, mean), max |diff|,
    and nearest-neighbour agreement."""
    x = np.concatenate(a, axis=1).astype(np.float64)  # (L + 1, N, D)
    y = np.concatenate(b, axis=1).astype(np.float64)
    rows = []
    for layer in range(x.shape[0]):
        xu = x[layer] / np.linalg.norm(x[layer], axis=1, keepdims=True)
        yu = y[layer] / np.linalg.norm(y[layer], axis=1, keepdims=True)
        one_minus_cos = 1.0 - np.sum(xu * yu, axis=1)
        row = {
            "layer": layer,
            "tokens": int(x.shape[1]),
            "max_1_minus_cos": float(one_minus_cos.max()),
            "mean_1_minus_cos": float(one_minus_cos.mean()),
            "max_abs_diff": float(np.abs(x[layer] - y[layer]).max()),
            "max_abs_value": float(np.abs(x[layer]).max()),
        }
        if layer > 0:  # layer 0 is context-free: equal tokens are equal vectors, ties make the check moot
            n = min(len(xu), 4000)
            sx, sy = xu[:n] @ xu[:n].T, yu[:n] @ yu[:n].T
            np.fill_diagonal(sx, -2)
            np.fill_diagonal(sy, -2)
            row["same_nearest_neighbour"] = float(np.mean(sx.argmax(1) == sy.argmax(1)))
        rows.append(row)
    return rows


def main() -> None:
    import copy

    from elmo_core.model.embedder import DEFAULT_MODEL_DIR, cpu_has_fast_bfloat16
    from elmo_core.model.weights import load_checkpoint

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--sentences", type=int, help="default: all 3000 on a GPU or a CPU with native bf16, else 60")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL_DIR)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    native = device.type == "cuda" or cpu_has_fast_bfloat16()
    count = args.sentences or (3000 if native else 60)
    from elmo_core.data.reference import ReferenceCorpus

    lines = ReferenceCorpus.load().sentences
    sentences = [line.split() for line in lines[:count] if line.strip()]
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    fp32 = load_checkpoint(args.model).to(device).eval()
    bf16 = copy.deepcopy(fp32).to(torch.bfloat16)
    embed_all(fp32, sentences[:2], device)  # warm-up
    embed_all(bf16, sentences[:2], device)
    a, t32 = embed_all(fp32, sentences, device)
    b, t16 = embed_all(bf16, sentences, device)
    rows = deviation(a, b)
    tokens = sum(len(s) for s in sentences)
    summary = {
        "model": str(args.model.name),
        "device": str(device),
        "native_bf16": native,
        "sentences": len(sentences),
        "tokens": tokens,
        "float32_tokens_per_s": tokens / t32,
        "bfloat16_tokens_per_s": tokens / t16,
        "layers": rows,
    }
    print(
        f"{args.model.name} on {device} ({'native' if native else 'fallback'} bf16), {len(sentences)} sentences, "
        f"{tokens} tokens: float32 {tokens / t32:,.0f} tok/s, bfloat16 {tokens / t16:,.0f} tok/s "
        f"({t32 / t16:.2f}x)"
    )
    print("| layer | max 1 - cos | mean 1 - cos | max abs diff (max abs value) | same nearest neighbour |")
    print("|---|---|---|---|---|")
    for r in rows:
        nn = f"{100 * r['same_nearest_neighbour']:.1f}%" if "same_nearest_neighbour" in r else "-"
        print(
            f"| {r['layer']} | {r['max_1_minus_cos']:.2e} | {r['mean_1_minus_cos']:.2e} | "
            f"{r['max_abs_diff']:.3f} ({r['max_abs_value']:.2f}) | {nn} |"
        )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()

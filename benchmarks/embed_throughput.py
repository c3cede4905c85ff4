"""Stateless embedding throughput and peak memory for random-weight biLMs of the published sizes.

Usage: python benchmarks/embed_throughput.py [--models small original] [--batches 1 64] [--threads 2] [--device cpu]
       [--dtypes float32 bfloat16]

For each (model, batch size) it embeds 20-token windows of real English (the first 3,000 sentences of assets/reference/) in a fresh subprocess (so peak RSS is per case)
and prints tokens/s, FLOPs per token (multiply-add = 2 FLOPs, counted from the architecture), achieved
GFLOP/s and peak memory. It also times a reference-style LSTM (one direction and one layer at a time,
input projection inside the Python time loop, as AllenNLP's LstmCellWithProjection does) on the same
weights, after checking that it gives the same vectors. ``--dtypes`` adds rows for reduced precisions (only
those ``elmo_core.model.embedder.fast_dtypes`` offers on the device). For elmo_core against the real AllenNLP
implementation see benchmarks/allennlp_compare.py.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import torch

from elmo_core.data.reference import ReferenceCorpus  # noqa: E402

FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]
SIZES = {"small": (1024, 128, 1), "original": (4096, 512, 2)}  # (cell dim C, projection P, highway)


def options(name):
    dim, proj, highway = SIZES[name]
    return {
        "lstm": {
            "use_skip_connections": True,
            "projection_dim": proj,
            "cell_clip": 3,
            "proj_clip": 3,
            "dim": dim,
            "n_layers": 2,
        },
        "char_cnn": {
            "activation": "relu",
            "filters": FILTERS,
            "n_highway": highway,
            "embedding": {"dim": 16},
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    }


def real_sentences(count: int) -> list[list[str]]:
    """``count`` 20-token windows of English from the shipped reference corpus (real text repeats words,
    which the biLM's one-CNN-pass-per-distinct-token exploits; the reference implementation does not)."""
    tokens = " ".join(ReferenceCorpus.load().sentences[:3000]).split()
    return [tokens[i * 20 : (i + 1) * 20] for i in range(count)]


def flops_per_token(cfg) -> float:
    """Forward FLOPs per token (boundaries excluded), 2 per multiply-add."""
    cnn = sum(w * n for w, n in cfg.char_cnn.filters) * cfg.char_cnn.embedding_dim * 50
    nf = cfg.char_cnn.n_filters
    highway = cfg.char_cnn.n_highway * 2 * nf * nf
    p, c, layers = cfg.lstm.projection_dim, cfg.lstm.dim, cfg.lstm.n_layers
    proj = nf * p
    lstm = 2 * layers * (2 * p * 4 * c + c * p)
    return 2.0 * (cnn + highway + proj + lstm)


def reference_style_top_layer(bilm, ids):
    """The biLSTM run the way the reference does: per direction, per layer, input projection in the loop."""
    from elmo_core.model.bilm import add_sentence_boundaries

    ids, mask = add_sentence_boundaries(ids)
    x = bilm.char_cnn(ids)
    cfg = bilm.config.lstm
    outs = []
    for d in range(2):
        inp = x if d == 0 else x.flip(1)  # all sentences have the same length here
        for index, layer in enumerate(bilm.lstm.layers):
            w_in, w_h = layer.input_weight[d], layer.state_weight[d]
            bias = layer.bias[d] + layer.forget_offset
            h = inp.new_zeros(inp.shape[0], cfg.projection_dim)
            c = inp.new_zeros(inp.shape[0], cfg.dim)
            steps = []
            for t in range(inp.shape[1]):
                z = inp[:, t] @ w_in + h @ w_h + bias
                i, j, f, o = z.chunk(4, -1)
                c = (torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(j)).clamp(-cfg.cell_clip, cfg.cell_clip)
                h = ((torch.sigmoid(o) * torch.tanh(c)) @ layer.proj_weight[d]).clamp(-cfg.proj_clip, cfg.proj_clip)
                steps.append(h)
            out = torch.stack(steps, 1)
            inp = out + inp if index > 0 else out
        outs.append(inp if d == 0 else inp.flip(1))
    return torch.cat(outs, -1)


def run_case(name: str, batch: int, threads: int, device: str, impl: str, repeats: int, dtype: str = "float32") -> dict:
    from elmo_core import Embedder, batch_to_ids
    from elmo_core.model.bilm import BiLM
    from elmo_core.model.config import BiLMConfig

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    cfg = BiLMConfig.from_dict(options(name))
    bilm = BiLM(cfg)
    embedder = Embedder(bilm, device=device, compile=impl == "ours+compile", dtype=dtype)
    sentences = real_sentences(batch)
    if impl.startswith("ours"):
        fn = lambda: embedder.embed_batch(sentences, batch_size=batch)  # noqa: E731
        if impl == "ours+compile":
            plain = Embedder(BiLM(cfg).eval(), device=device)
            plain.bilm.load_state_dict(bilm.state_dict())
            a, b = embedder.embed_batch(sentences[:2]), plain.embed_batch(sentences[:2])
            assert all(torch.allclose(torch.from_numpy(x), torch.from_numpy(y), atol=1e-5) for x, y in zip(a, b)), (
                "compiled step disagrees with the plain step"
            )
    else:
        ids = batch_to_ids(sentences).to(embedder.device)
        check = torch.from_numpy(embedder.embed_batch(sentences[:2])[0][2])
        with torch.inference_mode():
            got = reference_style_top_layer(embedder.bilm, ids[:2])[0, 1:-1].cpu()
        assert torch.allclose(got, check, atol=1e-4), "reference-style loop disagrees with the model"

        def fn():
            with torch.inference_mode():
                reference_style_top_layer(embedder.bilm, ids)

    fn()  # warm-up (and the one-off compile)
    fn()
    if embedder.device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    if embedder.device.type == "cuda":
        torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / repeats
    tokens = batch * 20
    peak = (
        torch.cuda.max_memory_allocated() / 2**20
        if embedder.device.type == "cuda"
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )
    return {
        "model": name,
        "impl": impl,
        "batch": batch,
        "tokens_per_s": tokens / seconds,
        "gflops_per_token": flops_per_token(cfg) / 1e9,
        "achieved_gflop_s": flops_per_token(cfg) * tokens / seconds / 1e9,
        "peak_mib": peak,
        "params_m": bilm.num_parameters() / 1e6,
        "device": str(embedder.device),
        "dtype": dtype,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=["small", "original"], choices=list(SIZES))
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 64])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-reference", action="store_true", help="skip the reference-style baseline")
    ap.add_argument("--compile", action="store_true", help="also time Embedder(compile=True)")
    ap.add_argument("--dtypes", nargs="*", default=["float32"], choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_case(*json.loads(args.case))))
        return
    from elmo_core.model.embedder import fast_dtypes

    dtypes = [d for d in args.dtypes if d in fast_dtypes(args.device)]
    skipped = sorted(set(args.dtypes) - set(dtypes))
    print(
        f"device {args.device}, {args.threads} threads, 20-token sentences, random weights"
        + (f"; not offered on this device: {', '.join(skipped)}" if skipped else "")
    )
    print(
        "| model | impl | dtype | batch | tokens/s | GFLOP/token | GFLOP/s | peak MiB |\n|---|---|---|---|---|---|---|---|"
    )
    for name in args.models:
        for batch in args.batches:
            impls = (
                [("ours", d) for d in dtypes]
                + ([("ours+compile", "float32")] if args.compile else [])
                + ([] if args.no_reference or batch == 1 else [("reference-style", "float32")])
            )
            for impl, dtype in impls:
                case = json.dumps([name, batch, args.threads, args.device, impl, args.repeats, dtype])
                proc = subprocess.run([sys.executable, __file__, "--case", case], capture_output=True, text=True)
                if proc.returncode:
                    print(f"| {name} | {impl} | {dtype} | {batch} | failed: {proc.stderr.strip().splitlines()[-1]} |")
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                print(
                    f"| {name} ({r['params_m']:.1f}M) | {impl} | {dtype} | {batch} | {r['tokens_per_s']:.0f} | "
                    f"{r['gflops_per_token']:.3f} | {r['achieved_gflop_s']:.1f} | {r['peak_mib']:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()

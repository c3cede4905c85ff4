"""Where the time goes: elmo_core's embedding split into stages, for random-weight biLMs of the published sizes.

Usage: python -m benchmarks.profile_stages [--models small original] [--batches 1 64] [--threads 1] [--repeats 3]
                                          [--no-onednn]

For each (model, batch) it embeds 20-token sentences of random lowercase words (the harness's workload:
almost every token is distinct) and times each stage separately with process CPU time (less disturbed than
wall time on a shared machine; with one thread it is the work done), best of ``--repeats``. Each stage's
GFLOP/s counts the multiply-adds that stage really does (for the char CNN: only the window starts computed,
with the filters zero-padded to width 7), and "% peak" divides it by a 2048^3 float32 matmul timed the same
way in the same process. A batch-1 row is one sentence. Every stage runs as the embedder runs it, large
weights through oneDNN (``elmo_core.model.onednn``); ``--no-onednn`` times the plain MKL products instead.
"""

from __future__ import annotations

import argparse
import random
import string
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent

from benchmarks.embed_throughput import options  # noqa: E402
from elmo_core.model import onednn  # noqa: E402


def best(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def peak(repeats: int) -> float:
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    return 2 * 2048**3 / best(lambda: a @ b, repeats) / 1e9


def profile(name: str, batch: int, repeats: int) -> list[tuple[str, float, float]]:
    """[(stage, seconds, GFLOP actually computed)] for one batch."""
    from elmo_core.model.bilm import BiLM, add_sentence_boundaries
    from elmo_core.model.chars import batch_to_ids
    from elmo_core.model.config import BiLMConfig

    torch.manual_seed(0)
    cfg = BiLMConfig.from_dict(options(name))
    bilm = BiLM(cfg).eval()
    rng = random.Random(batch)
    sentences = [
        ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10))) for _ in range(20)]
        for _ in range(batch)
    ]
    cnn, lstm = bilm.char_cnn, bilm.lstm
    p, c, nf = cfg.lstm.projection_dim, cfg.lstm.dim, cfg.char_cnn.n_filters
    with torch.inference_mode():

        def prepare():
            ids, mask = add_sentence_boundaries(batch_to_ids(sentences))
            unique, inverse = torch.unique(ids.reshape(-1, 50), dim=0, return_inverse=True)
            return ids, mask, unique, inverse

        ids, mask, unique, inverse = prepare()
        n, positions = len(unique), mask.numel()
        pooled = cnn._activation(cnn.pooled_convolutions(unique))
        high = pooled
        for hw in cnn.highways:
            high = hw(high)
        tokens = onednn.run_linear(cnn.projection, high)[inverse].reshape(*ids.shape[:2], -1)

        def highways():
            h = pooled
            for hw in cnn.highways:
                h = hw(h)

        # window starts computed by the conv: per length-sorted chunk, its longest content
        from elmo_core.model import char_cnn as cc

        length = torch.where(unique == cc.PAD_ID, 0, torch.arange(1, 51)).amax(1).clamp(min=1).sort().values
        starts = sum(int(length[min(i + cc.CHUNK, n) - 1]) * min(cc.CHUNK, n - i) for i in range(0, n, cc.CHUNK))
        layer = lstm.layers[0]
        x = torch.randn(2, ids.shape[1], batch, p)
        pre = torch.empty(2, ids.shape[1], batch, 4 * c)  # the inference loop's buffer (oneDNN takes this path)
        stages = [
            ("char ids + boundaries + unique", best(prepare, repeats), 0.0),
            (
                "char CNN (conv + max-pool)",
                best(lambda: cnn.pooled_convolutions(unique), repeats),
                2 * starts * cnn.max_width * cfg.char_cnn.embedding_dim * nf / 1e9,
            ),
            ("highway", best(highways, repeats), cfg.char_cnn.n_highway * n * 2 * 2 * nf * nf / 1e9),
            ("projection", best(lambda: onednn.run_linear(cnn.projection, high), repeats), n * 2 * nf * p / 1e9),
            (
                "LSTM input projections (hoisted)",
                cfg.lstm.n_layers * best(lambda: layer.input_projection(x, pre), repeats),
                cfg.lstm.n_layers * 2 * positions * 2 * p * 4 * c / 1e9,
            ),
            (
                "biLSTM total",
                best(lambda: lstm(tokens, mask), repeats),
                cfg.lstm.n_layers * 2 * positions * 2 * (2 * p * 4 * c + c * p) / 1e9,
            ),
        ]
    return stages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=["small", "original"])
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 64])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-onednn", action="store_true", help="plain MKL products for every weight")
    args = ap.parse_args()
    onednn.ENABLED = not args.no_onednn
    torch.set_num_threads(args.threads)
    gemm = peak(args.repeats)
    print(
        f"{args.threads} thread(s), {'MKL only' if args.no_onednn else 'large weights through oneDNN'}, CPU time; 2048^3 fp32 matmul peak {gemm:.1f} GFLOP/s (same process)\n"
    )
    print("| model | batch | stage | ms | share | GFLOP/s | % peak |\n|---|---|---|---|---|---|---|")
    for name in args.models:
        for batch in args.batches:
            stages = profile(name, batch, args.repeats)
            lstm_total = stages[-1][1]
            total = sum(s for _, s, _ in stages[:-2]) + lstm_total
            for stage, seconds, gflop in stages:
                share = seconds / total
                rate = gflop / seconds if gflop and seconds else 0.0
                print(
                    f"| {name} | {batch} | {stage} | {1000 * seconds:.1f} | {100 * share:.0f}% | "
                    f"{rate:.1f} | {100 * rate / gemm:.0f}% |"
                    if gflop
                    else f"| {name} | {batch} | {stage} | {1000 * seconds:.1f} | {100 * share:.0f}% | | |",
                    flush=True,
                )
            print(
                f"| {name} | {batch} | **step loop (biLSTM total - input projections)** | "
                f"{1000 * (lstm_total - stages[-2][1]):.1f} | {100 * (lstm_total - stages[-2][1]) / total:.0f}% | | |"
            )


if __name__ == "__main__":
    main()

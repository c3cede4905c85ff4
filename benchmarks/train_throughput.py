"""Training throughput of the default biLM on this machine: tokens/s per component, float32 against bfloat16.

Usage: python benchmarks/train_throughput.py [--threads 1] [--steps 6] [--batch-size 128] [--corpus data/corpus]
       [--cutoffs 2000,10000,40000 1000,5000,20000 ...]

Each component is timed forward + backward on the same real batch (sentences of the training corpus when it
is built, else Zipf-sampled random words), so the rows show where a training step's time goes:
char CNN (distinct tokens of the batch only, as in training), both biLSTM layers, the adaptive softmax, the
teacher heads, and the Adam step. "step" is one whole optimizer step. tokens/s counts the batch's real
tokens (boundaries excluded) per second.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch

from elmo_core.data.vocab import Vocabulary
from elmo_core.model.bilm import BiLM, add_sentence_boundaries
from elmo_core.model.config import BiLMConfig
from elmo_core.paths import DEFAULT_MODEL_DIR, corpus_dir
from elmo_core.training.batches import make_batch
from elmo_core.training.lm import BiLanguageModel
from elmo_core.training.train import read_sentences

ROOT = Path(__file__).resolve().parent.parent


def sample_batch(corpus: Path, batch_size: int, max_tokens: int = 60) -> list[list[str]]:
    if (corpus / "train.txt").is_file():
        sents = [s for s in read_sentences(corpus / "train.txt", 20000) if len(s) <= max_tokens]
    else:
        rng = random.Random(0)
        words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 9))) for _ in range(20000)]
        sents = [
            rng.choices(words, [1 / (r + 1) for r in range(len(words))], k=rng.randint(5, 40)) for _ in range(2000)
        ]
    rng = random.Random(1)
    # A length-bucketed batch, as epoch_batches makes them.
    start = rng.randrange(len(sents) - batch_size * 50)
    pool = sorted(sents[start : start + batch_size * 50], key=len)
    k = rng.randrange(50)
    return pool[k * batch_size : (k + 1) * batch_size]


def timed(fn, steps: int) -> float:
    fn()  # warm-up
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - start) / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--corpus", type=Path, default=corpus_dir())
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "default.json")
    ap.add_argument("--force-bf16", action="store_true", help="time bfloat16 even without native CPU support")
    ap.add_argument(
        "--cutoffs",
        nargs="*",
        default=[],
        metavar="C1,C2,...",
        help="also time the adaptive softmax with these cutoff sets (e.g. 2000,10000,40000 1000,5000,20000)",
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = json.loads(args.config.read_text())
    batch = sample_batch(args.corpus, args.batch_size)
    vocab = Vocabulary.load(DEFAULT_MODEL_DIR / "vocab.txt")
    torch.manual_seed(0)
    model = BiLanguageModel(
        BiLM(BiLMConfig.from_dict(cfg["options"]), 0.1), len(vocab), 0.1, lexical_dim=50, contextual_dim=128
    )
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    char_ids, words = make_batch(batch, vocab)
    n_tokens = sum(len(s) for s in batch)
    ids, mask = add_sentence_boundaries(char_ids)
    unique, inverse = torch.unique(ids.reshape(-1, ids.shape[-1]), dim=0, return_inverse=True)
    print(
        f"batch: {len(batch)} sentences, {n_tokens} tokens, {len(unique)} distinct tokens; "
        f"threads {args.threads}; torch {torch.__version__}"
    )
    lexical = (torch.randn(len(vocab), 50), torch.ones(len(vocab), dtype=torch.bool))
    contextual = (torch.randn(len(batch), char_ids.shape[1], 128), char_ids[..., 0] > 0)

    from elmo_core.model.embedder import cpu_has_fast_bfloat16

    dtypes = ["float32", "bfloat16"] if (cpu_has_fast_bfloat16() or args.force_bf16) else ["float32"]
    if len(dtypes) == 1:
        print(
            "bfloat16 skipped: this CPU has no native bfloat16 (AVX512-BF16/AMX); PyTorch's fallback is 30-100x "
            "slower than float32 here (--force-bf16 times it anyway)"
        )
    rows: dict[str, dict[str, float]] = {}
    for dtype in dtypes:
        cast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bfloat16")
        tokens_in = model.bilm.char_cnn(unique).detach()
        x = tokens_in[inverse].reshape(*ids.shape[:2], -1).detach().requires_grad_()
        # The batch's real targets, forward (next token) then backward (previous token): where they fall among
        # the cutoffs sets the softmax's cost, so random ids would overstate it several-fold.
        target = torch.tensor([w for s in batch for ids in [vocab.encode(s)] for w in (*ids[1:], *ids[:-1])])
        top = torch.randn(len(target), tokens_in.shape[-1])

        def cnn():
            with cast:
                out = model.bilm.char_cnn(unique)
            out.float().sum().backward()

        def lstm():
            with cast:
                outs, _ = model.bilm.lstm(x, mask)
            sum(o.float().sum() for o in outs).backward()

        def softmax():
            with torch.autocast("cpu", enabled=False):
                model.softmax(top.requires_grad_(), target).loss.backward()

        def step():
            with cast:
                loss = model(char_ids, words, lexical, contextual)
            opt.zero_grad(set_to_none=True)
            loss.total(1.0, 1.0).backward()
            opt.step()

        def adam():
            for p in model.parameters():
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
            opt.step()

        row = {}
        print(f"timing {dtype} ...", flush=True)
        for name, fn in (
            ("char CNN + highway + projection", cnn),
            ("biLSTM (2 layers, both directions)", lstm),
            ("adaptive softmax (float32 always)", softmax),
            ("Adam update", adam),
            ("whole step (LM + both teacher losses)", step),
        ):
            row[name] = n_tokens / timed(fn, args.steps)
        rows[dtype] = row
    if args.cutoffs:
        # The softmax's share of a step depends on where the cutoffs fall: the head holds the first cluster's
        # words in full, each tail cluster a projection of size P / 4^i.
        p = model.softmax.in_features
        top = torch.randn(len(target), p)
        print("\n| softmax cutoffs | forward + backward tokens/s | share of targets in the head |")
        print("|---|---|---|")
        for spec in args.cutoffs:
            cuts = [int(c) for c in spec.split(",")]
            sm = torch.nn.AdaptiveLogSoftmaxWithLoss(p, len(vocab), cuts, div_value=4.0)
            x = top.clone().requires_grad_()
            rate = n_tokens / timed(lambda: sm(x, target).loss.backward(), args.steps)
            print(f"| {spec} | {rate:,.0f} | {float((target < cuts[0]).float().mean()):.2f} |")
    print("\n| component | " + " | ".join(f"{d} tokens/s" for d in dtypes) + " |")
    print("|" + "---|" * (len(dtypes) + 1))
    for name in rows["float32"]:
        print(f"| {name} | " + " | ".join(f"{rows[d][name]:,.0f}" for d in dtypes) + " |")


if __name__ == "__main__":
    main()

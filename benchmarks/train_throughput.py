"""Training throughput (tokens/s) of candidate biLM sizes on this machine, to choose the default model.

Usage: python benchmarks/train_throughput.py [--seconds 60] [--threads 2]
Random sentences of 25 tokens from a 20k-word vocabulary; batch 64 sentences; Adam step included.
"""
from __future__ import annotations

import argparse
import random
import time

import torch

from elmo_core.bilm import BiLM
from elmo_core.config import BiLMConfig
from elmo_core.lm import BiLanguageModel
from elmo_core.train import make_batch
from elmo_core.vocab import Vocabulary

CNN_768 = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 256]]
CNN_512 = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 128], [6, 128]]
CANDIDATES = {
    "cnn512-c512-p128": (CNN_512, 512, 128),
    "cnn512-c1024-p128": (CNN_512, 1024, 128),
    "cnn768-c1024-p256": (CNN_768, 1024, 256),
    "cnn768-c2048-p256": (CNN_768, 2048, 256),
}


def options(filters, dim, proj):
    return {"lstm": {"use_skip_connections": True, "projection_dim": proj, "cell_clip": 3, "proj_clip": 3,
                     "dim": dim, "n_layers": 2},
            "char_cnn": {"activation": "relu", "filters": filters, "n_highway": 1, "embedding": {"dim": 16},
                         "n_characters": 262, "max_characters_per_token": 50}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(20000)]
    # Zipf-like sampling, as in running text (many tokens repeat within a batch).
    weights = [1.0 / (r + 1) for r in range(len(words))]
    vocab = Vocabulary(["<S>", "</S>", "<UNK>", *dict.fromkeys(words)])
    print(f"{'model':22s} {'params(M)':>9s} {'tokens/s':>9s}")
    for name, (filters, dim, proj) in CANDIDATES.items():
        if args.only and name not in args.only:
            continue
        model = BiLanguageModel(BiLM(BiLMConfig.from_dict(options(filters, dim, proj)), 0.1), len(vocab))
        opt = torch.optim.Adam(model.parameters(), 1e-3)
        tokens, start, steps = 0, None, 0
        while True:
            batch = [rng.choices(words, weights, k=25) for _ in range(64)]
            char_ids, wids = make_batch(batch, vocab)
            loss = model(char_ids, wids)
            opt.zero_grad()
            loss.mean.backward()
            opt.step()
            steps += 1
            if steps == 2:  # warm-up steps excluded
                start, tokens = time.time(), 0
            elif start:
                tokens += loss.tokens
                if time.time() - start > args.seconds:
                    break
        print(f"{name:22s} {model.bilm.num_parameters()/1e6:9.2f} {tokens/(time.time()-start):9.0f}", flush=True)


if __name__ == "__main__":
    main()

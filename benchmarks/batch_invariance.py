"""How far a stateless sentence's vectors move with its batch: the figure the README states.

    python -m benchmarks.batch_invariance [--model default] [--sentences 512] [--threads 2]

The first N sentences of the reference corpus (assets/reference), tokenized as the app does, are embedded
(a) each alone, (b) all together in batches of 64 (sorted by length, so each sits among sentences of about
its length and is padded to the longest), (c) each beside a 60-token sentence (padded to 60), and (d) each of
the first 64 among 63 copies of itself. Reported: the largest |difference| from (a) over every layer, token and unit,
the largest |value|, and their ratio. Differences are float32 rounding from matrix products whose
summation order depends on the batch's shape; repeated identical calls are bitwise equal (checked too).
"""

from __future__ import annotations

import argparse
import lzma

import numpy as np
import torch

from elmo_core import Embedder, tokenize
from elmo_core.paths import REFERENCE_CORPUS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with lzma.open(REFERENCE_CORPUS / "sentences.txt.xz", "rt", encoding="utf-8") as f:
        lines = [next(f).strip() for _ in range(args.sentences)]
    sentences = [tokenize(line)[:60] for line in lines if line.strip()]
    embedder = Embedder.bundled(args.model, device="cpu")
    alone = [embedder.embed_batch([s])[0] for s in sentences]
    again = [embedder.embed_batch([s])[0] for s in sentences[:32]]
    assert all(np.array_equal(a, b) for a, b in zip(alone, again)), "repeated identical calls differ"
    long = [f"w{i}" for i in range(60)]
    cases = {
        "batches of 64 (corpus order)": embedder.embed_batch(sentences, batch_size=64),
        "beside a 60-token sentence": [embedder.embed_batch([s, long])[0] for s in sentences],
        "among 63 copies": [embedder.embed_batch([s] * 64, batch_size=64)[0] for s in sentences[:64]],
    }
    top = max(float(np.abs(a).max()) for a in alone)
    print(
        f"model {args.model}, {len(sentences)} sentences, {args.threads} threads; largest |value| {top:.1f}; "
        "repeated identical calls: bitwise equal"
    )
    print(f"{'case':<30} {'max |diff|':>11} {'of the largest value':>21}")
    for name, arrays in cases.items():
        diff = max(float(np.abs(a - b).max()) for a, b in zip(alone, arrays))
        print(f"{name:<30} {diff:>11.2e} {diff / top:>21.1e}")


if __name__ == "__main__":
    main()

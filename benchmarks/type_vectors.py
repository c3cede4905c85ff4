"""Time the explorer's reference-corpus work on this machine: the layer-0 vectors of the vocabulary (computed
once per model in the app's background thread), one layer-0 neighbour search over them, reading the
reference corpus, and embedding one word's reference sentences at the app's cap.

Usage (from the repository root; --vocab 50000 is the app's vocabulary)::

    nice .venv/bin/python benchmarks/type_vectors.py [--vocab 50000] [--threads N] [--checkpoint DIR]
                                                     [--words bank spring the]

Model: --checkpoint (our format), else the shipped default (``elmo_core.model.loading.load_embedder``). The figures
are wall-clock seconds of the calls the app makes (``app.serving.type_vectors.TypeVectors.run_now``,
``TypeVectors.neighbours``, ``ReferenceCorpus.load``, ``Embedder.embed_batch`` on
``ReferenceCorpus.contexts(..., app.serving.corpus.MAX_REFERENCE_SENTENCES)``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vocab", type=int, default=50000)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--checkpoint", default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument("--words", nargs="*", default=["bank", "spring", "bat", "pitch", "the"])
    args = p.parse_args(argv)

    import streamlit.logger
    import torch

    streamlit.logger.set_log_level("error")
    from app.serving.corpus import MAX_REFERENCE_SENTENCES
    from app.serving.type_vectors import TypeVectors
    from elmo_core.data.reference import ReferenceCorpus
    from elmo_core.data.wordforms import word_forms
    from elmo_core.model.loading import load_embedder

    if args.threads:
        torch.set_num_threads(args.threads)
    embedder = load_embedder(None, None, args.checkpoint, device=args.device)
    print(
        f"model: {args.checkpoint or 'default'} ({embedder.num_parameters:,} parameters, {embedder.num_layers} "
        f"layers x {embedder.dim}); device {embedder.device}; torch threads {torch.get_num_threads()}, "
        f"CPUs {os.cpu_count()}"
    )
    t0 = time.perf_counter()
    corpus = ReferenceCorpus.load()
    print(
        f"read the reference corpus ({len(corpus):,} sentences, {len(corpus.words):,} indexed words): "
        f"{time.perf_counter() - t0:.2f} s"
    )

    words = corpus.vocabulary(args.vocab)
    embedder.type_vectors(words[:64])  # warm-up: first calls allocate
    types = TypeVectors(words, embedder.type_vectors).run_now()
    print(
        f"layer-0 vectors of the {len(words):,} most frequent word types: {types.seconds:.1f} s "
        f"({len(words) / types.seconds:,.0f} words/s; {types.state})"
    )

    for word in args.words:
        query = embedder.type_vectors([word])[0]
        t0 = time.perf_counter()
        found = types.neighbours(word, query, 10)
        search_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        sentences, total = corpus.contexts(word_forms(word), MAX_REFERENCE_SENTENCES)
        find_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        embedder.embed_batch([list(s) for s in sentences])
        embed_s = time.perf_counter() - t0
        print(
            f"{word!r}: layer-0 neighbours {search_ms:.0f} ms ({', '.join(w for w, _ in found[:6])}); "
            f"{total} reference sentences, {len(sentences)} looked up in {find_ms:.1f} ms and embedded in "
            f"{embed_s:.2f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

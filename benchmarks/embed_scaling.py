"""Tokens per second of ``python -m elmo_core embed`` in one process and on torchrun ranks (one thread each).

    python -m benchmarks.embed_scaling [--model default] [--sentences 4000] [--procs 1 2]

The first N sentences of the reference corpus (Moses-tokenized, one per line) are embedded with ``--all`` by
a plain process (``OMP_NUM_THREADS=1``) and by ``torchrun --standalone --nproc_per_node P`` (torchrun sets one
thread per rank). Wall time covers the whole command: start-up, model load, the biLM, writing, and for P > 1
the merge. The outputs are checked to hold the same keys and vectors (bitwise when the batches are the same,
which they are: see elmo_core.model.embed_file). On N GPUs: ``torchrun --nproc_per_node N -m elmo_core embed ...``
(each rank takes ``cuda:LOCAL_RANK``).
"""

from __future__ import annotations

import argparse
import lzma
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from elmo_core import tokenize
from elmo_core.paths import REFERENCE_CORPUS

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--sentences", type=int, default=4000)
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    with lzma.open(REFERENCE_CORPUS / "sentences.txt.xz", "rt", encoding="utf-8") as f:
        lines = [" ".join(tokenize(next(f).strip())) for _ in range(args.sentences)]
    tokens = sum(len(line.split()) for line in lines)
    with tempfile.TemporaryDirectory(dir=ROOT) as scratch:
        src = Path(scratch) / "in.txt"
        src.write_text("\n".join(lines) + "\n")
        results = {}
        for procs in args.procs:
            out = Path(scratch) / f"out{procs}.hdf5"
            embed = [
                "-m",
                "elmo_core",
                "embed",
                str(src),
                str(out),
                "--model",
                args.model,
                "--device",
                "cpu",
                "--quiet",
            ]
            command = (
                [sys.executable, *embed]
                if procs == 1
                else [
                    str(Path(sys.executable).parent / "torchrun"),
                    "--standalone",
                    "--nproc_per_node",
                    str(procs),
                    *embed,
                ]
            )
            start = time.perf_counter()
            subprocess.run(
                command,
                cwd=ROOT,
                env={**os.environ, "OMP_NUM_THREADS": "1"},
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            results[procs] = (time.perf_counter() - start, out)
        first = results[args.procs[0]][1]
        with h5py.File(first) as a:
            for _procs, (_, out) in results.items():
                with h5py.File(out) as b:
                    assert sorted(a) == sorted(b)
                    assert all(np.array_equal(a[k][()], b[k][()]) for k in a if k != "sentence_to_index")
        print(f"model {args.model}, {len(lines):,} sentences, {tokens:,} tokens; outputs equal bitwise")
        print(f"{'processes':>9} {'wall s':>8} {'tokens/s':>9} {'speed-up':>9}")
        base = results[args.procs[0]][0]
        for procs, (seconds, _) in results.items():
            print(f"{procs:>9} {seconds:>8.1f} {tokens / seconds:>9,.0f} {base / seconds:>9.2f}")


if __name__ == "__main__":
    main()

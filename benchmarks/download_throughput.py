"""Throughput of the published-model download path against a local mirror on 127.0.0.1 (issue 25's target:
at least 200 MB/s on a 2-core machine, i.e. limited by the disk, not by Python).

    python -m benchmarks.download_throughput [--model original] [--repeats 3] [--dir DIR]

A random biLM with the chosen published architecture is written in the ELMo HDF5 layout (``original``: the
same 374,434,792 bytes as the published file), served from memory by ``tests/mirror.py``, and fetched:

  disk write     the same bytes written to a file from memory (what the disk allows; no network, no Python loop)
  fetch          ``download.fetch``: HTTP streaming into the part file and the rename (no content check)
  download()     ``published.download``: both files, the length checks, every dataset read back and checked
                 (``elmo_hdf5.check_elmo_files``), the sha256 of both files and the manifest

MB = 10^6 bytes. The server runs in this process (a thread), so the figures include its share of the CPU.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import tempfile
import time
from pathlib import Path

import torch

from elmo_core.model import published as store
from elmo_core.model import published_table as table
from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.model.download import Policy, fetch
from elmo_core.model.elmo_hdf5 import export_elmo_hdf5
from tests.mirror import Mirror


def published_options(model: table.PublishedModel) -> dict:
    """The published options.json of ``model`` (docs/ELMO_SPEC.md 1.3)."""
    return {
        "lstm": {
            "use_skip_connections": True,
            "projection_dim": model.projection_dim,
            "cell_clip": 3,
            "proj_clip": 3,
            "dim": model.lstm_dim,
            "n_layers": 2,
        },
        "char_cnn": {
            "activation": "relu",
            "n_highway": model.highway,
            "embedding": {"dim": 16},
            "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="original", choices=list(table.PUBLISHED))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--dir", type=Path, default=None, help="scratch folder on the disk to measure (default: a temporary one)"
    )
    args = parser.parse_args()
    model = table.PUBLISHED[args.model]
    scratch = Path(tempfile.mkdtemp(prefix="elmo-dl-", dir=args.dir))
    try:
        import json

        config = BiLMConfig.from_dict(published_options(model))
        torch.manual_seed(0)
        options_path, weights_path = scratch / "options.json", scratch / "weights.hdf5"
        options_path.write_text(json.dumps(published_options(model)))
        export_elmo_hdf5(BiLM(config), weights_path)
        options, weights = options_path.read_bytes(), weights_path.read_bytes()
        size = len(weights)
        print(
            f"model {model.name}: weights.hdf5 {size:,} bytes"
            + (" (the published file's size)" if size == model.weights_bytes else "")
        )
        if model.weights_bytes is not None and size != model.weights_bytes:
            # h5py lays out a few metadata bytes differently from the file TensorFlow wrote: check this
            # file's own size instead, so that the size check still runs
            print(f"  (the published file has {model.weights_bytes:,}; the size check uses this file's)")
            table.PUBLISHED[model.name] = dataclasses.replace(model, weights_bytes=size)
        paths = model.paths()
        rows: dict[str, list[float]] = {"disk write": [], "fetch": [], "download()": []}
        with Mirror({paths["options.json"]: options, paths["weights.hdf5"]: weights}) as mirror:
            for _ in range(args.repeats):
                target = scratch / "disk.bin"
                start = time.perf_counter()
                with open(target, "wb") as f:
                    f.write(weights)
                    f.flush()
                    os.fsync(f.fileno())
                rows["disk write"].append(size / (time.perf_counter() - start) / 1e6)
                target.unlink()

                start = time.perf_counter()
                fetch(mirror.url + paths["weights.hdf5"], scratch / "fetched.hdf5", policy=Policy())
                os.sync()
                rows["fetch"].append(size / (time.perf_counter() - start) / 1e6)
                (scratch / "fetched.hdf5").unlink()

                cache = scratch / "cache"
                start = time.perf_counter()
                store.download(model.name, cache, mirror.url, policy=Policy())
                os.sync()
                rows["download()"].append(size / (time.perf_counter() - start) / 1e6)
                shutil.rmtree(cache)
        print(f"{'step':<12} {'median MB/s':>12}   all runs (MB/s)")
        for name, values in rows.items():
            ordered = sorted(values)
            print(f"{name:<12} {ordered[len(ordered) // 2]:>12,.0f}   {', '.join(f'{v:,.0f}' for v in values)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

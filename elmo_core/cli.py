"""Command line: ``python -m elmo_core {embed,train,evaluate,probe} ...`` (argparse; each subcommand calls the library)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _load_embedder(args) -> "Embedder":
    from .embedder import Embedder

    if args.options or args.weights:
        if not (args.options and args.weights):
            raise SystemExit("error: give both --options and --weights (or neither, for the default model)")
        return Embedder.from_elmo_files(args.options, args.weights, device=args.device)
    if getattr(args, "checkpoint", None):
        return Embedder.from_checkpoint(args.checkpoint, device=args.device)
    return Embedder.default(device=args.device)


def cmd_embed(args) -> int:
    """One HDF5 dataset per input line (key = line index), like the old ``allennlp elmo`` command."""
    import h5py
    import numpy as np
    from tqdm import tqdm

    src = Path(args.input_file)
    if not src.is_file():
        raise SystemExit(f"error: input file not found: {src}")
    try:
        lines = src.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise SystemExit(f"error: {src} is not UTF-8 text (one whitespace-tokenized sentence per line expected)")
    sentences = [line.split() for line in lines]
    embedder = _load_embedder(args)
    out = Path(args.output_file)
    tmp = out.with_name(out.name + ".partial")
    with h5py.File(tmp, "w") as f, tqdm(total=len(sentences), unit="sent", disable=args.quiet) as bar:
        for start in range(0, len(sentences), args.batch_size):
            batch = sentences[start : start + args.batch_size]
            for offset, layers in enumerate(embedder.embed_batch(batch, args.batch_size)):
                if args.mode == "top":
                    layers = layers[-1]
                elif args.mode == "average":
                    layers = layers.mean(axis=0)
                f.create_dataset(str(start + offset), data=layers.astype(np.float32))
            bar.update(len(batch))
        f.create_dataset("sentence_to_index", data=json.dumps({" ".join(s): str(i) for i, s in enumerate(sentences)}))
    tmp.replace(out)  # only a complete file takes the output name
    print(f"wrote {len(sentences)} datasets ({args.mode}) to {out}", file=sys.stderr)
    return 0


def cmd_train(args) -> int:
    from .train import TrainConfig, train

    cfg = TrainConfig.load(args.config)
    for item in args.set or []:
        key, _, value = item.partition("=")
        if key not in TrainConfig.__dataclass_fields__:
            raise SystemExit(f"error: unknown config key {key!r}")
        setattr(cfg, key, type(getattr(cfg, key))(json.loads(value)) if not isinstance(getattr(cfg, key), str) else value)
    result = train(cfg, resume=args.resume, progress=not args.quiet)
    print(json.dumps({k: v for k, v in result.items() if k != "param_groups"}, indent=1))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m elmo_core", description="ELMo biLM tools")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("embed", help="embed a text file (one whitespace-tokenized sentence per line) into HDF5")
    p.add_argument("input_file")
    p.add_argument("output_file")
    p.add_argument("--options", help="ELMo options.json (with --weights); default: the shipped model")
    p.add_argument("--weights", help="ELMo weights.hdf5")
    p.add_argument("--checkpoint", help="a folder with options.json + model.safetensors")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--all", dest="mode", action="store_const", const="all", help="(L+1, n, 2P) per line [default]")
    mode.add_argument("--top", dest="mode", action="store_const", const="top", help="top layer only, (n, 2P)")
    mode.add_argument("--average", dest="mode", action="store_const", const="average", help="mean of the layers, (n, 2P)")
    p.set_defaults(mode="all", func=cmd_embed)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: GPU if present)")
    p.add_argument("--quiet", action="store_true")

    p = sub.add_parser("train", help="train a biLM (see configs/)")
    p.add_argument("config")
    p.add_argument("--resume", action="store_true", help="continue the run's checkpoint exactly")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_train)
    from . import evaluate, probes
    evaluate.add_evaluate_parser(sub)  # added by the probes helper: `evaluate` (elmo_core/evaluate.py)
    probes.add_probe_parser(sub)  # added by the probes helper: `probe` (elmo_core/probes.py)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

"""Command line: ``python -m elmo_core {embed,train,evaluate,probe} ...`` (argparse; each subcommand calls the library)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
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


MAX_BATCH_SIZE = 4096
DEFAULT_MAX_TOKENS = 1024


def _positive(name: str, top: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}") from None
        if not 1 <= value <= top:
            raise argparse.ArgumentTypeError(f"{name} must be between 1 and {top:,}, got {value}")
        return value
    return parse


def plan_batches(lengths: list[int], batch_size: int, max_tokens: int) -> list[list[tuple[int, int, int]]]:
    """Group sentences into biLM calls whose padded size stays within ``max_tokens``.

    Args:
        lengths: tokens per sentence, in input order.
        batch_size: at most this many pieces per call.
        max_tokens: bound on (pieces in the call) x (longest piece's tokens). A sentence longer than this
            is cut into consecutive windows of ``max_tokens`` tokens, each embedded on its own.
    Returns:
        calls, each a list of (sentence index, first token, end token) pieces, in input order; empty
        sentences get one piece (i, 0, 0).
    """
    pieces = []
    for i, n in enumerate(lengths):
        if n == 0:
            pieces.append((i, 0, 0))
        for first in range(0, n, max_tokens):
            pieces.append((i, first, min(n, first + max_tokens)))
    calls: list[list[tuple[int, int, int]]] = []
    current: list[tuple[int, int, int]] = []
    longest = 0
    for piece in pieces:
        size = piece[2] - piece[1]
        if current and (len(current) + 1 > batch_size or (len(current) + 1) * max(longest, size) > max_tokens):
            calls.append(current)
            current, longest = [], 0
        current.append(piece)
        longest = max(longest, size)
    if current:
        calls.append(current)
    return calls


def _check_paths(src: Path, out: Path) -> None:
    if not src.is_file():
        raise SystemExit(f"error: input file not found: {src}")
    if out.is_dir():
        raise SystemExit(f"error: the output {out} is a directory; give a file name such as {out / 'vectors.hdf5'}")
    if not out.parent.is_dir():
        raise SystemExit(f"error: the output's folder {out.parent} does not exist")
    if out.exists() and os.path.samefile(src, out) or out.resolve() == src.resolve():
        raise SystemExit(f"error: the output {out} is the input file; choose another output name")


def read_sentences(src: Path) -> list[list[str]]:
    """The input's sentences: one per line as ``elmo_core.text`` defines lines (``\n`` only, BOM removed)
    and tokens (whitespace after cleaning). Raises SystemExit for a file that is not UTF-8 text."""
    from .text import line_tokens, split_lines

    try:
        text = src.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise SystemExit(f"error: {src} is not UTF-8 text (byte {err.start + 1} cannot be decoded); one "
                         "whitespace-tokenized sentence per line expected") from None
    except OSError as err:
        raise SystemExit(f"error: cannot read {src}: {err.strerror}") from None
    return [line_tokens(line) for line in split_lines(text)]


def cmd_embed(args) -> int:
    """One HDF5 dataset per input line (key = line index), like the old ``allennlp elmo`` command.

    The output appears only when complete: it is written to a temporary file next to it and renamed at
    the end; on an error or Ctrl-C that file is removed and an existing output stays as it was.
    """
    import h5py
    import numpy as np
    from tqdm import tqdm

    src, out = Path(args.input_file), Path(args.output_file)
    _check_paths(src, out)
    sentences = read_sentences(src)
    embedder = _load_embedder(args)
    calls = plan_batches([len(s) for s in sentences], args.batch_size, args.max_tokens)
    cut = sum(1 for s in sentences if len(s) > args.max_tokens)
    if cut:
        print(f"note: {cut} line(s) have more than {args.max_tokens} tokens (--max-tokens); they are embedded in "
              f"windows of {args.max_tokens} tokens, so vectors near a window's edge see less context",
              file=sys.stderr)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with h5py.File(tmp, "w") as f, tqdm(total=len(sentences), unit="sent", disable=args.quiet) as bar:
            parts: dict[int, list[np.ndarray]] = {}
            for call in calls:
                arrays = embedder.embed_batch([sentences[i][a:b] for i, a, b in call], len(call))
                for (i, a, b), layers in zip(call, arrays):
                    parts.setdefault(i, []).append(layers)
                    if b < len(sentences[i]):
                        continue  # more windows of this line follow
                    layers = np.concatenate(parts.pop(i), axis=1) if a > 0 else parts.pop(i)[0]
                    if args.mode == "top":
                        layers = layers[-1]
                    elif args.mode == "average":
                        layers = layers.mean(axis=0)
                    f.create_dataset(str(i), data=layers.astype(np.float32))
                    bar.update(1)
            index = {" ".join(s): str(i) for i, s in enumerate(sentences)}  # a repeated line: its last key
            f.create_dataset("sentence_to_index", data=json.dumps(index))
        tmp.replace(out)  # only a complete file takes the output name
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
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
    p.add_argument("--batch-size", type=_positive("--batch-size", MAX_BATCH_SIZE), default=64,
                   help="sentences per biLM call (1..4096)")
    p.add_argument("--max-tokens", type=_positive("--max-tokens", 1_000_000), default=DEFAULT_MAX_TOKENS,
                   help="bound on sentences x longest sentence per biLM call, which bounds memory (see "
                        "docs/INPUT_RULES.md); longer lines are embedded in windows of this many tokens")
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
    """Run a subcommand. Errors end with a one-line message and exit status 2 (1 for an unexpected
    OSError, 130 for Ctrl-C), never a traceback for bad input."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted: nothing was written (an existing output file is unchanged)", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # disk full, permissions, ...
        print(f"error: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", file=sys.stderr)
        return 1

"""``python -m elmo_core embed``: a text file, one whitespace-tokenized sentence per line, into HDF5 (one
dataset per line, like the old ``allennlp elmo`` command)."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import threading
from pathlib import Path

from elmo_core.cli.common import Stopped, load_embedder, positive

MAX_BATCH_SIZE = 4096
DEFAULT_MAX_TOKENS = 1024
STDIN = "-"


def _check_paths(src: Path | str, out: Path) -> None:
    """Refuse input and output paths that cannot work (missing, a folder, a link, the input itself, a folder this
    user cannot write), before the model is loaded.
    Raises: ValueError (exit status 2) naming the path and what to do instead."""
    if str(out) == STDIN:
        raise ValueError(
            "the output cannot be '-' (standard output): HDF5 needs a file it can seek in; give a "
            "file name such as vectors.hdf5"
        )
    if src != STDIN and not Path(src).is_file():
        raise ValueError(f"input file not found: {src}")
    if out.is_dir():
        raise ValueError(f"the output {out} is a directory; give a file name such as {out / 'vectors.hdf5'}")
    if not out.parent.is_dir():
        what = "is a file, not a folder" if out.parent.exists() else "does not exist"
        raise ValueError(f"the output's folder {out.parent} {what}")
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise ValueError(_unwritable(out))
    # The finished file is renamed over the output, which would replace a device, a pipe or a link itself.
    if out.is_symlink():
        raise ValueError(f"the output {out} is a symbolic link; give the path of a regular file")
    if out.exists() and not out.is_file():
        raise ValueError(f"the output {out} is not a regular file (a device, pipe or socket); give a file name")
    if src != STDIN and (out.exists() and os.path.samefile(src, out) or out.resolve() == Path(src).resolve()):
        raise ValueError(f"the output {out} is the input file; choose another output name")


def _unwritable(out: Path, why: str = "permission denied") -> str:
    return (
        f"cannot write the output {out} ({why}): the output is written beside it and renamed, so its folder "
        f"{out.parent} must be writable; choose another output"
    )


def read_sentences(src: Path | str) -> list[list[str]]:
    """The input's sentences (``-``: standard input): one per line as ``elmo_core.data.text`` defines lines
    (``\\r\\n``, ``\\r`` or ``\\n``; BOM removed) and tokens (whitespace after cleaning).
    Raises ValueError for input that is not UTF-8 text or cannot be read."""
    from elmo_core.data.text import line_tokens, split_lines

    name = "standard input" if src == STDIN else str(src)
    try:
        data = sys.stdin.buffer.read() if src == STDIN else Path(src).read_bytes()
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{name} is not UTF-8 text (byte {err.start + 1} cannot be decoded); one "
            "whitespace-tokenized sentence per line expected"
        ) from None
    except OSError as err:
        raise ValueError(f"cannot read {name}: {err.strerror}") from None
    return [line_tokens(line) for line in split_lines(text)]


def _disk_full(exc: BaseException) -> bool:
    return getattr(exc, "errno", None) == 28 or "No space left on device" in str(exc)


@contextlib.contextmanager
def _ctrl_c_between_batches():
    """Defer Ctrl-C and SIGTERM to the next batch boundary; yields a function that says whether one came.

    Python raises KeyboardInterrupt wherever the main thread happens to be, and when that is a finalizer (a
    weakref callback inside torch or h5py) it prints "Exception ignored" and goes on, so the first Ctrl-C was
    sometimes lost. SIGTERM would end the process without cleaning up at all. A second signal while one is
    pending stops at once, as Python's default for Ctrl-C would.
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    pending: dict[str, type[KeyboardInterrupt] | None] = {"now": None}

    def handler(signum, frame):
        kind = Stopped if signum == signal.SIGTERM else KeyboardInterrupt
        if pending["now"] is not None:
            raise kind
        pending["now"] = kind

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield lambda: pending["now"]
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def cmd_embed(args) -> int:
    """One HDF5 dataset per input line (key = line index), like the old ``allennlp elmo`` command; under
    torchrun, the lines are shared among the ranks (``elmo_core.model.embed_file``).

    The output appears only when complete: it is written to a temporary file next to it and renamed at
    the end; on an error or Ctrl-C that file is removed and an existing output stays as it was.
    Raises: ValueError naming the output when its folder cannot be written (permissions, a read-only file
    system); OSError for a full disk.
    """
    from tqdm import tqdm

    from elmo_core.model.embed_file import Ranks, embed_file, embed_file_sharded, plan_batches

    src = args.input_file if args.input_file == STDIN else Path(args.input_file)
    out = Path(args.output_file)
    ranks = Ranks.from_environment()
    if ranks.world > 1 and src == STDIN:
        raise ValueError("under torchrun every rank reads the input itself: give a file, not '-'")
    _check_paths(src, out)
    sentences = read_sentences(src)
    if ranks.world > 1 and args.device is None:
        import torch

        if torch.cuda.is_available():  # each rank its own GPU
            args.device = f"cuda:{ranks.local_rank % torch.cuda.device_count()}"
    embedder = load_embedder(args)
    calls = plan_batches([len(s) for s in sentences], args.batch_size, args.max_tokens)
    cut = sum(1 for s in sentences if len(s) > args.max_tokens)
    if cut and ranks.rank == 0:
        print(
            f"note: {cut} line(s) have more than {args.max_tokens} tokens (--max-tokens); they are embedded in "
            f"windows of {args.max_tokens} tokens, so vectors near a window's edge see less context",
            file=sys.stderr,
        )
    try:
        with _ctrl_c_between_batches() as interrupted:
            if ranks.world > 1:
                identity = {
                    "input": _sha256_of_sentences(sentences),
                    "model": _model_identity(args),
                    "mode": args.mode,
                    "batch_size": args.batch_size,
                    "max_tokens": args.max_tokens,
                }
                wrote = embed_file_sharded(
                    embedder.embed_batch,
                    sentences,
                    out,
                    args.mode,
                    calls,
                    ranks,
                    identity,
                    progress=None if args.quiet else _say,
                    stop=interrupted,
                )
                if not wrote:
                    return 0
            else:
                with tqdm(total=len(sentences), unit="sent", disable=args.quiet) as bar:
                    embed_file(
                        embedder.embed_batch, sentences, out, args.mode, calls, progress=bar.update, stop=interrupted
                    )
    except OSError as exc:
        if _disk_full(exc):
            raise OSError(
                28, f"no space left on the device for {out} (nothing was written; an existing output is unchanged)"
            ) from None
        if isinstance(exc, PermissionError) or exc.errno == errno.EROFS:
            raise ValueError(_unwritable(out, (exc.strerror or "permission denied").lower())) from None
        raise
    print(f"wrote {len(sentences)} datasets ({args.mode}) to {out}", file=sys.stderr)
    return 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _sha256_of_sentences(sentences: list[list[str]]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for tokens in sentences:
        digest.update(" ".join(tokens).encode("utf-8") + b"\n")
    return digest.hexdigest()


def _model_identity(args) -> dict:
    """What names the model of this run, for the parts folder of a sharded run: the files with their sizes
    and modification times, or the bundled/published name."""

    def stat(path):
        if not path:
            return None
        p = Path(path)
        files = sorted(p.iterdir()) if p.is_dir() else [p]
        return [[str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns] for f in files if f.is_file()]

    return {
        "model": getattr(args, "model", None),
        "options": stat(args.options),
        "weights": stat(args.weights),
        "checkpoint": stat(getattr(args, "checkpoint", None)),
    }


def add_embed_parser(sub) -> None:
    p = sub.add_parser("embed", help="embed a text file (one whitespace-tokenized sentence per line) into HDF5")
    p.add_argument("input_file")
    p.add_argument("output_file")
    p.add_argument("--options", help="ELMo options.json (with --weights); default: the shipped model")
    p.add_argument("--weights", help="ELMo weights.hdf5")
    p.add_argument("--checkpoint", help="a folder with options.json + model.safetensors")
    p.add_argument(
        "--model",
        help="a bundled model (default, lm-only) or a downloaded published one (small, "
        "medium, original, original-5.5b)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--all", dest="mode", action="store_const", const="all", help="(L+1, n, 2P) per line [default]")
    mode.add_argument("--top", dest="mode", action="store_const", const="top", help="top layer only, (n, 2P)")
    mode.add_argument(
        "--average", dest="mode", action="store_const", const="average", help="mean of the layers, (n, 2P)"
    )
    p.set_defaults(mode="all", func=cmd_embed)
    p.add_argument(
        "--batch-size",
        type=positive("--batch-size", MAX_BATCH_SIZE),
        default=64,
        help="sentences per biLM call (1..4096)",
    )
    p.add_argument(
        "--max-tokens",
        type=positive("--max-tokens", 1_000_000),
        default=DEFAULT_MAX_TOKENS,
        help="bound on sentences x longest sentence per biLM call, which bounds memory (see "
        "docs/INPUT_RULES.md); longer lines are embedded in windows of this many tokens",
    )
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: GPU if present)")
    p.add_argument("--quiet", action="store_true")

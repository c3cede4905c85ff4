"""Command line: ``python -m elmo_core {embed,train,evaluate,probe,corpus,teacher,download,atlas} ...``.

One module per command (``train`` also holds ``teacher``), each with its ``add_*_parser`` and its ``cmd_*``
function, which only parses, calls the library and prints; ``common`` holds what several share. No library
module imports this package or argparse.
"""

from __future__ import annotations

import argparse
import sys

from elmo_core.cli.atlas import add_atlas_parser
from elmo_core.cli.common import Stopped
from elmo_core.cli.corpus import add_corpus_parser
from elmo_core.cli.download import add_download_parser
from elmo_core.cli.embed import add_embed_parser
from elmo_core.cli.evaluate import add_evaluate_parser
from elmo_core.cli.probe import add_probe_parser
from elmo_core.cli.train import add_teacher_parser, add_train_parser


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m elmo_core`` parser; its subcommands in the order ``--help`` lists them."""
    parser = argparse.ArgumentParser(prog="python -m elmo_core", description="ELMo biLM tools")
    sub = parser.add_subparsers(dest="command", required=True)
    add_embed_parser(sub)
    add_train_parser(sub)
    add_evaluate_parser(sub)
    add_probe_parser(sub)
    add_corpus_parser(sub)
    add_teacher_parser(sub)
    add_download_parser(sub)
    add_atlas_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a subcommand. Errors end with a one-line message, never a traceback for anything a user can cause.
    Exit status: 0 done; 2 usage and path errors, bad model files, bad input; 1 a failure of the machine or the
    network (disk full, a download that failed, ``download --verify`` finding damage); 130 Ctrl-C, 143 SIGTERM
    during ``embed``."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt as exc:
        print("interrupted: nothing was written (an existing output file is unchanged)", file=sys.stderr)
        return 143 if isinstance(exc, Stopped) else 130
    except (FileNotFoundError, ValueError, FileExistsError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # disk full, permissions, ...
        print(f"error: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", file=sys.stderr)
        return 1

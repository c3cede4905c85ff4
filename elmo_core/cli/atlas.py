"""``python -m elmo_core atlas build CORPUS --out DIR``: the atlas of a corpus (every occurrence of its frequent
words with their layer vectors, and a nearest-neighbour index; docs/ATLAS.md), in one process or under torchrun
as ``embed``; ``atlas info DIR [WORD]``: what an atlas holds, and a word's occurrences."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from elmo_core.cli.common import Stopped, named_model, positive
from elmo_core.cli.embed import DEFAULT_MAX_TOKENS, MAX_BATCH_SIZE, _ctrl_c_between_batches, _say


def cmd_atlas_build(args) -> int:

    from elmo_core.atlas.build import check_output
    from elmo_core.model.shards import Ranks

    ranks = Ranks.from_environment()
    corpus, out = Path(args.corpus), Path(args.out)
    if not corpus.is_file():
        raise ValueError(f"corpus file not found: {corpus}" if not corpus.exists() else f"{corpus} is not a file")
    check_output(out)  # before the model is loaded
    device = args.device
    if ranks.world > 1 and device is None:
        import torch

        if torch.cuda.is_available():  # each rank its own GPU
            device = f"cuda:{ranks.local_rank % torch.cuda.device_count()}"
    embedder = named_model(args.model, device)
    one = ranks.world == 1
    try:
        return _build(args, corpus, out, embedder, ranks, one)
    except KeyboardInterrupt as exc:  # the parts folder stays: the same command resumes (not embed's message)
        print(
            f"interrupted: {out} was not written; the finished parts are kept beside it, and running the same "
            "command again resumes from them",
            file=sys.stderr,
        )
        return 143 if isinstance(exc, Stopped) else 130


def _build(args, corpus, out, embedder, ranks, one) -> int:
    from tqdm import tqdm

    from elmo_core.atlas.build import build_atlas

    with (
        tqdm(unit="sent", disable=args.quiet or not one, desc="atlas") as bar,
        _ctrl_c_between_batches() as interrupted,
    ):
        manifest = build_atlas(
            corpus,
            out,
            embedder,
            args.model,
            min_count=args.min_count,
            batch_size=args.batch_size,
            max_tokens=args.max_tokens,
            ranks=ranks,
            progress=None if args.quiet or one else _say,
            advance=bar.update,
            stop=interrupted,
            planned=lambda n: setattr(bar, "total", n),
        )
    if manifest is not None:
        c = manifest["counts"]
        print(
            f"wrote the atlas {out}: {c['occurrences']:,} occurrences of {c['words']:,} words in {c['sentences']:,} "
            f"sentences ({c['tokens']:,} tokens)",
            file=sys.stderr,
        )
    return 0


def cmd_atlas_info(args) -> int:
    from elmo_core.atlas.store import Atlas

    atlas = Atlas.open(args.dir)
    if args.word is None:
        print(json.dumps(atlas.manifest, indent=1))
        return 0
    _, sentences, positions = atlas.occurrences(args.word)
    print(f"{args.word}: {len(sentences)} occurrences", file=sys.stderr)
    for i, p in zip(sentences[: args.limit].tolist(), positions[: args.limit].tolist()):
        tokens = atlas.sentence(i)
        print(f"{i}\t{p}\t{' '.join(tokens[:p])} [{tokens[p]}] {' '.join(tokens[p + 1 :])}")
    return 0


def add_atlas_parser(sub) -> None:
    from elmo_core.atlas.words import DEFAULT_MIN_COUNT

    p = sub.add_parser("atlas", help="an atlas of a corpus: every occurrence of its frequent words, searchable")
    commands = p.add_subparsers(dest="atlas_command", required=True)
    build = commands.add_parser("build", help="embed a corpus (one sentence per line) into an atlas folder")
    build.add_argument("corpus", help="text file, one whitespace-tokenized sentence per line (UTF-8)")
    build.add_argument("--out", required=True, help="the atlas folder (new, empty, or an atlas to replace)")
    build.add_argument("--model", default="default", help="a bundled or downloaded published model (default)")
    build.add_argument(
        "--min-count",
        type=positive("--min-count", 1_000_000),
        default=DEFAULT_MIN_COUNT,
        help=f"keep words with at least this many occurrences (default {DEFAULT_MIN_COUNT}); stop words never",
    )
    build.add_argument("--batch-size", type=positive("--batch-size", MAX_BATCH_SIZE), default=64)
    build.add_argument("--max-tokens", type=positive("--max-tokens", 1_000_000), default=DEFAULT_MAX_TOKENS)
    build.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: GPU if present)")
    build.add_argument("--quiet", action="store_true")
    build.set_defaults(func=cmd_atlas_build)
    info = commands.add_parser("info", help="an atlas's manifest, or a word's occurrences in their sentences")
    info.add_argument("dir")
    info.add_argument("word", nargs="?")
    info.add_argument("--limit", type=positive("--limit", 10**9), default=20, help="occurrences shown (20)")
    info.set_defaults(func=cmd_atlas_info)

"""``python -m elmo_core probe``: what each layer knows (the probes of ``elmo_core.probes``)."""

from __future__ import annotations

import sys
from pathlib import Path

from elmo_core.cli.common import load_embedder


def cmd_probe(args) -> int:
    """``python -m elmo_core probe``: run the probes, print the table, write JSON (+ .md beside it)."""
    import torch

    from elmo_core.probes import TASKS, load_report, markdown_table, new_report, prepare_probe_data, run_probe

    if args.prepare:
        for message in prepare_probe_data():
            print(message)
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    embedder = load_embedder(args)
    report = new_report(embedder)
    out = Path(args.out) if args.out else None
    if out and out.is_file():  # add to the results of the same model
        try:
            old = load_report(out)
            if old.model.fingerprint == report.model.fingerprint:
                report.tasks.update(old.tasks)
        except ValueError as err:
            print(f"note: {out} is replaced, its results are not kept ({err})", file=sys.stderr)
    tasks = TASKS if args.task == "all" else (args.task,)
    for task in tasks:
        print(
            f"{task}: running ({args.size} size{f', max items {args.max_items}' if args.max_items else ''}) ...",
            file=sys.stderr,
        )
        last = [-1]

        def progress(f: float, text: str) -> None:
            if int(f * 10) != last[0]:
                last[0] = int(f * 10)
                print(f"  {100 * f:3.0f}% {text}", file=sys.stderr)

        report.tasks[task] = run_probe(
            embedder, task, args.size, args.max_items, args.seed, args.wordnet_dir, args.brown_dir, progress
        )
        print(f"{task}: {report.tasks[task].seconds} s", file=sys.stderr)
    table = markdown_table(report)
    print(table)
    if out:
        report.save(out)
        out.with_suffix(".md").write_text(table + "\n", encoding="utf-8")
        print(f"wrote {out} and {out.with_suffix('.md')}", file=sys.stderr)
    return 0


def add_probe_parser(sub) -> None:
    from elmo_core.probes import SIZES, TASKS

    about = (
        "what each layer knows: the sense-means (wsd), part-of-speech (pos) and leave-one-out sense "
        "(loo_sense) probes (paper 5.3)"
    )
    p = sub.add_parser("probe", help=about, description=about[0].upper() + about[1:] + ".")
    p.add_argument(
        "--task",
        choices=[*TASKS, "all"],
        default="all",
        help="; ".join(f"{name}: {t.title}" for name, t in TASKS.items()) + "; all: every task (default)",
    )
    p.add_argument("--options", help="ELMo options.json (with --weights); default: the shipped model")
    p.add_argument("--weights", help="ELMo weights.hdf5")
    p.add_argument("--checkpoint", help="a folder with options.json + model.safetensors")
    sizes = "; ".join(
        name + " " + ", ".join(f"{k} {n} / {t.sizes['quick'][k]}" for k, n in t.sizes["full"].items())
        for name, t in TASKS.items()
    )
    p.add_argument(
        "--size", choices=list(SIZES), default="full", help=f"the subsample, full / quick (0 = all): {sizes}"
    )
    p.add_argument(
        "--max-items",
        type=int,
        default=0,
        help="override the subsample: sense items (wsd, loo_sense; whole words), POS training sentences",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--wordnet-dir", help="WordNet dict folder (default: $ELMO_WORDNET_DIR or /usr/share/wordnet)")
    p.add_argument("--brown-dir", help="Brown folder with ca01..cr09 (default: $ELMO_BROWN_DIR or data/probes/...)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: GPU if present)")
    p.add_argument(
        "--out",
        help="results JSON (a table goes to the same name with .md); tasks of the same model "
        "already in the file are kept",
    )
    p.add_argument(
        "--prepare",
        action="store_true",
        help="fetch the probe data (WordNet, Brown) into data/probes/ at pinned versions and exit",
    )
    p.set_defaults(func=cmd_probe)

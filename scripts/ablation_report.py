"""The ablation table of the model card: held-out perplexity per direction, the sense probes per layer, CPU-hours.

Usage (after the four runs of configs/ablation-*.json, from the repository root):

    python scripts/ablation_report.py runs/ablation-lm runs/ablation-lex runs/ablation-ctx runs/ablation-both \
        [--corpus-dir data/corpus] [--wordnet-dir DIR] [--threads 2] [--out assets/ablation.json]

Each run folder is scored on its ``last`` export (the biLM as shipped: heads dropped) and its CPU time is read
from ``log.jsonl`` (``train_seconds`` of the last record times the configured threads). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from elmo_core.data.senses import read_sense_sentences, read_wordnet_examples, subsample_keys
from elmo_core.model.embedder import Embedder
from elmo_core.model.strict_json import loads_strict
from elmo_core.paths import SENSE_PROBE
from elmo_core.probes.loo_sense import loo_sense_probe
from elmo_core.training.evaluate import heldout_perplexity
from elmo_core.training.train import read_sentences


def cpu_hours(run: Path) -> tuple[float, int, int]:
    """(CPU-hours of training, steps, tokens seen) from the run's log and config.

    The process CPU time when the log has it (``cpu_seconds``), else wall time times the configured threads
    (an upper bound on a shared machine)."""
    rows = [
        loads_strict(line, "log.jsonl", constants=True)
        for line in (run / "log.jsonl").read_text().splitlines()
        if line.strip()
    ]
    last = [r for r in rows if "train_seconds" in r][-1]
    if "cpu_seconds" in last:
        return last["cpu_seconds"] / 3600, last["step"], last["tokens_seen"]
    threads = loads_strict((run / "config.json").read_text(), "config.json").get("threads") or torch.get_num_threads()
    return last["train_seconds"] * threads / 3600, last["step"], last["tokens_seen"]


def score(export: Path, corpus_dir: Path, wordnet_dir: str | None, max_wordnet: int) -> dict:
    embedder = Embedder.from_checkpoint(export, device="cpu")
    out = {"perplexity": heldout_perplexity(export, read_sentences(corpus_dir / "test.txt"))}
    out["probe"] = loo_sense_probe(
        embedder, read_sense_sentences(SENSE_PROBE), dataset="sense probe (34 words)"
    ).to_evaluation_json()
    try:
        items = subsample_keys(read_wordnet_examples(wordnet_dir), max_wordnet)
        out["wordnet"] = loo_sense_probe(embedder, items, dataset="WordNet examples (weak signal)").to_evaluation_json()
    except FileNotFoundError as err:
        print(f"WordNet probe skipped: {err}", file=sys.stderr)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--corpus-dir", type=Path, default=Path("data/corpus"))
    ap.add_argument("--wordnet-dir")
    ap.add_argument("--max-wordnet", type=int, default=0, help="WordNet items (0 = all)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    results = {}
    for run in args.runs:
        print(f"scoring {run} ...", file=sys.stderr)
        hours, steps, tokens = cpu_hours(run)
        results[run.name] = {
            "cpu_hours": round(hours, 3),
            "steps": steps,
            "tokens_seen": tokens,
            **score(run / "last", args.corpus_dir, args.wordnet_dir, args.max_wordnet),
        }
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    print("| run | steps | CPU-h | ppl fwd / bwd | probe L0 | probe L1 | probe L2 | WordNet L0 / L1 / L2 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        p, pr = r["perplexity"], r["probe"]
        cells = [f"{100 * a:.1f} / {s:.2f}" for a, s in zip(pr["layers"], pr["silhouette"])]
        wn = " / ".join(f"{100 * a:.1f}" for a in r["wordnet"]["layers"]) if "wordnet" in r else "-"
        print(
            f"| {name} | {r['steps']} | {r['cpu_hours']:.2f} | {p['forward']:.1f} / {p['backward']:.1f} | "
            + " | ".join(cells)
            + f" | {wn} |"
        )
    print("\nProbe cells: leave-one-out 1-NN accuracy % / silhouette by sense (assets/probes/SENSE_PROBE.md).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

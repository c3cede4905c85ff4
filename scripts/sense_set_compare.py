"""Several models side by side on one or more sets of sense sentences: leave-one-out 1-NN % per layer and silhouette.

Usage:
    python scripts/sense_set_compare.py [--sentences FILE [FILE ...] --] MODEL [MODEL ...]

(the ``--`` ends the list of sets).

A MODEL is a bundled model's name (``default``, ``lm-only``) or a checkpoint folder (options.json +
model.safetensors, e.g. ``runs/stage8/last``). Scores come from ``elmo_core.probes.loo_sense`` (the probe of
``python -m elmo_core evaluate``): % of occurrences whose nearest other occurrence of the word (cosine) has
the same sense, per layer and for the equal mix, with its standard error over items (binomial), and the
silhouette by sense (cosine, averaged over words). Used to choose between trained models on sentences that
steered no training (``assets/probes/SENSE_PROBE.md``, "Held-out sentences"). With several sets (default: the
first held-out set) a last table pools each model's layer-2 and equal-mix scores over all their items.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(model: str):
    from elmo_core import Embedder

    path = Path(model)
    if path.is_dir():
        return Embedder.from_checkpoint(path, device="cpu")
    return Embedder.bundled(model, device="cpu")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="bundled model names or checkpoint folders")
    ap.add_argument(
        "--sentences",
        type=Path,
        nargs="+",
        default=[ROOT / "assets" / "probes" / "holdout_sentences.tsv"],
        help="one or more sense sets (word, sense, sentence TSV)",
    )
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import torch

    from elmo_core.data.senses import read_sense_sentences
    from elmo_core.probes.loo_sense import loo_sense_probe

    torch.set_num_threads(args.threads)
    embedders = {model: load(model) for model in args.models}
    pooled = {model: [0.0, 0.0, 0] for model in args.models}  # correct in layer 2, in the mix, items
    for path in args.sentences:
        items = read_sense_sentences(path)
        words = len({item.key for item in items})
        print(f"\n{path.name}: {len(items)} sentences, {words} words; 1-NN % (standard error) / silhouette")
        print("| model | layer 0 | layer 1 | layer 2 | equal mix | bag of layer-0 context |")
        print("|---|---|---|---|---|---|")
        for model, embedder in embedders.items():
            result = loo_sense_probe(embedder, items, dataset=path.name)
            n = result.data.n_test

            def cell(acc: float, sil: float | None) -> str:
                se = 100 * math.sqrt(acc * (1 - acc) / n)
                return f"{100 * acc:.1f} ({se:.1f}) / {'n/a' if sil is None else f'{sil:.2f}'}"

            layers = [cell(acc, sil) for acc, sil in zip(result.layers, result.silhouette)]
            print(
                f"| {model} | " + " | ".join(layers) + f" | {cell(result.mix_equal, result.silhouette_mix_equal)}"
                f" | {cell(result.baselines['layer-0 bag of context'], result.silhouette_bag_of_context)} |"
            )
            pooled[model][0] += result.layers[-1] * n
            pooled[model][1] += result.mix_equal * n
            pooled[model][2] += n
    if len(args.sentences) > 1:
        print(f"\npooled over {', '.join(p.name for p in args.sentences)}: 1-NN % (standard error)")
        print("| model | items | top layer | equal mix |\n|---|---|---|---|")
        for model, (top, mix, n) in pooled.items():
            cells = [f"{100 * c / n:.1f} ({100 * math.sqrt(c / n * (1 - c / n) / n):.1f})" for c in (top, mix)]
            print(f"| {model} | {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

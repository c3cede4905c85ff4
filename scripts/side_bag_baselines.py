"""How well side bags of GloVe vectors alone separate the senses of the sense probe: the measurements behind the
side-bag term (docs/TEACHERS.md, "Side bags").

Usage (training extras installed; the vocabulary of a run or a bundled model; a few seconds)::

    python scripts/side_bag_baselines.py [--vocab assets/default/vocab.txt] [--min-id 300] [--saturation 0.2]
        [--probe assets/probes/holdout2_sentences.tsv]

For every item of a sense set (default: the probe, ``assets/probes/sense_probe.tsv``) the GloVe vectors of the
sentence's tokens (the vocabulary's centred GloVe table, ``teacher.lexical_targets``; tokens outside the vocabulary
and the ``--min-id`` most frequent words left out) are summed before and after the target, and scored with the
probe's metric (leave-one-out 1-NN by cosine within a word, ``metrics.loo_nn_scores``, micro-averaged over items):

* the whole-sentence sum (the target left out), and [sum before ; sum after] raw;
* [tanh(s * sum before) ; tanh(s * sum after)], the target left out and (inclusive) counted on both sides;
* [mean before ; mean after], each side unit length, with every token counted (the earlier ``directional_bags``).

Prints a markdown table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

from elmo_core.data.senses import group_by_key, read_sense_sentences  # noqa: E402
from elmo_core.metrics import loo_nn_scores  # noqa: E402
from elmo_core.paths import SENSE_PROBE  # noqa: E402


def score(vectors: np.ndarray, items, groups) -> float:
    """1-NN % micro-averaged over items."""
    per_item = np.full(len(items), np.nan)
    for idx in groups.values():
        per_item[idx] = loo_nn_scores(vectors[idx], [items[i].sense for i in idx])
    return 100 * float(np.nanmean(per_item))


def side_sums(items, table: np.ndarray, row_of, keep) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: (sum strictly before the target, sum strictly after it, the target's own vector), float64 (N, K)."""
    k = table.shape[1]
    before, after, own = (np.zeros((len(items), k)) for _ in range(3))
    for n, it in enumerate(items):
        for j, token in enumerate(it.tokens):
            row = row_of(token)
            if row is None or not keep(row):
                continue
            target = before if j < it.position else after if j > it.position else own
            target[n] += table[row]
    return before, after, own


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", type=Path, default=REPO / "assets" / "default" / "vocab.txt")
    parser.add_argument("--min-id", type=int, default=300, help="vocabulary ids below this are left out (default 300)")
    parser.add_argument("--saturation", type=float, default=0.2, help="s in tanh(s * sum) (default 0.2)")
    parser.add_argument("--probe", type=Path, default=SENSE_PROBE, help="a sense set (word, sense, sentence TSV)")
    args = parser.parse_args(argv)
    from elmo_core.training.teacher import lexical_targets

    vocab = args.vocab.read_text(encoding="utf-8").splitlines()
    index = {w: i for i, w in enumerate(vocab)}
    table, has = (t.numpy() for t in lexical_targets(vocab))
    items = read_sense_sentences(args.probe)
    groups = group_by_key(items)
    s = args.saturation

    before, after, own = side_sums(items, table, index.get, lambda i: i >= args.min_id and has[i])
    every_b, every_a, _ = side_sums(items, table, index.get, lambda i: bool(has[i]))
    counts_b, counts_a, _ = side_sums(items, np.ones((len(vocab), 1)), index.get, lambda i: bool(has[i]))

    def unit(x: np.ndarray) -> np.ndarray:
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    rows = [
        (f"whole-sentence sum, target left out (ids >= {args.min_id})", before + after),
        ("[sum before ; sum after]", np.hstack([before, after])),
        (f"[tanh({s:g} x sum before) ; tanh({s:g} x sum after)]", np.tanh(s * np.hstack([before, after]))),
        ("the same, each side including the target (inclusive)", np.tanh(s * np.hstack([before + own, after + own]))),
        (
            "[mean before ; mean after], unit length each, every token",
            np.hstack([unit(every_b / np.maximum(counts_b, 1)), unit(every_a / np.maximum(counts_a, 1))]),
        ),
    ]
    print(
        f"{args.probe.name}: {len(items)} items, {len(groups)} words; vocabulary {args.vocab} ({len(vocab):,} words).\n"
    )
    print("| representation (GloVe 6B 50-d, centred over the vocabulary) | 1-NN (%) |\n|---|---|")
    for name, vectors in rows:
        print(f"| {name} | {score(vectors, items, groups):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Leave-one-out 1-NN sense scores of a model on the explorer's six example sets (the model cards' per-set row).

Usage: python scripts/example_sets_probe.py [--model default | --checkpoint DIR]

Each example set (``app/explore/examples.py``) is read as sense items (its bracketed labels are the senses, its word the
target: the first token of a sentence that counts as the word, as in ``elmo_core.data.senses``) and scored with
``elmo_core.probes.loo_sense``: % of occurrences whose nearest other occurrence (cosine) has the same sense, in
layer 2 and in the equal mix (the explorer's default weights). Sets of 12-16 sentences: one sentence is 6-8 points.
"""

from __future__ import annotations

import argparse
import csv
import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LABELLED = re.compile(r"^\[([^\]]+)\]\s*(.+)$")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default", help="a bundled model's name")
    ap.add_argument("--checkpoint", type=Path, help="a checkpoint folder instead (e.g. an older assets/default)")
    args = ap.parse_args()
    from app.explore.examples import EXAMPLE_SETS
    from elmo_core import Embedder
    from elmo_core.data.senses import read_sense_sentences
    from elmo_core.probes.loo_sense import loo_sense_probe

    if args.checkpoint:
        embedder = Embedder.from_checkpoint(args.checkpoint, device="cpu")
    else:
        embedder = Embedder.bundled(args.model, device="cpu")
    print(f"model {args.checkpoint or args.model}: leave-one-out 1-NN %, layer 2 / equal mix")
    for name, example in EXAMPLE_SETS.items():
        with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False, encoding="utf-8", newline="") as f:
            writer = csv.writer(f, delimiter="\t")
            writer.writerow(["word", "sense", "sentence"])
            for line in example.text.splitlines():
                found = LABELLED.match(line.strip())
                if found:
                    writer.writerow([example.word, found.group(1).strip(), found.group(2).strip()])
        items = read_sense_sentences(f.name)
        Path(f.name).unlink()
        result = loo_sense_probe(embedder, items, dataset=name)
        print(f"{name}: {100 * result.layers[2]:.0f} / {100 * result.mix_equal:.0f} ({len(items)} sentences)")


if __name__ == "__main__":
    main()

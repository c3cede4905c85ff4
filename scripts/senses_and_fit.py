"""The Senses tab's automatic clusters and "fit s to my labels" on the explorer's example sets (issue 29, item 6).

Usage: python scripts/senses_and_fit.py [--sets bank play ...]

For each example set, with the default model, at equal weights: the automatic number of clusters before issue
29 (best silhouette over 2..6, clusters of any size) and now (``app.explore.clusters.discover``: clusters of at least
``min_cluster_size``, "no clear clusters" below a silhouette of ``CLEAR_SILHOUETTE``), each with its cluster sizes
and adjusted Rand index against the set's labels; then ``app.explore.fit.fit_mix``: the fitted s, its leave-one-out
1-NN accuracy, equal weights', each layer's alone and the nested score; and the page's note on the layers
(``app.explore.weight_effect.weight_note``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    from app.explore import activations, inputs, mixing
    from app.explore import clusters as cl
    from app.explore import fit as fm
    from app.explore import weight_effect as we
    from app.explore.examples import EXAMPLE_SETS
    from elmo_core import Embedder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=list(EXAMPLE_SETS), choices=list(EXAMPLE_SETS))
    args = ap.parse_args()
    embedder = Embedder.default(device="cpu")
    for name in args.sets:
        example = EXAMPLE_SETS[name]
        parsed = inputs.parse_input(example.text)
        table = activations.TokenTable(parsed.lines, embedder.embed_batch([list(ln.tokens) for ln in parsed.lines]))
        occurrences = inputs.find_occurrences(parsed.lines, example.word)
        layers = table.acts[:, table.rows(occurrences)]
        labels = [o.label for o in occurrences]
        x = mixing.scalar_mix(layers, (0.0,) * len(layers), 1.0)

        def line(found: cl.SenseClusters) -> str:
            sizes = sorted(np.bincount(found.labels[found.labels >= 0]).tolist(), reverse=True)
            return f"k = {found.k} (sizes {sizes}), adjusted Rand {cl.agreement(found, labels).ari:.2f}"

        old = {k: cl.discover(x, k=k) for k in cl.k_range(len(x))}
        old_k = max(old, key=lambda k: (old[k].silhouette, -k))
        now = cl.discover(x)
        print(f"== {name} ({len(occurrences)} occurrences of “{example.word}”, equal weights)")
        print(f"  clusters before: {line(old[old_k])}, silhouette {old[old_k].silhouette:.2f}")
        print(f"  clusters now:    {line(now)}" + ("" if now.clear else f" — {cl.no_clear_clusters_note(now)}"))
        if now.best is not None and not now.clear:
            print(f"  best split counted ({now.best}) by hand: {line(cl.discover(x, k=now.best))}")
        fit = fm.fit_mix(layers, labels)
        w = fm.weights_for_s(fit.s, mixing.W_RANGE, 0.1)
        print(
            f"  fit s: s = {' / '.join(f'{v:.2f}' for v in fit.s)} (w = {', '.join(f'{v:g}' for v in w)}): "
            f"leave-one-out 1-NN {fit.accuracy:.3f}, equal weights {fit.equal:.3f}, nested {fit.nested:.3f}, "
            f"alone {' / '.join(f'{v:.3f}' for v in fit.layers)}, chance {fit.chance:.3f}; "
            f"{fit.tied} of {fit.tried} weightings tie"
        )
        print(f"  note: {we.weight_note(we.layer_effect(layers)) or '(none)'}")


if __name__ == "__main__":
    main()

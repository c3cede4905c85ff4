"""Can a different word weighting or word-vector table raise the side bags' own ceiling on sense separation?
The measurements behind docs/TEACHERS.md, "Side-bag variants" (session of 2026-12-02d).

Usage (a built corpus; training extras for GloVe; about 3 minutes on two cores)::

    python scripts/side_bag_variants.py [--vocab runs/default/vocab.txt] [--corpus data/corpus]

Scores, with the probe's metric (leave-one-out 1-NN by cosine within a word, micro-averaged over items), the
inclusive side bags [tanh(s * sum through t) ; tanh(s * sum from t)] (what the default's top layer is trained to
hold, ``teacher.side_bags``) and the whole-sentence sum (the target left out) under:

* word weights: flat (the side-bag term's), SIF (a / (a + p(w)), p from a Zipf law on the vocabulary rank,
  a = 1e-3) and log-rank; an exponential decay with the distance from the target (1.0 = none, 0.9, 0.8);
* word vectors: GloVe 6B 50-d (``teacher.lexical_targets``), and PPMI + truncated SVD vectors (50 and 100
  dimensions) built here from the corpus's training split with a window of 5 or 15 tokens, alone and beside GloVe.

on two sets: the sense probe (``assets/probes/sense_probe.tsv``, 34 words) and the explorer's sentence set
(``assets/probes/sense_sentences.tsv``, 15 words, the example words among them), which no variant was chosen on
before. The 300 most frequent vocabulary words are left out of every sum, as in the side-bag term. Prints markdown.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

from side_bag_baselines import score  # noqa: E402  (this folder is on the path when the script runs)

from elmo_core.data.senses import group_by_key, read_sense_sentences  # noqa: E402

SETS = {"sense probe (34 words)": "sense_probe.tsv", "sentence set (15 words)": "sense_sentences.tsv"}
MIN_ID = 300


def ppmi_svd(train_txt: Path, index: dict[str, int], window: int, dims: int, contexts: int = 20000) -> np.ndarray:
    """(V, dims) float32 word vectors: positive PMI (context distribution smoothed with power 0.75) over symmetric
    windows of ``window`` tokens, contexts = the ``contexts`` most frequent vocabulary words, then a randomized
    truncated SVD (U * sqrt(S))."""
    import scipy.sparse as sp
    from sklearn.utils.extmath import randomized_svd

    rows, cols = [], []
    with open(train_txt, encoding="utf-8") as f:
        for line in f:
            ids = np.array(
                [i for i in (index.get(w.lower(), index.get(w, -1)) for w in line.split()) if i >= 3], dtype=np.int64
            )
            for d in range(1, min(window, len(ids) - 1) + 1):
                a, b = ids[:-d], ids[d:]
                keep = b < contexts
                rows.append(a[keep]), cols.append(b[keep])
                keep = a < contexts
                rows.append(b[keep]), cols.append(a[keep])
    r, c = np.concatenate(rows), np.concatenate(cols)
    counts = sp.coo_matrix((np.ones(len(r), np.float32), (r, c)), shape=(len(index), contexts)).tocsr()
    counts.sum_duplicates()
    word = np.asarray(counts.sum(1)).ravel()
    ctx = np.asarray(counts.sum(0)).ravel() ** 0.75
    ctx /= ctx.sum()
    coo = counts.tocoo()
    pmi = np.log(coo.data / (word[coo.row] + 1e-9) / (ctx[coo.col] + 1e-12))
    keep = pmi > 0
    matrix = sp.csr_matrix((pmi[keep], (coo.row[keep], coo.col[keep])), shape=counts.shape)
    u, s, _ = randomized_svd(matrix, dims, random_state=0)
    return (u * np.sqrt(s)).astype(np.float32)


def bags(items, table, index, ok, weight, decay):
    """(inclusive left sums, inclusive right sums, whole-sentence sums without the target), float64 (N, K) each."""
    k = table.shape[1]
    left, right, whole = (np.zeros((len(items), k)) for _ in range(3))
    for n, it in enumerate(items):
        for j, token in enumerate(it.tokens):
            row = index.get(token)
            if row is None or row < MIN_ID or not ok[row]:
                continue
            d = j - it.position
            v = table[row] * weight(row) * decay ** abs(d)
            if d <= 0:
                left[n] += v
            if d >= 0:
                right[n] += v
            if d != 0:
                whole[n] += v
    return left, right, whole


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", type=Path, default=REPO / "assets" / "default" / "vocab.txt")
    parser.add_argument("--corpus", type=Path, default=REPO / "data" / "corpus")
    args = parser.parse_args(argv)
    from elmo_core.training.teacher import lexical_targets

    vocab = args.vocab.read_text(encoding="utf-8").splitlines()
    index = {w: i for i, w in enumerate(vocab)}
    glove, has = (t.numpy() for t in lexical_targets(vocab))
    has = has.astype(bool)
    norm = float(np.linalg.norm(glove[has], axis=1).mean())

    def like_glove(v: np.ndarray) -> np.ndarray:  # centred, each row at GloVe's mean norm (same tanh scale)
        v = v - v[MIN_ID:20000].mean(0)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9) * norm

    every = np.ones(len(vocab), bool)
    tables = {"GloVe 50-d": (glove, has)}
    for window in (5, 15):
        ppmi = ppmi_svd(args.corpus / "train.txt", index, window, 100)
        tables[f"PPMI-SVD window {window}, 50-d"] = (like_glove(ppmi[:, :50]), every)
        tables[f"PPMI-SVD window {window}, 100-d"] = (like_glove(ppmi), every)
        tables[f"[GloVe ; PPMI-SVD window {window}, 50-d]"] = (
            np.hstack([glove, like_glove(ppmi[:, :50])]) / np.sqrt(2),
            has,
        )
    weights = {
        "flat": lambda r: 1.0,
        "SIF": lambda r: 1.0 / (1.0 + (1.0 / (r + 1)) / 1e-3),
        "log-rank": lambda r: float(np.log(r + 1) / np.log(len(vocab))),
    }
    sets = {name: read_sense_sentences(REPO / "assets" / "probes" / f) for name, f in SETS.items()}
    names = list(sets)
    print(
        f"vocabulary {args.vocab}; ids < {MIN_ID} left out; s: tanh saturation (SIF and log-rank: 3 x s, their "
        "weights being below 1)\n"
    )
    print(
        f"| vectors | weights | decay | s | side bags: {names[0]} | side bags: {names[1]} | whole sentence: "
        f"{names[0]} | whole sentence: {names[1]} |\n|---|---|---|---|---|---|---|---|"
    )
    for tname, (table, ok) in tables.items():
        for wname, weight in weights.items() if tname == "GloVe 50-d" else [("flat", weights["flat"])]:
            for decay in (1.0, 0.9, 0.8) if tname == "GloVe 50-d" else (1.0,):
                for s in (0.1, 0.2, 0.4):
                    scale = s if wname == "flat" else 3 * s
                    side, whole = [], []
                    for items in sets.values():
                        groups = group_by_key(items)
                        left, right, total = bags(items, table, index, ok, weight, decay)
                        side.append(score(np.tanh(scale * np.hstack([left, right])), items, groups))
                        whole.append(score(total, items, groups))
                    print(
                        f"| {tname} | {wname} | {decay:g} | {s:g} | {side[0]:.1f} | {side[1]:.1f} | {whole[0]:.1f} "
                        f"| {whole[1]:.1f} |",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

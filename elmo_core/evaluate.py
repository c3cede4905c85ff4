"""Evaluation of a biLM: the leave-one-out sense probe and held-out perplexity.

The leave-one-out sense probe (``loo_sense_probe``; not the sense-means probe of ``elmo_core.probes``): for
each lemma, every occurrence is labelled with the sense of its nearest other occurrence of the same lemma
(cosine, 1-NN, leave-one-out), per layer 0..L and for the equal mix, next to baselines that need no
contextual model: most frequent sense, chance, and a bag of context words (the mean layer-0 vector of the
sentence's other tokens, which captures topic, not sense). The metrics are ``elmo_core.metrics``.
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

from .embedder import embed_with_progress
from .metrics import loo_baseline_scores, loo_nn_scores, mean_over_groups, silhouette_by_sense
from .senses import SenseItem, group_by_key

Progress = Callable[[float, str], None]


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
    acts = embed_with_progress(embedder, sentences, batch_size, max(batch_size * 8, 256), progress)
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


def loo_sense_probe(embedder, items: Sequence[SenseItem], batch_size: int = 64, dataset: str = "",
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
        raise ValueError("the leave-one-out sense probe needs at least one lemma with two or more sentences")
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
    """A markdown table of ``loo_sense_probe`` results (percent)."""
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

"""The sense-means probe (task "wsd"): 1-nearest-neighbour to per-sense mean vectors (cosine), per layer
and for a learned scalar mix, on WordNet example sentences.

Coarse senses are WordNet's lexicographer files; the train/test split is by sentence; the most-frequent-sense
baseline comes from the training split. Not the leave-one-out sense probe (``loo_sense``, task "loo_sense":
1-NN among the other occurrences, no training split). Peters et al. 2018 section 5.3 (Table 5) use SemCor and the
SemEval all-words sets, which no package ships, so only the pattern across layers compares.

Dims: N items, L + 1 layers, D = 2P.
"""

from __future__ import annotations

import dataclasses
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from elmo_core.data.senses import SenseItem, embed_items, subsample_keys, subsample_note
from elmo_core.probes.mix_classifier import layer_scale, mix_summary, train_mix_classifier
from elmo_core.probes.results import DataNote, PaperNumbers, TaskResult, _number
from elmo_core.probes.task import DataDirs, ProbeTask, Progress, noop, sub_progress

TITLE = "Word sense (1-NN to sense means)"
# Peters et al. 2018 (NAACL), as fractions. ELMO_SPEC.md section 13.
PAPER = PaperNumbers(
    0.674,
    0.690,
    "F1, all-words fine-grained WSD",
    "Table 5: sense means from SemCor 3.0, tested on the SensEval/SemEval sets of Raganato et al. "
    "(2017); original ELMo biLM (93.6M parameters, 1B Word Benchmark)",
)
# sense items (whole lemmas; 0 = all): "full" runs in a few minutes on 2 CPU cores for the default model
SIZES = {"full": {"items": 0}, "quick": {"items": 3000}}


@dataclass(frozen=True)
class SenseMeansResult(TaskResult):
    """``TaskResult`` plus mix_linear (accuracy of the jointly trained linear classifier itself) and
    mix_equal (1-NN to sense means of the equal mix). ``mix_learned`` is 1-NN to sense means of the mix with
    the learned s; baselines are {"mfs", "chance"}."""

    mix_linear: float
    mix_equal: float

    EXTRA = {
        "mix_linear": lambda v, where: _number(v, where, 0, 1),
        "mix_equal": lambda v, where: _number(v, where, 0, 1),
    }


def split_by_sentence(items: Sequence[SenseItem], test_fraction: float = 0.2, seed: int = 0) -> np.ndarray:
    """bool (N,): True for test items. A sentence's items all land on the same side (hash of its text)."""
    cut = int(test_fraction * 10_000)
    return np.array([zlib.crc32(f"{seed}|{' '.join(it.tokens)}".encode()) % 10_000 < cut for it in items])


def _nearest_sense_scores(
    vectors: np.ndarray, items: Sequence[SenseItem], train: np.ndarray, test_rows: np.ndarray
) -> np.ndarray:
    """1 where the test item's nearest (cosine) sense mean of its lemma is its own sense, else 0."""
    means: dict[str, tuple[list[str], np.ndarray]] = {}
    by_key: dict[str, dict[str, list[int]]] = {}
    for i in np.flatnonzero(train):
        by_key.setdefault(items[i].key, {}).setdefault(items[i].sense, []).append(i)
    for key, senses in by_key.items():
        names = sorted(senses)
        m = np.stack([vectors[senses[s]].mean(axis=0) for s in names])
        means[key] = (names, m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12))
    out = np.zeros(len(test_rows))
    for k, i in enumerate(test_rows):
        names, m = means[items[i].key]
        out[k] = names[int(np.argmax(m @ vectors[i]))] == items[i].sense
    return out


def sense_means_probe(
    embedder,
    items: Sequence[SenseItem],
    test_fraction: float = 0.2,
    seed: int = 0,
    batch_size: int = 64,
    epochs: int = 20,
    progress: Progress | None = None,
) -> SenseMeansResult:
    """Word-sense probe: 1-NN to per-sense mean vectors, per layer and for a learned scalar mix.

    Args:
        embedder: an ``elmo_core.Embedder``.
        items: sense items (``elmo_core.data.senses.read_wordnet_examples``); groups by ``item.key``.
        test_fraction: share of sentences held out for testing (split by sentence text).
        epochs: of the jointly trained mix + linear classifier.
        progress: optional ``progress(fraction, text)``.

    Returns: a ``SenseMeansResult`` (accuracies in [0, 1]).
    Raises: ValueError when no test item has a lemma seen in training.
    Source: Peters et al. 2018 section 5.3 (1-NN to sense means; MFS-style fallback).
    """
    progress = progress or noop
    start = time.perf_counter()
    is_test = split_by_sentence(items, test_fraction, seed)
    train_keys = {it.key for it, t in zip(items, is_test) if not t}
    train = ~is_test
    test_rows = np.array([i for i in np.flatnonzero(is_test) if items[i].key in train_keys], dtype=np.int64)
    if len(test_rows) == 0:
        raise ValueError("no test item has a lemma that also occurs in the training split; give more items")
    used = np.flatnonzero(train | np.isin(np.arange(len(items)), test_rows))
    sub_items = [items[i] for i in used]
    train, test_rows = train[used], np.searchsorted(used, test_rows)
    vectors, _ = embed_items(embedder, sub_items, batch_size, sub_progress(progress, 0.0, 0.6))  # (N, L + 1, D)
    num_layers = vectors.shape[1]
    layers = [
        float(_nearest_sense_scores(vectors[:, j], sub_items, train, test_rows).mean()) for j in range(num_layers)
    ]
    mix_equal = float(_nearest_sense_scores(vectors.mean(axis=1), sub_items, train, test_rows).mean())
    # baselines from the training split
    train_counts: dict[str, Counter] = {}
    for i in np.flatnonzero(train):
        train_counts.setdefault(sub_items[i].key, Counter())[sub_items[i].sense] += 1
    mfs, chance, unseen = [], [], 0
    for i in test_rows:
        counts = train_counts[sub_items[i].key]
        top = max(counts.values())
        winners = [s for s, c in counts.items() if c == top]
        mfs.append((sub_items[i].sense in winners) / len(winners))
        chance.append((sub_items[i].sense in counts) / len(counts))
        unseen += sub_items[i].sense not in counts
    # learned mix: a linear classifier over all coarse senses, restricted to the lemma's training senses
    senses = sorted({it.sense for it in sub_items})
    sense_id = {s: k for k, s in enumerate(senses)}
    train_rows = np.flatnonzero(train)
    allowed = np.zeros((len(train_rows), len(senses)), dtype=bool)
    for r, i in enumerate(train_rows):
        allowed[r, [sense_id[s] for s in train_counts[sub_items[i].key]]] = True
    labels = np.array([sense_id[sub_items[i].sense] for i in train_rows])
    model = train_mix_classifier(
        vectors[train_rows],
        labels,
        len(senses),
        allowed,
        epochs=epochs,
        seed=seed,
        progress=sub_progress(progress, 0.6, 0.95),
    )
    mix = mix_summary(model)
    with torch.no_grad():
        test_allowed = np.zeros((len(test_rows), len(senses)), dtype=bool)
        for r, i in enumerate(test_rows):
            test_allowed[r, [sense_id[s] for s in train_counts[sub_items[i].key]]] = True
        logits = model(torch.from_numpy(vectors[test_rows]), torch.from_numpy(test_allowed))
        pred = logits.argmax(dim=1).numpy()
    gold = np.array([sense_id[sub_items[i].sense] for i in test_rows])
    mixed = np.einsum("j,njd->nd", np.asarray(mix["s"], dtype=np.float32), vectors)
    progress(1.0, "sense-means probe done")
    return SenseMeansResult(
        task="wsd",
        title=TITLE,
        metric="accuracy",
        layers=layers,
        mix_learned=float(_nearest_sense_scores(mixed, sub_items, train, test_rows).mean()),
        mix_learned_how="1-NN to sense means of the mix with the learned s (s learned by a linear sense "
        "classifier trained jointly with the mix)",
        **mix,
        layer_scale=layer_scale(vectors),
        baselines={"mfs": float(np.mean(mfs)), "chance": float(np.mean(chance))},
        paper=PAPER,
        data=DataNote(
            source="WordNet 3.0 example sentences (Debian wordnet-base), coarse senses = lexicographer files",
            n_train=int(train.sum()),
            n_test=int(len(test_rows)),
            split=f"by sentence, {test_fraction:.0%} of sentences held out (seed {seed})",
            counts={
                "n_items": len(sub_items),
                "n_lemmas": len({it.key for it in sub_items}),
                "n_senses": len(senses),
                "test_items_with_sense_unseen_in_training": int(unseen),
            },
        ),
        seconds=round(time.perf_counter() - start, 1),
        mix_linear=float((pred == gold).mean()),
        mix_equal=mix_equal,
    )


def find_data(dirs: DataDirs) -> Path:
    from elmo_core.data.wordnet import find_wordnet_dir

    return find_wordnet_dir(dirs.get("wordnet"))


def run(
    embedder, params: dict, max_items: int, seed: int, dirs: DataDirs, progress: Progress | None
) -> SenseMeansResult:
    """The task's entry: WordNet's examples, subsampled to ``max_items`` or ``params["items"]`` sense items
    (whole lemmas; 0 = all)."""
    from elmo_core.data.senses import read_wordnet_examples

    all_items = read_wordnet_examples(find_data(dirs))
    items = subsample_keys(all_items, max_items or params["items"], seed)
    result = sense_means_probe(embedder, items, seed=seed, progress=progress)
    return dataclasses.replace(
        result, data=result.data.with_subsample(subsample_note(len(items), len(all_items), "lemmas", seed))
    )


TASK = ProbeTask("wsd", TITLE, "word sense (sense means)", "#1f77b4", PAPER, SIZES, SenseMeansResult, find_data, run)

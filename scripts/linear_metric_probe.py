"""Could a linear map of layers 1 and 2 bring out sense information the shipped cosines miss?

Usage (training extras and the MiniLM teacher states installed; about 5 minutes on two cores)::

    python scripts/linear_metric_probe.py [--model default] [--sentences 30000] [--steps 1000]

Why this question: with ``cell_clip`` and ``proj_clip`` 0, an invertible 128 x 128 matrix A applied to each
direction's projection output (h -> h A) could be folded into a plain ELMo biLM without changing its language model:
the projections P become P A, the recurrent and next-layer input weights A^-1 U and A^-1 W, and the softmax's input
weights (shared by both directions, hence one A) W A^-T; the layer-2 residual adds two vectors that are both
multiplied by A. Cosines, and so the sense probes, would change. If some A scored clearly better, that would be a
free gain; if none does, the sense information in the layers is what it is, and only training can add more.

A is fitted on the first ``--sentences`` training sentences (content words: vocabulary id >= 300 and known to GloVe,
with at least one other content word in the sentence), never on a sense set, in two ways towards the teacher
geometry of the training (``docs/TEACHERS.md``): [unit MiniLM layer-6 state ; unit GloVe bag of the sentence's other
content words]:

* **ridge metric**: within each word (occurrences centred per word), ridge regression from one direction's layer-2
  half to the teacher vector, both directions stacked (one A); A = (M M^T + eps I)^(1/2), scaled to unit mean
  squared entry per dimension;
* **listwise**: A (from the identity) minimises the occurrence term's loss (``lm.occurrence_distance``'s idea: KL
  from the teacher's softmax over a word's other occurrences, temperature 0.03, to the student's, temperature 0.05),
  64 words x 16 occurrences per step, Adam.

Each A is scored on the four hand-written sense sets (the probe, our older sentences, both held-out sets:
leave-one-out 1-NN %, layer 1, layer 2, equal mix; the silhouette of layer 2), against the model's own layers
(A = identity).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

from elmo_core.metrics import unit  # noqa: E402

SETS = ("sense_probe", "sense_sentences", "holdout_sentences", "holdout2_sentences")
TEACHER = REPO / "data" / "teacher" / "minilm_l6_120k.safetensors"


def training_states(embedder, vocab: list[str], n_sentences: int, min_id: int = 300) -> dict[str, np.ndarray]:
    """Layer-2 states, teacher vectors and word ids of the content words of the first training sentences."""
    from elmo_core.training.teacher import ContextualTargets, lexical_targets

    teacher = ContextualTargets(TEACHER)
    index = {w: i for i, w in enumerate(vocab)}
    with open(REPO / "data" / "corpus" / "train.txt", encoding="utf-8") as f:
        sentences = [line.split() for _, line in zip(range(n_sentences), f)]
    layers = embedder.embed_batch(sentences, batch_size=64)
    table, has = (t.numpy() for t in lexical_targets(vocab))
    top, target, words = [], [], []
    for i, (tokens, acts) in enumerate(zip(sentences, layers)):
        lo, hi = int(teacher.offsets[i]), int(teacher.offsets[i + 1])
        if hi - lo != len(tokens):
            raise SystemExit(f"teacher states do not match training sentence {i}: rebuild them (docs/TEACHERS.md)")
        ids = np.array([index.get(w, 2) for w in tokens])
        content = (ids >= min_id) & has[ids]
        vecs = table[ids] * content[:, None]
        bag = vecs.sum(axis=0) - vecs  # the other content words' sum; its direction is the mean's
        keep = content & teacher.mask[lo:hi].numpy() & (content.sum() - content > 0)
        top.append(acts[2][keep])
        target.append(np.hstack([unit(teacher.states[lo:hi].float().numpy()[keep]), unit(bag[keep])]))
        words.append(ids[keep])
    return {"top": np.concatenate(top), "target": np.concatenate(target), "word": np.concatenate(words)}


def centred_within(x: np.ndarray, groups: np.ndarray) -> np.ndarray:
    _, inverse = np.unique(groups, return_inverse=True)
    sums = np.zeros((inverse.max() + 1, x.shape[1]))
    np.add.at(sums, inverse, x)
    return x - sums[inverse] / np.bincount(inverse)[inverse, None]


def ridge_metric(data: dict[str, np.ndarray], lam: float = 0.1, eps: float = 0.1, min_occ: int = 5) -> np.ndarray:
    from scipy.linalg import sqrtm

    keep = np.bincount(data["word"])[data["word"]] >= min_occ
    words, half = data["word"][keep], data["top"].shape[1] // 2
    x = np.vstack([centred_within(data["top"][keep, :half], words), centred_within(data["top"][keep, half:], words)])
    y = np.vstack([centred_within(data["target"][keep], words)] * 2)
    cov = x.T @ x / len(x)
    m = np.linalg.solve(cov + lam * np.trace(cov) / half * np.eye(half), x.T @ y / len(x))
    metric = m @ m.T
    return np.real(sqrtm(metric / np.trace(metric) * half + eps * np.eye(half)))


def listwise_metric(data: dict[str, np.ndarray], steps: int, seed: int = 0) -> np.ndarray:
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    counts = np.bincount(data["word"])
    words = np.flatnonzero(counts >= 16)
    occurrences = {w: np.flatnonzero(data["word"] == w) for w in words}
    top, target = torch.tensor(data["top"]), torch.tensor(unit(data["target"]))
    half = top.shape[1] // 2
    a = torch.nn.Parameter(torch.eye(half))
    opt = torch.optim.Adam([a], lr=3e-3)
    self_pair = torch.eye(16, dtype=torch.bool)
    for _ in range(steps):
        idx = np.stack([rng.choice(occurrences[w], 16, replace=False) for w in rng.choice(words, 64, replace=False)])
        h = top[idx]
        z = torch.nn.functional.normalize(torch.cat([h[..., :half] @ a, h[..., half:] @ a], -1), dim=-1)
        t = target[idx]
        p = (t @ t.transpose(1, 2) / 0.03).masked_fill(self_pair, -1e9).softmax(-1)
        log_q = (z @ z.transpose(1, 2) / 0.05).masked_fill(self_pair, -1e9).log_softmax(-1)
        loss = (p * (p.clamp_min(1e-9).log() - log_q)).sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    out = a.detach().numpy()
    return out / np.sqrt((out**2).sum() / half)


def scores(embedder, a: np.ndarray | None, cache: dict) -> list[str]:
    """Cells per set: 'layer 1 / layer 2 / equal mix (silhouette of layer 2)'."""
    from elmo_core.data.senses import embed_items, group_by_key, read_sense_sentences
    from elmo_core.metrics import loo_nn_scores, silhouette_by_sense
    from elmo_core.paths import PROBE_ASSETS

    cells = []
    for name in SETS:
        if name not in cache:
            items = read_sense_sentences(PROBE_ASSETS / f"{name}.tsv")
            cache[name] = (items, group_by_key(items), embed_items(embedder, items)[0])
        items, groups, layers = cache[name]
        layers = layers.copy()
        if a is not None:
            half = a.shape[0]
            for j in (1, 2):
                layers[:, j] = np.hstack([layers[:, j, :half] @ a, layers[:, j, half:] @ a])
        acc = {key: [] for key in ("1", "2", "mix")}
        sil = []
        for idx in groups.values():
            labels = [items[i].sense for i in idx]
            for key, vectors in (("1", layers[idx, 1]), ("2", layers[idx, 2]), ("mix", layers[idx].mean(axis=1))):
                acc[key].append(loo_nn_scores(vectors, labels))
            sil.append(silhouette_by_sense(layers[idx, 2], labels))
        acc = {key: 100 * float(np.concatenate(v).mean()) for key, v in acc.items()}
        cells.append(f"{acc['1']:.1f} / {acc['2']:.1f} / {acc['mix']:.1f} ({np.nanmean(sil):.2f})")
    return cells


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default", help="a bundled model's name or a checkpoint folder")
    ap.add_argument("--sentences", type=int, default=30000, help="training sentences to fit A on (default 30,000)")
    ap.add_argument("--steps", type=int, default=1000, help="steps of the listwise fit (default 1,000)")
    args = ap.parse_args()
    import torch

    from elmo_core import Embedder
    from elmo_core.paths import BUNDLED_MODELS

    torch.set_num_threads(2)
    folder = Path(args.model) if Path(args.model).is_dir() else BUNDLED_MODELS[args.model]
    embedder = Embedder.from_checkpoint(folder, device="cpu")
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    data = training_states(embedder, vocab, args.sentences)
    print(
        f"model {args.model}; A fitted on {len(data['word']):,} content-word tokens of {args.sentences:,} training "
        f"sentences. Cells: leave-one-out 1-NN % in layer 1 / layer 2 / equal mix (silhouette of layer 2)\n"
    )
    print("| A | " + " | ".join(SETS) + " |\n|---|" + "---|" * len(SETS))
    cache: dict = {}
    for name, a in (
        ("identity (the model as shipped)", None),
        ("ridge metric", ridge_metric(data)),
        (f"listwise, {args.steps} steps", listwise_metric(data, args.steps)),
    ):
        print(f"| {name} | " + " | ".join(scores(embedder, a, cache)) + " |", flush=True)


if __name__ == "__main__":
    main()

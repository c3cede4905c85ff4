"""Diagnostics of a training checkpoint (biLM + teacher heads), for choosing what to train next.

Usage (training extras installed, corpus built):
    python scripts/checkpoint_diagnostics.py runs/default/checkpoint [--config runs/default/config.json]
        [--vocab runs/default/vocab.txt] [--sentences 4000] [--skip-agreement] [--dev-perplexity 1500]

1. The leave-one-out sense probe (``assets/probes/sense_probe.tsv``, 1-NN by cosine within a word, %) of each
   layer, of each half of the top layer, and of the contextual head's output: is sense information in the top
   layer where a linear readout of the teacher's space finds it, even if the layer's own cosines hide it?
2. Agreement with the teacher, on training sentences (the first N lines of train.txt, inside the teacher
   set), on unseen ones (dev.txt) and on the probe's: for content words with 6-16 occurrences in the sample
   (on the probe: each word's sentences), how
   often the top layer's nearest other occurrence is among the teacher geometry's 3 nearest
   ([unit MiniLM layer 6, centred ; unit bag of centred GloVe]); a gap between the two means the student
   memorises its training sentences.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file

from elmo_core.data.senses import group_by_key, read_sense_sentences
from elmo_core.data.text import read_token_lines
from elmo_core.data.vocab import Vocabulary
from elmo_core.metrics import loo_nn_scores, unit
from elmo_core.model.bilm import BiLM
from elmo_core.model.chars import batch_to_ids
from elmo_core.model.config import BiLMConfig
from elmo_core.model.strict_json import loads_strict
from elmo_core.paths import SENSE_PROBE
from elmo_core.training.lm import BiLanguageModel


def load(checkpoint: Path, config: Path, vocab: Vocabulary) -> BiLanguageModel:
    state = load_file(str(checkpoint / "model.safetensors"))
    cfg = BiLMConfig.from_dict(loads_strict(config.read_text(), str(config))["options"])
    lex = state["lexical_head.weight"].shape[0] if "lexical_head.weight" in state else 0
    ctx = state["contextual_head.weight"].shape[0] if "contextual_head.weight" in state else 0
    model = BiLanguageModel(BiLM(cfg), len(vocab), lexical_dim=lex, contextual_dim=ctx)
    model.load_state_dict(state)
    return model.eval()


@torch.no_grad()
def top_layers(model: BiLanguageModel, sentences: list) -> list[list[np.ndarray]]:
    """Per sentence, every layer's (n, 2P) float32 vectors at its tokens."""
    out_all = []
    for b in range(0, len(sentences), 64):
        chunk = [list(s) for s in sentences[b : b + 64]]
        out = model.bilm(batch_to_ids(chunk))
        out_all += [[a[k, 1 : len(s) + 1].numpy() for a in out.activations] for k, s in enumerate(chunk)]
    return out_all


def probe(model: BiLanguageModel) -> dict[str, float]:
    items = read_sense_sentences(SENSE_PROBE)
    sents = list(dict.fromkeys(it.tokens for it in items))
    acts = dict(zip(sents, top_layers(model, sents)))
    layers = len(acts[sents[0]])
    vec = {f"layer {j}": np.stack([acts[it.tokens][j][it.position] for it in items]) for j in range(layers)}
    top = vec[f"layer {layers - 1}"]
    p = top.shape[1] // 2
    vec["top layer, forward half"], vec["top layer, backward half"] = top[:, :p], top[:, p:]
    if model.contextual_head is not None:
        with torch.no_grad():
            vec["contextual head (teacher space)"] = model.contextual_head(torch.from_numpy(top)).numpy()
    groups = [idx for idx in group_by_key(items).values() if len(idx) >= 2]
    scores = {
        name: np.concatenate([loo_nn_scores(v[idx], [items[i].sense for i in idx]) for idx in groups])
        for name, v in vec.items()
    }
    out = {name: 100 * float(sc.mean()) for name, sc in scores.items()}
    # A sentence's first token (most of the probe's capitalised plurals, "Trunks ...") is where the biLM is least
    # contextual: the forward half has seen only <S>, and the backward half must predict <S> next. Scored apart,
    # they show how much of the gap is this position (docs/TEACHERS.md).
    first = np.concatenate([[items[i].position == 0 for i in idx] for idx in groups])
    top_scores = scores[f"layer {layers - 1}"]
    out[f"layer {layers - 1}, sentence-first targets ({int(first.sum())})"] = 100 * float(top_scores[first].mean())
    out[f"layer {layers - 1}, other targets ({int((~first).sum())})"] = 100 * float(top_scores[~first].mean())
    return out


def agreement(model: BiLanguageModel, vocab: Vocabulary, sents: list, groups: list[list[tuple[int, int]]]) -> float:
    """% of occurrences whose nearest other occurrence in their group (top layer, cosine) is among the teacher
    geometry's 3 nearest. groups: lists of (sentence index, token position)."""
    from elmo_core.training.teacher import MiniLMTeacher, load_glove

    teacher = MiniLMTeacher([6])
    mini = [m for b in range(0, len(sents), 64) for m in teacher.token_states([list(s) for s in sents[b : b + 64]])]
    student = [a[-1] for a in top_layers(model, sents)]
    index, glove = load_glove()
    rows = [index[t.lower()] for t in vocab.tokens if t.lower() in index]
    glove = glove - glove[rows].mean(axis=0)
    mean = np.concatenate([s[m] for s, m in mini]).mean(axis=0)
    hits = total = 0
    for where in groups:
        s = unit(np.stack([student[i][t] for i, t in where]))
        m = unit(np.stack([mini[i][0][t] - mean for i, t in where]))
        bags = []
        for i, t in where:
            context = [glove[index[x.lower()]] for j, x in enumerate(sents[i]) if j != t and x.lower() in index]
            bags.append(np.mean(context, axis=0) if context else np.zeros(glove.shape[1], dtype=np.float32))
        geometry = np.concatenate([m, unit(np.stack(bags))], axis=1)
        ss, tt = s @ s.T, geometry @ geometry.T
        np.fill_diagonal(ss, -np.inf)
        np.fill_diagonal(tt, -np.inf)
        top3 = np.argsort(-tt, axis=1)[:, :3]
        nearest = ss.argmax(axis=1)
        hits += int(sum(nearest[k] in top3[k] for k in range(len(where))))
        total += len(where)
    return 100 * hits / max(total, 1)


def corpus_groups(vocab: Vocabulary, sentences: list, min_id: int = 150) -> tuple[list, list]:
    """Sentences of 5-40 tokens and, per content word with >= 6 occurrences among them, at most 16 (seeded)."""
    sents = [s for s in sentences if 5 <= len(s) <= 40]
    occurrences = defaultdict(list)
    for i, s in enumerate(sents):
        for t, w in enumerate(s):
            if vocab.index.get(w, 0) >= min_id and len(w) >= 3:
                occurrences[w].append((i, t))
    rng = np.random.default_rng(0)
    groups = [
        [where[j] for j in sorted(rng.choice(len(where), min(16, len(where)), replace=False))]
        for where in occurrences.values()
        if len(where) >= 6
    ]
    return sents, groups


def probe_groups() -> tuple[list, list]:
    items = read_sense_sentences(SENSE_PROBE)
    sents = list(dict.fromkeys(it.tokens for it in items))
    index = {s: i for i, s in enumerate(sents)}
    return sents, [[(index[items[i].tokens], items[i].position) for i in idx] for idx in group_by_key(items).values()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--config", type=Path, default=Path("runs/default/config.json"))
    ap.add_argument("--vocab", type=Path, default=Path("runs/default/vocab.txt"))
    ap.add_argument("--corpus", type=Path, default=Path("data/corpus"))
    ap.add_argument("--sentences", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-agreement", action="store_true")
    ap.add_argument(
        "--dev-perplexity",
        type=int,
        default=0,
        metavar="N",
        help="also the forward / backward perplexity on the first N sentences of dev.txt (1500: the runs' own)",
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    vocab = Vocabulary.load(args.vocab)
    model = load(args.checkpoint, args.config, vocab)
    print("| representation | sense probe 1-NN (%) |\n|---|---|")
    for name, score in probe(model).items():
        print(f"| {name} | {score:.1f} |")
    if args.dev_perplexity:
        from elmo_core.training.evaluate import perplexity

        ppl = perplexity(model, read_token_lines(args.corpus / "dev.txt", args.dev_perplexity), vocab)
        print(
            f"\ndev perplexity ({ppl['tokens']} tokens): forward {ppl['forward']:.1f}, backward {ppl['backward']:.1f}"
        )
    if args.skip_agreement:
        return
    print(
        "\n| sentences | groups | occurrences | student's nearest among the teacher's 3 nearest (%) |\n|---|---|---|---|"
    )
    for label, path in (("train.txt (in the teacher set)", "train.txt"), ("dev.txt (unseen)", "dev.txt")):
        sents, groups = corpus_groups(vocab, read_token_lines(args.corpus / path, args.sentences))
        print(
            f"| {label}, first {args.sentences} | {len(groups)} | {sum(map(len, groups))} | "
            f"{agreement(model, vocab, sents, groups):.1f} |"
        )
    sents, groups = probe_groups()
    print(
        f"| the sense probe, one group per word | {len(groups)} | {sum(map(len, groups))} | "
        f"{agreement(model, vocab, sents, groups):.1f} |"
    )


if __name__ == "__main__":
    main()

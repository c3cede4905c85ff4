"""Train a biLM from tokenized text: ``python -m elmo_core train CONFIG.json [--resume]``.

Sentences are trained one at a time from a zero LSTM state (``<S>`` ... ``</S>``), the same way the app
embeds them (stateless mode), rather than as bilm-tf's stateful 20-token windows. Checkpoints hold
tensors in safetensors and everything else in JSON, so resuming never unpickles anything and continues
exactly: model, optimizer, data position and RNG state.
Multi-process training uses PyTorch's launcher: ``torchrun --nproc_per_node N -m elmo_core train CONFIG``
(DDP; gloo on CPU, NCCL on GPU); each rank takes every N-th batch.
"""
from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from dataclasses import MISSING, asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from safetensors.torch import load_file, save_file

from elmo_core.model.bilm import BiLM
from elmo_core.model.chars import batch_to_ids
from elmo_core.model.config import BiLMConfig
from elmo_core.training.lm import BiLanguageModel, LMLoss
from elmo_core.data.text import read_token_lines as read_sentences  # noqa: F401  (also this module's public name)
from elmo_core.data.vocab import Vocabulary
from elmo_core.model.weights import save_checkpoint
from elmo_core.data.wordforms import form_grouper


@dataclass
class TrainConfig:
    """Everything a run needs; saved in every checkpoint. Paths are relative to the working directory."""

    corpus_dir: str  # holds train.txt and dev.txt, one tokenized sentence per line
    out_dir: str  # run folder: vocab.txt, checkpoint/, best/, log.jsonl
    options: dict[str, Any] = field(default_factory=dict)  # the biLM's options.json blocks
    vocab_size: int = 50000
    min_count: int = 2
    batch_size: int = 64  # sentences per step (per process)
    max_sentence_tokens: int = 60  # longer sentences are skipped in training
    lr: float = 2e-3
    warmup_steps: int = 300
    decay_start: int = 0  # from this step the learning rate falls linearly to min_lr_ratio * lr at decay_end (0 = constant)
    decay_end: int = 0  # where the decay reaches its floor, which then holds (0 = max_steps)
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.0
    dropout: float = 0.1
    clip_norm: float = 1.0
    max_steps: int = 10**9
    max_hours: float = 1e9
    checkpoint_minutes: float = 5.0
    eval_every: int = 500
    dev_sentences: int = 2000
    seed: int = 0
    threads: int = 0  # torch CPU threads (0 = leave PyTorch's default)
    max_train_sentences: int = 0  # 0 = all (a small number is useful for tests)
    bf16: bool = False  # bfloat16 autocast for the biLM (the softmax and the losses stay float32)
    # Where to start from: a run folder (vocab.txt + checkpoint/) or a shipped model folder (assets/default:
    # vocab.txt, model.safetensors, softmax.safetensors); its biLM and softmax, a fresh optimizer.
    init_from: str = ""
    # Teachers (training only; their heads are dropped at export). Weights of 0 leave the paper's objective.
    lexical_weight: float = 0.0  # layer 0 predicts GloVe 6B 50-d of the lowercased word (elmo_core.training.teacher)
    contextual_weight: float = 0.0  # the top layer predicts precomputed MiniLM states
    similarity_weight: float = 0.0  # the top layer's own pairwise cosines match the teacher's (same targets)
    contextual_targets: str = ""  # safetensors from ``python -m elmo_core teacher``; covers the first S lines
    occurrence_weight: float = 0.0  # occurrences of the same word: their cosines match the teacher's
    occurrence_min_id: int = 150  # vocabulary ids below this (function words, punctuation) form no such pairs
    occurrence_temperature: float = 0.1  # lower = the term weighs each occurrence's nearest ones more
    bag_teacher: bool = False  # the similarity terms match [MiniLM ; GloVe bag of context] (teacher.context_bags)
    bag_directional: bool = False  # the bag teacher split by side: before the token, after it (teacher.directional_bags)
    occurrence_forms: bool = False  # the occurrence term and anchors group a word's forms (case, -s): wordforms.form_groups
    side_bag_weight: float = 0.0  # the top layer's first K dims per direction carry saturated bags of the context (lm.side_bag_distance)
    side_bag_min_id: int = 300  # vocabulary ids below this (the most frequent words) are left out of the side bags
    side_bag_saturation: float = 0.2  # s in tanh(s * sum of the side's GloVe vectors)
    side_bag_scale: float = 8.0  # the bags' norm scale in the top layer, against the LM's share of it
    side_bag_inclusive: bool = False  # each side's bag includes the token itself (easier for an LSTM to learn)
    anchor_group: int = 0  # > 0: each batch is batch_size / anchor_group words x anchor_group sentences holding each

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check every value's type and range, so a bad config fails in one line before a run folder is made.

        Raises: ValueError naming the key, the value and what it must be.
        """
        for name, spec in self.__dataclass_fields__.items():
            value = getattr(self, name)
            kind = (type(spec.default) if spec.default is not MISSING else
                    dict if spec.default_factory is not MISSING else str)  # corpus_dir and out_dir have no default
            ok = (isinstance(value, bool) if kind is bool else
                  isinstance(value, int) and not isinstance(value, bool) if kind is int else
                  isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) if kind is float
                  else isinstance(value, kind))
            if not ok:
                what = {bool: "true or false", int: "a whole number", float: "a finite number", str: "a string",
                        dict: "an object"}.get(kind, kind.__name__)
                raise ValueError(f"config key {name!r} must be {what}, got {value!r}")
        for name, low, strict in _CONFIG_BOUNDS:
            value = getattr(self, name)
            if value < low or (strict and value == low):
                raise ValueError(f"config key {name!r} must be {'>' if strict else '>='} {low}, got {value!r}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"config key 'dropout' must lie in [0, 1), got {self.dropout!r}")
        if not 0 <= self.min_lr_ratio <= 1:
            raise ValueError(f"config key 'min_lr_ratio' must lie in [0, 1], got {self.min_lr_ratio!r}")
        if self.side_bag_weight:
            from elmo_core.training.teacher import GLOVE_DIM  # read at call time: the tests stand in smaller lexical vectors
            projection = (self.options.get("lstm") or {}).get("projection_dim")
            if isinstance(projection, int) and projection < GLOVE_DIM:
                raise ValueError(f"side bags need {GLOVE_DIM} of each direction's dimensions, but options.lstm."
                                 f"projection_dim is {projection}; set side_bag_weight to 0 or widen the projection")
            if self.side_bag_min_id >= self.vocab_size:
                raise ValueError(f"config key 'side_bag_min_id' ({self.side_bag_min_id}) leaves no word of the "
                                 f"vocabulary ({self.vocab_size}) in the side bags")

    @classmethod
    def load(cls, path: str | Path) -> "TrainConfig":
        if not Path(path).is_file():
            raise FileNotFoundError(f"training config not found: {path}")
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a training config is a JSON object of keys and values")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"{path}: unknown config keys {sorted(unknown)}")
        missing = {"corpus_dir", "out_dir"} - set(data)
        if missing:
            raise ValueError(f"{path}: missing config keys {sorted(missing)}")
        return cls(**data)


# (key, bound, strict): the value must be > bound (strict) or >= bound.
_CONFIG_BOUNDS = [
    *((k, 1, False) for k in ("vocab_size", "min_count", "batch_size", "max_sentence_tokens", "warmup_steps",
                              "eval_every")),
    *((k, 0, False) for k in ("lr", "max_steps", "decay_start", "decay_end", "weight_decay", "dev_sentences", "seed",
                              "threads", "max_train_sentences", "lexical_weight", "contextual_weight",
                              "similarity_weight", "occurrence_weight", "occurrence_min_id", "anchor_group",
                              "side_bag_weight", "side_bag_min_id")),
    *((k, 0, True) for k in ("clip_norm", "max_hours", "checkpoint_minutes", "occurrence_temperature",
                             "side_bag_saturation", "side_bag_scale")),
]


def learning_rate(cfg: TrainConfig, step: int) -> float:
    """Linear warm-up, constant, then (with ``decay_start``) a linear decay to ``min_lr_ratio * lr``.

    The decay ends at ``decay_end`` (or ``max_steps`` when that is 0) and the floor holds after it, so a run can go
    on at the low rate that finished the decay, where the sense probe was still rising (docs/TEACHERS.md).
    """
    lr = cfg.lr * min(1.0, (step + 1) / cfg.warmup_steps)
    end = cfg.decay_end or cfg.max_steps
    if cfg.decay_start and step >= cfg.decay_start and end > cfg.decay_start:
        done = min(1.0, (step - cfg.decay_start) / (end - cfg.decay_start))
        lr *= 1.0 - (1.0 - cfg.min_lr_ratio) * done
    return lr


def epoch_batches(lengths: np.ndarray, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
    """The batches of one epoch: shuffled, then grouped by similar length to cut padding.

    Deterministic in (seed, epoch), so a resumed run recomputes the same order and skips to its position.
    """
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    pool = batch_size * 50
    batches = []
    for start in range(0, len(order), pool):
        chunk = order[start : start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


LENGTH_BUCKETS = (12, 20, 30, 10**9)  # anchor batches draw sentences of one length band, to limit padding


def anchor_index(sentence_ids: list[np.ndarray], vocab_tokens: list[str], group: int, min_id: int
                 ) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """Per length band, the anchor words (vocabulary ids) and the sentences that hold each.

    An anchor is a word of at least three letters, id >= ``min_id``, found in at least ``group`` sentences
    of the band. Args: sentence_ids: each training sentence's token ids (boundaries excluded).
    Returns: per band of ``LENGTH_BUCKETS``, (ids (A,), [sentence indices (n_a,)]).
    """
    lengths = np.array([len(x) for x in sentence_ids])
    band = np.searchsorted(np.array(LENGTH_BUCKETS), lengths)  # band b holds lengths <= LENGTH_BUCKETS[b]
    eligible = np.array([len(t) >= 3 and t.isalpha() for t in vocab_tokens])
    eligible[:min_id] = False
    out = []
    for b in range(len(LENGTH_BUCKETS)):
        members = np.flatnonzero(band == b)
        if not len(members):
            out.append((np.zeros(0, dtype=np.int64), []))
            continue
        ids = np.concatenate([sentence_ids[i] for i in members])
        sent = np.repeat(members, [len(sentence_ids[i]) for i in members])
        pick = eligible[ids]
        pairs = np.unique(np.stack([ids[pick], sent[pick]], axis=1), axis=0)  # (word, sentence), each once
        words, starts, counts = np.unique(pairs[:, 0], return_index=True, return_counts=True)
        keep = counts >= group
        out.append((words[keep], [pairs[a : a + n, 1] for a, n in zip(starts[keep], counts[keep])]))
    return out


def anchor_epoch_batches(index: list[tuple[np.ndarray, list[np.ndarray]]], num_batches: int, batch_size: int,
                         group: int, seed: int, epoch: int) -> list[np.ndarray]:
    """One epoch of anchor batches: each picks a length band (by its share of anchor sentences), then
    ``batch_size // group`` anchor words (probability ~ sqrt of their sentence count) and ``group`` of each
    one's sentences, so the batch holds many occurrences of the same words in different contexts.

    Deterministic in (seed, epoch), like ``epoch_batches``, so a resumed run continues exactly.
    """
    rng = np.random.default_rng([seed, epoch, 1])
    bands = [b for b, (words, _) in enumerate(index) if len(words)]
    if not bands:
        raise ValueError("no word occurs in enough sentences to anchor a batch; lower anchor_group")
    weight = np.array([sum(len(x) for x in index[b][1]) for b in bands], dtype=float)
    band_p = weight / weight.sum()
    word_p = {}
    for b in bands:
        w = np.sqrt([len(x) for x in index[b][1]])
        word_p[b] = w / w.sum()
    per_batch = max(1, batch_size // group)
    batches = []
    for _ in range(num_batches):
        b = bands[rng.choice(len(bands), p=band_p)]
        words, sents = index[b]
        chosen = rng.choice(len(words), size=min(per_batch, len(words)), replace=False, p=word_p[b])
        rows = np.concatenate([rng.choice(sents[a], size=group, replace=False) for a in chosen])
        batches.append(rows[np.sort(np.unique(rows, return_index=True)[1])])  # a sentence once per batch
    return batches


def teacher_dims(cfg: TrainConfig) -> tuple[int, int]:
    """Sizes of the lexical and contextual heads that ``cfg`` asks for (0 = none)."""
    from elmo_core.training.teacher import GLOVE_DIM

    lexical = GLOVE_DIM if cfg.lexical_weight else 0
    contextual = 0
    if cfg.contextual_weight or cfg.similarity_weight or cfg.occurrence_weight:
        from safetensors import safe_open
        with safe_open(cfg.contextual_targets, "pt") as f:
            contextual = json.loads(f.metadata()["meta"])["dim"]
    return lexical, contextual


def make_batch(sentences: list[list[str]], vocab: Vocabulary) -> tuple[torch.Tensor, torch.Tensor]:
    """char ids (B, T, 50) and word ids (B, T + 2) with ``<S>``/``</S>``, padded with ``</S>``'s id."""
    char_ids = batch_to_ids(sentences)
    words = torch.full((len(sentences), char_ids.shape[1] + 2), vocab.eos, dtype=torch.long)
    for i, s in enumerate(sentences):
        words[i, : len(s) + 2] = torch.tensor(vocab.encode(s))
    return char_ids, words


@torch.no_grad()
def perplexity(model: BiLanguageModel, sentences: list[list[str]], vocab: Vocabulary, batch_size: int = 64,
               device: torch.device | None = None) -> dict[str, float]:
    """Held-out forward and backward perplexity (exp of mean NLL per predicted token, ``</S>``/``<S>`` included).

    Returns: {"forward": ppl, "backward": ppl, "average": mean of the two ppls, "tokens": predictions per direction}.
    """
    was_training = model.training
    model.eval()
    device = device or next(model.parameters()).device
    fwd = bwd = 0.0
    tokens = 0
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    for start in range(0, len(order), batch_size):
        batch = [sentences[i] for i in order[start : start + batch_size]]
        char_ids, words = make_batch(batch, vocab)
        loss = model(char_ids.to(device), words.to(device))
        fwd += float(loss.forward_nll)
        bwd += float(loss.backward_nll)
        tokens += loss.tokens
    model.train(was_training)
    f, b = math.exp(fwd / max(tokens, 1)), math.exp(bwd / max(tokens, 1))
    return {"forward": f, "backward": b, "average": (f + b) / 2, "tokens": tokens}


# ---- checkpoints (safetensors + JSON; no pickle) ------------------------------------------------

def _save_training_state(path: Path, model: BiLanguageModel, optimizer: torch.optim.Optimizer,
                         meta: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, str(tmp / "model.safetensors"))
    opt = optimizer.state_dict()
    tensors = {"rng.torch": torch.get_rng_state()}
    for idx, state in opt["state"].items():
        for key, value in state.items():
            tensors[f"opt.{idx}.{key}"] = torch.as_tensor(value).detach().cpu().contiguous()
    save_file(tensors, str(tmp / "state.safetensors"))
    (tmp / "meta.json").write_text(json.dumps({**meta, "param_groups": opt["param_groups"]}, indent=1))
    # Swap in atomically-ish so a crash mid-save never leaves a half checkpoint as the only one.
    old = path.with_name(path.name + ".old")
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    if old.exists():
        for f in old.iterdir():
            f.unlink()
        old.rmdir()


def _load_training_state(path: Path, model: BiLanguageModel, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    model.load_state_dict(load_file(str(path / "model.safetensors")))
    tensors = load_file(str(path / "state.safetensors"))
    meta = json.loads((path / "meta.json").read_text())
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith("opt."):
            _, idx, name = key.split(".", 2)
            state.setdefault(int(idx), {})[name] = value
    optimizer.load_state_dict({"state": state, "param_groups": meta.pop("param_groups")})
    torch.set_rng_state(tensors["rng.torch"])
    return meta


def export_model(model: BiLanguageModel, vocab: Vocabulary, directory: Path, dtype=torch.float32) -> None:
    """Write the inference files: options.json + model.safetensors (biLM), softmax.safetensors, vocab.txt."""
    save_checkpoint(model.bilm, directory, dtype)
    save_file({k: v.detach().to(dtype).cpu().contiguous() for k, v in model.softmax.state_dict().items()},
              str(directory / "softmax.safetensors"),
              metadata={"cutoffs": json.dumps(model.softmax.cutoffs[:-1])})
    vocab.save(directory / "vocab.txt")


def load_language_model(directory: str | Path) -> tuple[BiLanguageModel, Vocabulary]:
    """Load an exported biLM together with its softmax and vocabulary (for perplexity).

    Raises: FileNotFoundError if softmax.safetensors or vocab.txt is missing.
    """
    from safetensors import safe_open
    from elmo_core.model.weights import load_checkpoint

    directory = Path(directory)
    for name in ("softmax.safetensors", "vocab.txt"):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory}: no {name}; perplexity needs the softmax and vocabulary")
    vocab = Vocabulary.load(directory / "vocab.txt")
    with safe_open(str(directory / "softmax.safetensors"), "pt") as f:
        cutoffs = json.loads(f.metadata()["cutoffs"])
    model = BiLanguageModel(load_checkpoint(directory), len(vocab), dropout=0.0, cutoffs=cutoffs)
    model.softmax.load_state_dict({k: v.float() for k, v in load_file(str(directory / "softmax.safetensors")).items()})
    return model.eval(), vocab


# ---- the loop -------------------------------------------------------------------------------------

def _start_state(init: Path) -> dict:
    """The language model's weights to start from (``init_from``), float32, keyed as ``BiLanguageModel``'s:
    a run's checkpoint as it is, or a shipped model's biLM and softmax (stored float16) under "bilm." and
    "softmax.". Raises: FileNotFoundError when the folder is neither."""
    if (init / "checkpoint" / "model.safetensors").is_file():
        return load_file(str(init / "checkpoint" / "model.safetensors"))
    if (init / "model.safetensors").is_file() and (init / "softmax.safetensors").is_file():
        state = {f"bilm.{k}": v.float() for k, v in load_file(str(init / "model.safetensors")).items()}
        state.update({f"softmax.{k}": v.float() for k, v in load_file(str(init / "softmax.safetensors")).items()})
        return state
    raise FileNotFoundError(f"init_from {init}: neither a run folder (checkpoint/model.safetensors) nor a shipped "
                            "model folder (model.safetensors + softmax.safetensors)")


def train(cfg: TrainConfig, resume: bool = False, progress: bool = True) -> dict[str, Any]:
    """Run (or continue) training until ``max_steps`` or ``max_hours``; returns the last metrics.

    Raises:
        FileNotFoundError: corpus files missing. FileExistsError: the run folder has a checkpoint and
        ``resume`` is False (so nothing is overwritten by accident).
    """
    cfg.validate()  # before anything is written: a bad value must not leave a half-made run folder
    if cfg.lexical_weight or cfg.bag_teacher or cfg.side_bag_weight:
        from elmo_core.training.teacher import check_glove
        check_glove()  # likewise a missing extra
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if torch.cuda.is_available() else torch.device("cpu")
    if distributed:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    out = Path(cfg.out_dir)
    ckpt = out / "checkpoint"
    if ckpt.exists() and not resume:
        raise FileExistsError(f"{ckpt} exists: pass --resume to continue it, or choose another out_dir")
    corpus = Path(cfg.corpus_dir)
    for name in ("train.txt", "dev.txt"):
        if not (corpus / name).is_file():
            raise FileNotFoundError(f"{corpus / name} not found; build it with: python -m elmo_core corpus build {corpus}")

    contextual = None
    if cfg.contextual_weight or cfg.similarity_weight or cfg.occurrence_weight:
        from elmo_core.training.teacher import ContextualTargets
        contextual = ContextualTargets(cfg.contextual_targets)
    # Line numbers of train.txt (non-empty lines) are kept, since the teacher's states are indexed by them.
    all_sents = read_sentences(corpus / "train.txt", cfg.max_train_sentences)
    line_of = [i for i, s in enumerate(all_sents) if len(s) <= cfg.max_sentence_tokens
               and (contextual is None or i < contextual.num_sentences)]
    train_sents = [all_sents[i] for i in line_of]
    del all_sents
    dev_sents = read_sentences(corpus / "dev.txt", cfg.dev_sentences)
    init = Path(cfg.init_from) if cfg.init_from else None
    if resume and (out / "vocab.txt").is_file():
        vocab = Vocabulary.load(out / "vocab.txt")
    elif init is not None:
        vocab = Vocabulary.load(init / "vocab.txt")
        if rank == 0:
            out.mkdir(parents=True, exist_ok=True)
            vocab.save(out / "vocab.txt")
    else:
        vocab = Vocabulary.build(train_sents, cfg.vocab_size, cfg.min_count)
        if rank == 0:
            out.mkdir(parents=True, exist_ok=True)
            vocab.save(out / "vocab.txt")
    if rank == 0:  # on a resume too: the run's config.json (shipped as train_config.json) is the one in force
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps(asdict(cfg), indent=1))
    lengths = np.array([len(s) for s in train_sents])

    torch.manual_seed(cfg.seed)
    bilm_cfg = BiLMConfig.from_dict(cfg.options)
    lexical_dim, contextual_dim = teacher_dims(cfg)
    model = BiLanguageModel(BiLM(bilm_cfg, dropout=cfg.dropout), len(vocab), dropout=cfg.dropout,
                            lexical_dim=lexical_dim, contextual_dim=contextual_dim,
                            occurrence_min_id=cfg.occurrence_min_id if cfg.occurrence_weight else None,
                            occurrence_temperature=cfg.occurrence_temperature,
                            bag_parts=2 if cfg.bag_directional else 1, side_bag_scale=cfg.side_bag_scale).to(device)
    if init is not None and not (resume and ckpt.exists()):
        # Teacher heads start fresh: the earlier run's heads may read other teacher states (another layer or basis).
        start_state = {k: v for k, v in _start_state(init).items()
                       if not k.startswith(("lexical_head.", "contextual_head."))}
        missing, unexpected = model.load_state_dict(start_state, strict=False)
        # Only teacher heads may differ between the two runs: everything of the biLM and softmax must load.
        bad = [k for k in [*missing, *unexpected] if not k.startswith(("lexical_head.", "contextual_head."))]
        if bad:
            raise ValueError(f"{init}: checkpoint does not fit this config: {bad[:5]}")
    glove = None
    if cfg.lexical_weight or cfg.bag_teacher or cfg.side_bag_weight:
        from elmo_core.training.teacher import context_bags, directional_bags, lexical_targets, side_bags
        bag_of = directional_bags if cfg.bag_directional else context_bags
        glove = tuple(t.to(device) for t in lexical_targets(vocab.tokens))
        side_keep = glove[1] & (torch.arange(len(vocab), device=device) >= cfg.side_bag_min_id)
    lexical = glove if cfg.lexical_weight else None
    # Per training sentence, which tokens the occurrence term and the anchors count as one word (<S> ... </S>):
    # vocabulary ids, or with occurrence_forms the word's group; computed once, read by anchors and batches.
    same_word = None
    if cfg.occurrence_forms:
        group_of = form_grouper(vocab.tokens, vocab.unk)
        same_word = [np.array([vocab.bos, *map(group_of, s), vocab.eos]) for s in train_sents]
    anchors = None
    if cfg.anchor_group:
        rows = same_word if same_word is not None else [np.array(vocab.encode(s)) for s in train_sents]
        anchors = anchor_index([r[1:-1] for r in rows], vocab.tokens, cfg.anchor_group, cfg.occurrence_min_id)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    meta = {"step": 0, "epoch": 0, "batch_in_epoch": 0, "tokens_seen": 0, "train_seconds": 0.0, "cpu_seconds": 0.0,
            "best_dev": None}
    if resume and ckpt.exists():
        meta = _load_training_state(ckpt, model, optimizer)
    wrapped = torch.nn.parallel.DistributedDataParallel(model) if distributed else model
    if cfg.bf16 and device.type == "cpu":
        from elmo_core.model.embedder import cpu_has_fast_bfloat16
        if not cpu_has_fast_bfloat16():
            # Measured: without AVX512-BF16/AMX, PyTorch's bf16 CPU kernels are far slower than float32.
            print("warning: bf16 requested but this CPU has no native bfloat16; training in float32", file=sys.stderr)
            cfg = TrainConfig(**{**asdict(cfg), "bf16": False})
    if device.type == "cuda" or cfg.bf16:
        autocast = torch.autocast(device.type, dtype=torch.bfloat16)
    else:
        autocast = torch.autocast("cpu", enabled=False)
    ema_aux: dict[str, float] = {}

    stop = {"now": False}
    previous_handler = signal.signal(signal.SIGINT, lambda *_: stop.update(now=True)) if rank == 0 else None

    def save(tag: str = "checkpoint") -> None:
        if rank == 0:
            _save_training_state(out / tag, model, optimizer, meta)

    bar = None
    if progress and rank == 0:
        from tqdm import tqdm
        bar = tqdm(initial=meta["step"], total=None if cfg.max_steps >= 10**9 else cfg.max_steps, unit="step", dynamic_ncols=True)
    last_save = time.time()
    session_start = time.time()
    base_seconds = meta["train_seconds"]
    # Process CPU time, not wall time: on a shared machine the two differ several-fold (model cards report it).
    base_cpu, cpu_start = meta.get("cpu_seconds", 0.0), time.process_time()
    ema = None
    metrics: dict[str, Any] = {}
    log = open(out / "log.jsonl", "a") if rank == 0 else None
    model.train()
    try:
        while meta["step"] < cfg.max_steps and not stop["now"]:
            if anchors is not None:
                batches = anchor_epoch_batches(anchors, len(train_sents) // cfg.batch_size, cfg.batch_size,
                                               cfg.anchor_group, cfg.seed, meta["epoch"])
            else:
                batches = epoch_batches(lengths, cfg.batch_size, cfg.seed, meta["epoch"])
            while meta["batch_in_epoch"] + world <= len(batches):
                if meta["step"] >= cfg.max_steps or stop["now"]:
                    break
                if (base_seconds + time.time() - session_start) / 3600 >= cfg.max_hours:
                    stop["now"] = True
                    break
                idx = batches[meta["batch_in_epoch"] + rank]
                char_ids, words = make_batch([train_sents[i] for i in idx], vocab)
                t0 = time.time()
                lr = learning_rate(cfg, meta["step"])
                for group in optimizer.param_groups:
                    group["lr"] = lr
                ctx = None
                if contextual is not None:
                    ctx = tuple(t.to(device) for t in contextual.batch([line_of[i] for i in idx], char_ids.shape[1]))
                words = words.to(device)
                n_tok = torch.as_tensor(lengths[idx], device=device)
                bag = bag_of(words, n_tok, *glove) if cfg.bag_teacher else None
                side = None
                if cfg.side_bag_weight:
                    side = side_bags(words, n_tok, glove[0], side_keep, cfg.side_bag_saturation, cfg.side_bag_inclusive)
                occurrence_ids = None
                if same_word is not None:
                    occurrence_ids = torch.full_like(words, vocab.eos)
                    for row, i in enumerate(idx):
                        occurrence_ids[row, : lengths[i] + 2] = torch.from_numpy(same_word[i])
                with autocast:
                    loss: LMLoss = wrapped(char_ids.to(device), words, lexical, ctx, bag, occurrence_ids, side)
                optimizer.zero_grad(set_to_none=True)
                loss.total(cfg.lexical_weight, cfg.contextual_weight, cfg.similarity_weight,
                           cfg.occurrence_weight, cfg.side_bag_weight).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
                optimizer.step()
                meta["step"] += 1
                meta["batch_in_epoch"] += world
                meta["tokens_seen"] += loss.tokens * world
                meta["train_seconds"] = base_seconds + time.time() - session_start
                meta["cpu_seconds"] = base_cpu + time.process_time() - cpu_start
                value = float(loss.mean.detach())
                ema = value if ema is None else 0.98 * ema + 0.02 * value
                for name in ("lexical", "contextual", "similarity", "occurrence", "side_bag"):
                    part = getattr(loss, name)
                    if part is not None:
                        v = float(part.detach())
                        ema_aux[name] = v if name not in ema_aux else 0.98 * ema_aux[name] + 0.02 * v
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{ema:.3f}", ppl=f"{math.exp(ema):.1f}",
                                    tok_s=f"{loss.tokens * world / max(time.time() - t0, 1e-9):.0f}", epoch=meta["epoch"])
                if rank == 0 and meta["step"] % 50 == 0:
                    log.write(json.dumps({"step": meta["step"], "loss": ema, **ema_aux, "lr": lr,
                                          "tokens_seen": meta["tokens_seen"],
                                          "train_seconds": round(meta["train_seconds"], 1),
                                          "cpu_seconds": round(meta["cpu_seconds"], 1)}) + "\n")
                    log.flush()
                if rank == 0 and meta["step"] % cfg.eval_every == 0:
                    metrics = perplexity(model, dev_sents, vocab, device=device)
                    log.write(json.dumps({"step": meta["step"], "dev": metrics}) + "\n")
                    log.flush()
                    if meta["best_dev"] is None or metrics["average"] < meta["best_dev"]:
                        meta["best_dev"] = metrics["average"]
                        export_model(model, vocab, out / "best")
                if time.time() - last_save >= cfg.checkpoint_minutes * 60:
                    save()
                    last_save = time.time()
            else:
                meta["epoch"] += 1
                meta["batch_in_epoch"] = 0
    finally:
        save()
        if rank == 0:
            export_model(model, vocab, out / "last")
            log.close()
        if bar is not None:
            bar.close()
        if previous_handler is not None:
            signal.signal(signal.SIGINT, previous_handler)
        if distributed:
            dist.destroy_process_group()
    return {**meta, **metrics}

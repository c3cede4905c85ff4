"""What a training run is made of before its first step: the process group, the corpus and vocabulary, the
language model (fresh or from ``init_from``), what the teacher terms read, and the autocast context."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from elmo_core.data.text import read_token_lines as read_sentences
from elmo_core.data.vocab import Vocabulary
from elmo_core.data.wordforms import form_grouper
from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.model.strict_json import loads_strict
from elmo_core.training.batches import anchor_index
from elmo_core.training.checkpoints import start_state
from elmo_core.training.config import TrainConfig
from elmo_core.training.lm import BiLanguageModel

TEACHER_HEADS = ("lexical_head.", "contextual_head.")  # training-only heads, never carried over by init_from


@dataclass
class Processes:
    """This process's place in the run: its device, its rank and the number of processes (1 without torchrun)."""

    device: torch.device
    rank: int
    world: int
    distributed: bool

    @classmethod
    def start(cls) -> Processes:
        """Join torchrun's process group (``WORLD_SIZE`` > 1; NCCL on GPU, gloo on CPU) on ``LOCAL_RANK``'s GPU."""
        distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
        device = (
            torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
            if torch.cuda.is_available()
            else torch.device("cpu")
        )
        if distributed:
            dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
        return cls(device, rank, world, distributed)


@dataclass
class RunData:
    """The run's sentences and vocabulary."""

    train_sents: list[list[str]]  # train.txt's sentences of at most max_sentence_tokens tokens
    line_of: list[int]  # each one's index among train.txt's sentences (the teacher's states are indexed by it)
    lengths: np.ndarray  # (len(train_sents),) tokens per sentence
    dev_sents: list[list[str]]
    vocab: Vocabulary
    contextual: Any  # teacher.ContextualTargets, or None when no term needs the contextual teacher


def read_data(cfg: TrainConfig, out: Path, resume: bool, rank: int) -> RunData:
    """Read train.txt and dev.txt, and the vocabulary: the run's own on a resume, else ``init_from``'s, else
    built from the training sentences. Rank 0 writes vocab.txt and config.json (also on a resume: the run's
    config.json, shipped as train_config.json, is the one in force).
    Raises: FileNotFoundError for a missing corpus file or teacher targets."""
    corpus = Path(cfg.corpus_dir)
    for name in ("train.txt", "dev.txt"):
        if not (corpus / name).is_file():
            raise FileNotFoundError(
                f"{corpus / name} not found; build it with: python -m elmo_core corpus build {corpus}"
            )
    contextual = None
    if cfg.contextual_weight or cfg.similarity_weight or cfg.occurrence_weight:
        from elmo_core.training.teacher import ContextualTargets

        contextual = ContextualTargets(cfg.contextual_targets)
    all_sents = read_sentences(corpus / "train.txt", cfg.max_train_sentences)
    line_of = [
        i
        for i, s in enumerate(all_sents)
        if len(s) <= cfg.max_sentence_tokens and (contextual is None or i < contextual.num_sentences)
    ]
    train_sents = [all_sents[i] for i in line_of]
    del all_sents
    dev_sents = read_sentences(corpus / "dev.txt", cfg.dev_sentences)
    if resume and (out / "vocab.txt").is_file():
        vocab = Vocabulary.load(out / "vocab.txt")
    else:
        vocab = (
            Vocabulary.load(Path(cfg.init_from) / "vocab.txt")
            if cfg.init_from
            else Vocabulary.build(train_sents, cfg.vocab_size, cfg.min_count)
        )
        if rank == 0:
            out.mkdir(parents=True, exist_ok=True)
            vocab.save(out / "vocab.txt")
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps(asdict(cfg), indent=1))
    return RunData(train_sents, line_of, np.array([len(s) for s in train_sents]), dev_sents, vocab, contextual)


def teacher_dims(cfg: TrainConfig) -> tuple[int, int]:
    """Sizes of the lexical and contextual heads that ``cfg`` asks for (0 = none)."""
    from elmo_core.training.teacher import GLOVE_DIM

    lexical = GLOVE_DIM if cfg.lexical_weight else 0
    contextual = 0
    if cfg.contextual_weight or cfg.similarity_weight or cfg.occurrence_weight:
        from safetensors import safe_open

        with safe_open(cfg.contextual_targets, "pt") as f:
            contextual = loads_strict(f.metadata()["meta"], f"{cfg.contextual_targets}: meta", constants=True)["dim"]
    return lexical, contextual


def build_model(cfg: TrainConfig, vocab_size: int, device: torch.device) -> BiLanguageModel:
    """A fresh language model (biLM, softmax over ``vocab_size`` words, the teacher heads ``cfg`` asks for)."""
    bilm_cfg = BiLMConfig.from_dict(cfg.options)
    lexical_dim, contextual_dim = teacher_dims(cfg)
    return BiLanguageModel(
        BiLM(bilm_cfg, dropout=cfg.dropout),
        vocab_size,
        dropout=cfg.dropout,
        lexical_dim=lexical_dim,
        contextual_dim=contextual_dim,
        occurrence_min_id=cfg.occurrence_min_id if cfg.occurrence_weight else None,
        occurrence_temperature=cfg.occurrence_temperature,
        bag_parts=2 if cfg.bag_directional else 1,
        side_bag_scale=cfg.side_bag_scale,
    ).to(device)


def load_start(model: BiLanguageModel, init: Path) -> None:
    """Load ``init_from``'s biLM and softmax into ``model``; the teacher heads start fresh, since the earlier
    run's heads may read other teacher states (another layer or basis).
    Raises: ValueError when anything of the biLM or softmax does not load (another model's shapes or keys)."""
    state = {k: v for k, v in start_state(init).items() if not k.startswith(TEACHER_HEADS)}
    missing, unexpected = model.load_state_dict(state, strict=False)
    bad = [k for k in [*missing, *unexpected] if not k.startswith(TEACHER_HEADS)]
    if bad:
        raise ValueError(f"{init}: checkpoint does not fit this config: {bad[:5]}")


@dataclass
class Teachers:
    """What the teacher terms read besides the batch, made once per run (all None for the paper's objective)."""

    glove: tuple | None  # lexical_targets: (V, 50) GloVe vectors, (V,) bool has-a-vector, on the device
    side_keep: torch.Tensor | None  # (V,) bool: the words that enter the side bags
    same_word: list[np.ndarray] | None  # per training sentence, (n + 2,) ids that count as one word (<S> ... </S>)
    anchors: list | None  # batches.anchor_index's bands

    @classmethod
    def prepare(cls, cfg: TrainConfig, data: RunData, device: torch.device) -> Teachers:
        """What ``cfg``'s teacher terms need, for ``data``'s sentences and vocabulary (GloVe on ``device``)."""
        glove = side_keep = None
        if cfg.lexical_weight or cfg.bag_teacher or cfg.side_bag_weight:
            from elmo_core.training.teacher import lexical_targets

            glove = tuple(t.to(device) for t in lexical_targets(data.vocab.tokens))
            side_keep = glove[1] & (torch.arange(len(data.vocab), device=device) >= cfg.side_bag_min_id)
        vocab = data.vocab
        same_word = None
        if cfg.occurrence_forms:  # a word's forms (case, -s) count as one: wordforms.form_groups
            group_of = form_grouper(vocab.tokens, vocab.unk)
            same_word = [np.array([vocab.bos, *map(group_of, s), vocab.eos]) for s in data.train_sents]
        anchors = None
        if cfg.anchor_group:
            rows = same_word if same_word is not None else [np.array(vocab.encode(s)) for s in data.train_sents]
            anchors = anchor_index([r[1:-1] for r in rows], vocab.tokens, cfg.anchor_group, cfg.occurrence_min_id)
        return cls(glove, side_keep, same_word, anchors)


def autocast_for(cfg: TrainConfig, device: torch.device) -> tuple[TrainConfig, Any]:
    """The config in force and the autocast context: bfloat16 on a GPU, or on a CPU with ``bf16`` where the CPU
    has native bfloat16 (without AVX512-BF16 or AMX PyTorch's bf16 kernels are far slower than float32, so
    ``bf16`` is turned off with a warning); float32 otherwise."""
    if cfg.bf16 and device.type == "cpu":
        from elmo_core.model.embedder import cpu_has_fast_bfloat16

        if not cpu_has_fast_bfloat16():
            print("warning: bf16 requested but this CPU has no native bfloat16; training in float32", file=sys.stderr)
            cfg = TrainConfig(**{**asdict(cfg), "bf16": False})
    if device.type == "cuda" or cfg.bf16:
        return cfg, torch.autocast(device.type, dtype=torch.bfloat16)
    return cfg, torch.autocast("cpu", enabled=False)

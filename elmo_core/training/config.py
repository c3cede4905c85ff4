"""A training run's configuration (``TrainConfig``, saved in every checkpoint and as the run's config.json)
and its learning-rate schedule."""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any

from elmo_core.model.strict_json import loads_strict


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
    decay_start: int = (
        0  # from this step the learning rate falls linearly to min_lr_ratio * lr at decay_end (0 = constant)
    )
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
    bag_directional: bool = (
        False  # the bag teacher split by side: before the token, after it (teacher.directional_bags)
    )
    occurrence_forms: bool = (
        False  # the occurrence term and anchors group a word's forms (case, -s): wordforms.form_groups
    )
    side_bag_weight: float = (
        0.0  # the top layer's first K dims per direction carry saturated bags of the context (lm.side_bag_distance)
    )
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
            kind = (
                type(spec.default)
                if spec.default is not MISSING
                else dict
                if spec.default_factory is not MISSING
                else str
            )  # corpus_dir and out_dir have no default
            ok = (
                isinstance(value, bool)
                if kind is bool
                else isinstance(value, int) and not isinstance(value, bool)
                if kind is int
                else isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                if kind is float
                else isinstance(value, kind)
            )
            if not ok:
                what = {
                    bool: "true or false",
                    int: "a whole number",
                    float: "a finite number",
                    str: "a string",
                    dict: "an object",
                }.get(kind, kind.__name__)
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
            from elmo_core.training.teacher import (
                GLOVE_DIM,  # read at call time: the tests stand in smaller lexical vectors
            )

            projection = (self.options.get("lstm") or {}).get("projection_dim")
            if isinstance(projection, int) and projection < GLOVE_DIM:
                raise ValueError(
                    f"side bags need {GLOVE_DIM} of each direction's dimensions, but options.lstm."
                    f"projection_dim is {projection}; set side_bag_weight to 0 or widen the projection"
                )
            if self.side_bag_min_id >= self.vocab_size:
                raise ValueError(
                    f"config key 'side_bag_min_id' ({self.side_bag_min_id}) leaves no word of the "
                    f"vocabulary ({self.vocab_size}) in the side bags"
                )

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        if not Path(path).is_file():
            raise FileNotFoundError(f"training config not found: {path}")
        data = loads_strict(Path(path).read_text(encoding="utf-8"), str(path))
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
    *(
        (k, 1, False)
        for k in ("vocab_size", "min_count", "batch_size", "max_sentence_tokens", "warmup_steps", "eval_every")
    ),
    *(
        (k, 0, False)
        for k in (
            "lr",
            "max_steps",
            "decay_start",
            "decay_end",
            "weight_decay",
            "dev_sentences",
            "seed",
            "threads",
            "max_train_sentences",
            "lexical_weight",
            "contextual_weight",
            "similarity_weight",
            "occurrence_weight",
            "occurrence_min_id",
            "anchor_group",
            "side_bag_weight",
            "side_bag_min_id",
        )
    ),
    *(
        (k, 0, True)
        for k in (
            "clip_norm",
            "max_hours",
            "checkpoint_minutes",
            "occurrence_temperature",
            "side_bag_saturation",
            "side_bag_scale",
        )
    ),
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

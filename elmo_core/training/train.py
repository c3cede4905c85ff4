"""Train a biLM from tokenized text: ``python -m elmo_core train CONFIG.json [--resume]``.

Sentences are trained one at a time from a zero LSTM state (``<S>`` ... ``</S>``), the same way the app
embeds them (stateless mode), rather than as bilm-tf's stateful 20-token windows. Checkpoints hold
tensors in safetensors and everything else in JSON, so resuming never unpickles anything and continues
exactly: model, optimizer, data position and RNG state (``elmo_core.training.checkpoints``).
Multi-process training uses PyTorch's launcher: ``torchrun --nproc_per_node N -m elmo_core train CONFIG``
(DDP; gloo on CPU, NCCL on GPU); each rank takes every N-th batch.

``train`` runs these steps in order: check the config, join the process group, read the corpus and the
vocabulary, build the model (from ``init_from`` or a checkpoint), prepare the teachers' inputs, then the loop
(``Loop``), which saves a checkpoint every ``checkpoint_minutes``, scores the dev split every ``eval_every``
steps and, however it ends, saves and exports ``last/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from elmo_core.data.text import read_token_lines as read_sentences  # noqa: F401  (also this module's public name)
from elmo_core.training.checkpoints import load_training_state
from elmo_core.training.config import TrainConfig
from elmo_core.training.loop import Loop
from elmo_core.training.prepare import Processes, Teachers, autocast_for, build_model, load_start, read_data


def train(cfg: TrainConfig, resume: bool = False, progress: bool = True) -> dict[str, Any]:
    """Run (or continue) training until ``max_steps`` or ``max_hours``; returns the last metrics.

    Returns: the run's meta (step, epoch, batch_in_epoch, tokens_seen, train_seconds, cpu_seconds, best_dev,
        and after a resume param_groups) and, if the dev split was scored in this session, its last perplexity.
    Raises:
        ValueError: a config value out of range, or an ``init_from`` that does not fit the config.
        FileNotFoundError: corpus files missing. FileExistsError: the run folder has a checkpoint and
        ``resume`` is False (so nothing is overwritten by accident).
    """
    _check_config(cfg)
    procs = Processes.start()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    out = Path(cfg.out_dir)
    ckpt = out / "checkpoint"
    if ckpt.exists() and not resume:
        raise FileExistsError(f"{ckpt} exists: pass --resume to continue it, or choose another out_dir")
    data = read_data(cfg, out, resume, procs.rank)
    torch.manual_seed(cfg.seed)
    model = build_model(cfg, len(data.vocab), procs.device)
    if cfg.init_from and not (resume and ckpt.exists()):
        load_start(model, Path(cfg.init_from))
    teachers = Teachers.prepare(cfg, data, procs.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    meta = {
        "step": 0,
        "epoch": 0,
        "batch_in_epoch": 0,
        "tokens_seen": 0,
        "train_seconds": 0.0,
        "cpu_seconds": 0.0,
        "best_dev": None,
    }
    if resume and ckpt.exists():
        meta = load_training_state(ckpt, model, optimizer)
    wrapped = torch.nn.parallel.DistributedDataParallel(model) if procs.distributed else model
    cfg, autocast = autocast_for(cfg, procs.device)
    return Loop(cfg, procs, data, teachers, model, wrapped, optimizer, meta, autocast, out, progress).run()


def _check_config(cfg: TrainConfig) -> None:
    """Validate before anything is written: a bad value or a missing extra must not leave a half-made run folder."""
    cfg.validate()
    if cfg.lexical_weight or cfg.bag_teacher or cfg.side_bag_weight:
        from elmo_core.training.teacher import check_glove

        check_glove()

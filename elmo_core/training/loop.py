"""The training loop: steps over each epoch's batches, with the log, the dev score and the checkpoints."""

from __future__ import annotations

import json
import math
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from elmo_core.training.batches import anchor_epoch_batches, epoch_batches, make_batch
from elmo_core.training.checkpoints import export_model, save_training_state
from elmo_core.training.config import TrainConfig, learning_rate
from elmo_core.training.evaluate import perplexity
from elmo_core.training.lm import BiLanguageModel, LMLoss
from elmo_core.training.prepare import Processes, RunData, Teachers

AUX_TERMS = ("lexical", "contextual", "similarity", "occurrence", "side_bag")  # LMLoss's teacher terms, as logged


class Loop:
    """The training loop and what it keeps between steps: the clocks, the smoothed losses, the log
    (``log.jsonl``: every 50 steps the losses, the learning rate and the clocks; every ``eval_every`` steps the
    dev perplexity) and the progress bar. Only rank 0 logs, scores the dev split and writes files.

    Ctrl-C (SIGINT, on rank 0) ends the loop after the current step; the checkpoint and ``last/`` are saved on
    every exit, an error's included.
    """

    def __init__(
        self,
        cfg: TrainConfig,
        procs: Processes,
        data: RunData,
        teachers: Teachers,
        model: BiLanguageModel,
        wrapped: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        meta: dict[str, Any],
        autocast,
        out: Path,
        progress: bool,
    ):
        self.cfg, self.procs, self.data, self.teachers, self.out = cfg, procs, data, teachers, out
        self.model, self.wrapped, self.optimizer, self.meta, self.autocast = model, wrapped, optimizer, meta, autocast
        self.stopping = False
        self.previous_handler = (
            signal.signal(signal.SIGINT, lambda *_: setattr(self, "stopping", True)) if procs.rank == 0 else None
        )
        self.bar = None
        if progress and procs.rank == 0:
            from tqdm import tqdm

            self.bar = tqdm(
                initial=meta["step"],
                total=None if cfg.max_steps >= 10**9 else cfg.max_steps,
                unit="step",
                dynamic_ncols=True,
            )
        self.last_save = self.session_start = time.time()
        self.base_seconds = meta["train_seconds"]
        # Process CPU time, not wall time: on a shared machine the two differ several-fold (model cards report it).
        self.base_cpu, self.cpu_start = meta.get("cpu_seconds", 0.0), time.process_time()
        self.ema: float | None = None
        self.ema_aux: dict[str, float] = {}
        self.metrics: dict[str, Any] = {}
        self.log = open(out / "log.jsonl", "a") if procs.rank == 0 else None
        model.train()

    def run(self) -> dict[str, Any]:
        """Epochs of steps until ``max_steps``, ``max_hours`` or Ctrl-C; returns ``train``'s result."""
        cfg, meta, world = self.cfg, self.meta, self.procs.world
        try:
            while meta["step"] < cfg.max_steps and not self.stopping:
                batches = self._epoch_batches()
                while meta["batch_in_epoch"] + world <= len(batches):
                    if meta["step"] >= cfg.max_steps or self.stopping:
                        break
                    if (self.base_seconds + time.time() - self.session_start) / 3600 >= cfg.max_hours:
                        self.stopping = True
                        break
                    self._step(batches[meta["batch_in_epoch"] + self.procs.rank])
                else:
                    meta["epoch"] += 1
                    meta["batch_in_epoch"] = 0
        finally:
            self._close()
        return {**meta, **self.metrics}

    def _epoch_batches(self) -> list[np.ndarray]:
        cfg, data = self.cfg, self.data
        if self.teachers.anchors is not None:
            return anchor_epoch_batches(
                self.teachers.anchors,
                len(data.train_sents) // cfg.batch_size,
                cfg.batch_size,
                cfg.anchor_group,
                cfg.seed,
                self.meta["epoch"],
            )
        return epoch_batches(data.lengths, cfg.batch_size, cfg.seed, self.meta["epoch"])

    def _step(self, idx: np.ndarray) -> None:
        """One optimizer step on the training sentences ``idx``, then the log, the dev score and the checkpoint
        when they are due."""
        cfg, meta = self.cfg, self.meta
        char_ids, words = make_batch([self.data.train_sents[i] for i in idx], self.data.vocab)
        t0 = time.time()
        lr = learning_rate(cfg, meta["step"])
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        words, ctx, bag, occurrence_ids, side = self._teacher_inputs(idx, char_ids.shape[1], words)
        lexical = self.teachers.glove if cfg.lexical_weight else None
        with self.autocast:
            loss: LMLoss = self.wrapped(char_ids.to(self.procs.device), words, lexical, ctx, bag, occurrence_ids, side)
        self.optimizer.zero_grad(set_to_none=True)
        loss.total(
            cfg.lexical_weight, cfg.contextual_weight, cfg.similarity_weight, cfg.occurrence_weight, cfg.side_bag_weight
        ).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm)
        self.optimizer.step()
        self._count(loss, lr, t0)
        if self.procs.rank == 0 and meta["step"] % cfg.eval_every == 0:
            self._score_dev()
        if time.time() - self.last_save >= cfg.checkpoint_minutes * 60:
            self._save()
            self.last_save = time.time()

    def _teacher_inputs(self, idx: np.ndarray, max_len: int, words: torch.Tensor) -> tuple:
        """The batch's word ids on the device and what the teacher terms read for it (None for a term that is
        off): the contextual targets, the context bags, the occurrence ids and the side bags."""
        cfg, device, data, teachers = self.cfg, self.procs.device, self.data, self.teachers
        ctx = None
        if data.contextual is not None:
            ctx = tuple(t.to(device) for t in data.contextual.batch([data.line_of[i] for i in idx], max_len))
        words = words.to(device)
        n_tok = torch.as_tensor(data.lengths[idx], device=device)
        bag = side = occurrence_ids = None
        if cfg.bag_teacher:
            from elmo_core.training.teacher import context_bags, directional_bags

            bag = (directional_bags if cfg.bag_directional else context_bags)(words, n_tok, *teachers.glove)
        if cfg.side_bag_weight:
            from elmo_core.training.teacher import side_bags

            side = side_bags(
                words, n_tok, teachers.glove[0], teachers.side_keep, cfg.side_bag_saturation, cfg.side_bag_inclusive
            )
        if teachers.same_word is not None:
            occurrence_ids = torch.full_like(words, data.vocab.eos)
            for row, i in enumerate(idx):
                occurrence_ids[row, : data.lengths[i] + 2] = torch.from_numpy(teachers.same_word[i])
        return words, ctx, bag, occurrence_ids, side

    def _count(self, loss: LMLoss, lr: float, t0: float) -> None:
        """Advance the step, the data position and the clocks; smooth the losses (EMA, 0.98); update the bar and,
        every 50 steps, the log."""
        meta, world = self.meta, self.procs.world
        meta["step"] += 1
        meta["batch_in_epoch"] += world
        meta["tokens_seen"] += loss.tokens * world
        meta["train_seconds"] = self.base_seconds + time.time() - self.session_start
        meta["cpu_seconds"] = self.base_cpu + time.process_time() - self.cpu_start
        value = float(loss.mean.detach())
        self.ema = value if self.ema is None else 0.98 * self.ema + 0.02 * value
        for name in AUX_TERMS:
            part = getattr(loss, name)
            if part is not None:
                v = float(part.detach())
                self.ema_aux[name] = v if name not in self.ema_aux else 0.98 * self.ema_aux[name] + 0.02 * v
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(
                loss=f"{self.ema:.3f}",
                ppl=f"{math.exp(self.ema):.1f}",
                tok_s=f"{loss.tokens * world / max(time.time() - t0, 1e-9):.0f}",
                epoch=meta["epoch"],
            )
        if self.procs.rank == 0 and meta["step"] % 50 == 0:
            self.log.write(
                json.dumps(
                    {
                        "step": meta["step"],
                        "loss": self.ema,
                        **self.ema_aux,
                        "lr": lr,
                        "tokens_seen": meta["tokens_seen"],
                        "train_seconds": round(meta["train_seconds"], 1),
                        "cpu_seconds": round(meta["cpu_seconds"], 1),
                    }
                )
                + "\n"
            )
            self.log.flush()

    def _score_dev(self) -> None:
        """The dev split's perplexity into the log; a new best average is exported to ``best/``."""
        self.metrics = perplexity(self.model, self.data.dev_sents, self.data.vocab, device=self.procs.device)
        self.log.write(json.dumps({"step": self.meta["step"], "dev": self.metrics}) + "\n")
        self.log.flush()
        if self.meta["best_dev"] is None or self.metrics["average"] < self.meta["best_dev"]:
            self.meta["best_dev"] = self.metrics["average"]
            export_model(self.model, self.data.vocab, self.out / "best")

    def _save(self) -> None:
        if self.procs.rank == 0:
            save_training_state(self.out / "checkpoint", self.model, self.optimizer, self.meta)

    def _close(self) -> None:
        """Save the checkpoint and export ``last/`` (rank 0), close the log and the bar, give back SIGINT and
        leave the process group."""
        self._save()
        if self.procs.rank == 0:
            export_model(self.model, self.data.vocab, self.out / "last")
            self.log.close()
        if self.bar is not None:
            self.bar.close()
        if self.previous_handler is not None:
            signal.signal(signal.SIGINT, self.previous_handler)
        if self.procs.distributed:
            dist.destroy_process_group()

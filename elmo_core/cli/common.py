"""What several commands share: the model a command runs on, whole-number option parsing, and the
SIGTERM interruption that ``main`` maps to exit status 143."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from elmo_core.model.embedder import Embedder


def load_embedder(args) -> Embedder:
    """The model a command's --model, --options with --weights, or --checkpoint names (default: the shipped one).
    Raises: ValueError for a half or doubled choice; FileNotFoundError, ValueError as the loaders."""
    from elmo_core.model.loading import load_embedder as load_files

    if bool(args.options) != bool(args.weights):
        raise ValueError("give both --options and --weights (or neither, for the default model)")
    model = getattr(args, "model", None)
    if sum(bool(x) for x in (model, args.options, getattr(args, "checkpoint", None))) > 1:
        raise ValueError("give one model: --model, --options with --weights, or --checkpoint")
    if model:
        return named_model(model, args.device)
    return load_files(args.options, args.weights, getattr(args, "checkpoint", None), device=args.device)


def named_model(name: str, device) -> Embedder:
    """A bundled model ("default", "lm-only") or a published one from the cache (never downloads)."""
    from elmo_core.model.embedder import Embedder
    from elmo_core.model.published_table import PUBLISHED
    from elmo_core.paths import BUNDLED_MODELS

    if name in BUNDLED_MODELS:
        return Embedder.bundled(name, device=device)
    if name.lower() in PUBLISHED:
        return Embedder.published(name, device=device)
    raise ValueError(
        f"no model '{name}': the bundled ones are {', '.join(BUNDLED_MODELS)}, the published "
        f"ones {', '.join(PUBLISHED)} (python -m elmo_core download --list)"
    )


def positive(name: str, top: int):
    """An argparse ``type`` for a whole number in 1..``top``; its errors name the option ``name``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}") from None
        if not 1 <= value <= top:
            raise argparse.ArgumentTypeError(f"{name} must be between 1 and {top:,}, got {value}")
        return value

    return parse


class Stopped(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``, a job scheduler) taken like Ctrl-C; ``main`` exits 143 for it."""

"""Which model to load: the one rule shared by the command line, the probes, the benchmarks and the app."""
from __future__ import annotations

from pathlib import Path

from .embedder import Embedder


def load_embedder(options: str | Path | None = None, weights: str | Path | None = None,
                  checkpoint: str | Path | None = None, device: str | None = None, **kwargs) -> Embedder:
    """The published ELMo files (``options`` + ``weights``), else a checkpoint folder, else the default model.

    Args:
        options, weights: ``options.json`` and ``weights.hdf5``; both or neither.
        checkpoint: a folder with ``options.json`` + ``model.safetensors`` (used when no files are given).
        device: as for ``Embedder`` (None: the GPU when there is one).
        kwargs: passed on to the ``Embedder`` constructor (``stateful``, ``dtype``).
    Returns: the Embedder.
    Raises: ValueError when only one of options/weights is given; FileNotFoundError and ValueError from
        the loaders (missing files, weights that do not match their options).
    """
    if options or weights:
        if not (options and weights):
            raise ValueError("give both the options and the weights file (or neither, for the default model)")
        return Embedder.from_elmo_files(options, weights, device=device, **kwargs)
    if checkpoint:
        return Embedder.from_checkpoint(checkpoint, device=device, **kwargs)
    return Embedder.default(device=device, **kwargs)

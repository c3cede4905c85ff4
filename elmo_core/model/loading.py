"""Which model to load: the one rule shared by the command line, the probes, the benchmarks and the app."""

from __future__ import annotations

from pathlib import Path

from elmo_core.model.embedder import Embedder
from elmo_core.paths import DEFAULT_MODEL_DIR


def load_embedder(
    options: str | Path | None = None,
    weights: str | Path | None = None,
    checkpoint: str | Path | None = None,
    device: str | None = None,
    **kwargs,
) -> Embedder:
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
    folder = model_folder(options, weights, checkpoint)
    if folder is None:
        return Embedder.from_elmo_files(options, weights, device=device, **kwargs)
    if checkpoint:
        return Embedder.from_checkpoint(folder, device=device, **kwargs)
    return Embedder.default(device=device, **kwargs)


def model_folder(
    options: str | Path | None = None, weights: str | Path | None = None, checkpoint: str | Path | None = None
) -> Path | None:
    """The checkpoint folder ``load_embedder`` loads for these arguments (``DEFAULT_MODEL_DIR`` for the
    default), or None when it loads ELMo files: where the model's softmax and vocabulary would be.
    Raises: ValueError when only one of options/weights is given."""
    if options or weights:
        if not (options and weights):
            raise ValueError("give both the options and the weights file (or neither, for the default model)")
        return None
    return Path(checkpoint) if checkpoint else DEFAULT_MODEL_DIR

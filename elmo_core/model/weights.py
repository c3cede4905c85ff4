"""Building a biLM from weight files: the published ELMo files (options.json + weights.hdf5, read by
``elmo_core.model.elmo_hdf5``), our own checkpoint (options.json + model.safetensors), and the bytes of either
held in memory. Weights are never loaded with pickle.
"""

from __future__ import annotations

from pathlib import Path

import torch

from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.model.elmo_hdf5 import bilm_from_hdf5, open_hdf5

CHECKPOINT_WEIGHTS = "model.safetensors"
CHECKPOINT_OPTIONS = "options.json"


def load_bilm_from_elmo_files(
    options_file: str | Path, weights_file: str | Path, max_parameters: int | None = None
) -> BiLM:
    """Build a BiLM from published ELMo files (options.json + weights.hdf5), float32, in eval mode.

    Order: options.json is checked against ``config.BOUNDS`` and the parameter budget, the HDF5 file is
    checked as data only and its names and shapes against a model on the meta device; only then is the
    model allocated and the arrays read.

    Args:
        max_parameters: refuse larger models (default: ``BiLMConfig.check_budget``'s).
    Raises:
        FileNotFoundError, ValueError: as ``BiLMConfig.from_options_json``, ``check_budget`` and
        ``elmo_hdf5.load_elmo_hdf5``.
    """
    config = BiLMConfig.from_options_json(options_file)
    config.check_budget(max_parameters)
    weights_file = Path(weights_file)
    with open_hdf5(weights_file) as f:
        return bilm_from_hdf5(config, f, weights_file.name)


def load_bilm_from_bytes(
    options: bytes, weights: bytes, weights_format: str, label: str = "weights", max_parameters: int | None = None
) -> BiLM:
    """Build a BiLM from the bytes of an options.json and a weights file, without writing anything to disk
    (the app's uploads). Same checks, in the same order, as ``load_bilm_from_elmo_files``.

    Args:
        weights_format: "hdf5" (published ELMo layout) or "safetensors" (our checkpoint format).
        label: the weights file's name, used in messages.
    Raises:
        ValueError: as ``load_bilm_from_elmo_files`` / ``load_checkpoint``; options.json not UTF-8 JSON.
    """
    import io

    config = BiLMConfig.from_json_bytes(options)
    config.check_budget(max_parameters)
    if weights_format == "hdf5":
        with open_hdf5(io.BytesIO(weights), label) as f:
            return bilm_from_hdf5(config, f, label)
    if weights_format == "safetensors":
        from safetensors import SafetensorError
        from safetensors.torch import load

        try:
            tensors = load(weights)
        except (SafetensorError, ValueError, OSError) as exc:
            raise ValueError(f"{label}: not a readable safetensors file ({exc})") from None
        return _bilm_from_tensors(config, tensors, label)
    raise ValueError(f"unknown weights format {weights_format!r}; use 'hdf5' or 'safetensors'")


def save_checkpoint(model: BiLM, directory: str | Path, dtype: torch.dtype = torch.float32) -> Path:
    """Save a biLM as ``options.json`` + ``model.safetensors`` in ``directory`` (created if needed).

    Args:
        dtype: storage dtype (float16 halves the size; loading casts back to float32).
    """
    from safetensors.torch import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.config.save(directory / CHECKPOINT_OPTIONS)
    tensors = {k: v.detach().to(dtype).cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, str(directory / CHECKPOINT_WEIGHTS), metadata={"format": "elmo_core.model.bilm"})
    return directory


def load_checkpoint(directory: str | Path, max_parameters: int | None = None) -> BiLM:
    """Load a biLM saved by ``save_checkpoint`` (safetensors: no code runs while loading).

    options.json is checked against ``config.BOUNDS`` and the parameter budget (``max_parameters``, see
    ``BiLMConfig.check_budget``) before the model is built.

    Raises:
        FileNotFoundError: the directory lacks options.json or model.safetensors.
        ValueError: options out of bounds or over budget, unreadable file, or tensors missing /
            unexpected / mis-shaped for the options.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    directory = Path(directory)
    for name in (CHECKPOINT_OPTIONS, CHECKPOINT_WEIGHTS):
        if not (directory / name).is_file():
            raise FileNotFoundError(
                f"{directory}: no {name} (a checkpoint holds {CHECKPOINT_OPTIONS} and {CHECKPOINT_WEIGHTS})"
            )
    config = BiLMConfig.from_options_json(directory / CHECKPOINT_OPTIONS)
    config.check_budget(max_parameters)
    try:
        tensors = load_file(str(directory / CHECKPOINT_WEIGHTS))
    except (SafetensorError, OSError, ValueError) as exc:
        raise ValueError(f"{directory / CHECKPOINT_WEIGHTS}: not a readable safetensors file ({exc})") from exc
    return _bilm_from_tensors(config, tensors, directory.name)


def _bilm_from_tensors(config: BiLMConfig, tensors: dict, label: str) -> BiLM:
    with torch.device("meta"):
        own = BiLM(config).state_dict()
    missing = sorted(set(own) - set(tensors))
    extra = sorted(set(tensors) - set(own))
    if missing or extra:
        raise ValueError(
            f"{label}: tensor '{(missing or extra)[0]}' is "
            f"{'missing' if missing else 'unexpected'} for the model in options.json"
        )
    for key, value in tensors.items():
        if tuple(value.shape) != tuple(own[key].shape):
            raise ValueError(
                f"{label}: tensor '{key}' has shape {tuple(value.shape)} in the file "
                f"but options.json implies {tuple(own[key].shape)}"
            )
        if not value.dtype.is_floating_point:
            raise ValueError(f"{label}: tensor '{key}' has dtype {value.dtype}, not float")
    model = BiLM(config)
    model.load_state_dict({k: v.float() for k, v in tensors.items()})
    return model.eval()

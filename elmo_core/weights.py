"""Weight IO: the ELMo HDF5 layout (read and write) and our own checkpoint (options.json + safetensors).

This is the only module that knows the HDF5 dataset names. Each dataset maps to a parameter through
a small transform (transpose, split of W_0, zero row of the char table). Weights are never loaded
with pickle.
Source: ELMO_SPEC.md section 1.4 (bilm-tf ``dump_weights`` layout) and section 6 (gate order).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .bilm import BiLM
from .config import BiLMConfig

CHECKPOINT_WEIGHTS = "model.safetensors"
CHECKPOINT_OPTIONS = "options.json"


@dataclass
class _Entry:
    dataset: str
    param: torch.Tensor
    to_param: Callable[[np.ndarray], np.ndarray]  # HDF5 array -> parameter layout
    to_file: Callable[[np.ndarray], np.ndarray]  # parameter layout -> HDF5 array
    rows: slice | None = None  # W_0 holds two parameters: [input rows ; recurrent rows]


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _entries(model: BiLM) -> Iterator[_Entry]:
    cnn, cfg = model.char_cnn, model.config
    e = cfg.char_cnn.embedding_dim
    # The file stores 261 char rows; our table has the zero row for padded tokens in front.
    yield _Entry("char_embed", cnn.char_embedding.weight,
                 lambda a: np.concatenate([np.zeros((1, e), a.dtype), a]), lambda p: p[1:])
    for i, conv in enumerate(cnn.convs):
        # TF conv2d kernel (1, width, E, count) -> torch Conv1d (count, E, width); no flip (both correlate).
        yield _Entry(f"CNN/W_cnn_{i}", conv.weight,
                     lambda a: a[0].transpose(2, 1, 0), lambda p: p.transpose(2, 1, 0)[None])
        yield _Entry(f"CNN/b_cnn_{i}", conv.bias, _same, _same)
    for k, hw in enumerate(cnn.highways):
        # TF stores x @ W; torch Linear stores W^T.
        yield _Entry(f"CNN_high_{k}/W_carry", hw.carry.weight, np.transpose, np.transpose)
        yield _Entry(f"CNN_high_{k}/b_carry", hw.carry.bias, _same, _same)
        yield _Entry(f"CNN_high_{k}/W_transform", hw.transform.weight, np.transpose, np.transpose)
        yield _Entry(f"CNN_high_{k}/b_transform", hw.transform.bias, _same, _same)
    if cnn.projection is not None:
        yield _Entry("CNN_proj/W_proj", cnn.projection.weight, np.transpose, np.transpose)
        yield _Entry("CNN_proj/b_proj", cnn.projection.bias, _same, _same)
    p = cfg.lstm.projection_dim
    for d in range(2):
        for l, layer in enumerate(model.lstm.layers):
            base = f"RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell"
            yield _Entry(f"{base}/W_0", layer.input_weight[d], lambda a: a[:p], _same, slice(0, p))
            yield _Entry(f"{base}/W_0", layer.state_weight[d], lambda a: a[p:], _same, slice(p, 2 * p))
            yield _Entry(f"{base}/B", layer.bias[d], _same, _same)  # TF order i, j, f, o kept as is
            yield _Entry(f"{base}/W_P_0", layer.proj_weight[d], _same, _same)


def _expected_shape(entry: _Entry, model: BiLM) -> tuple[int, ...]:
    p = model.config.lstm.projection_dim
    if entry.rows is not None:
        return (2 * p, entry.param.shape[-1])
    if entry.dataset == "char_embed":
        return (261, entry.param.shape[1])
    if entry.dataset.startswith("CNN/W_cnn_"):
        count, e, width = entry.param.shape
        return (1, width, e, count)
    if entry.param.dim() == 2 and entry.to_param is np.transpose:
        return tuple(reversed(entry.param.shape))
    return tuple(entry.param.shape)


def load_elmo_hdf5(model: BiLM, path: str | Path) -> None:
    """Copy weights from an ELMo ``weights.hdf5`` (bilm-tf / AllenNLP layout) into ``model``.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not an HDF5 file, or a dataset is missing, unexpected, or has a shape that
            disagrees with options.json (the message names the dataset and both shapes).
    """
    import h5py

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weights file not found: {path}")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ValueError(f"{path.name}: not a readable HDF5 weights file ({exc})") from exc
    with f:
        in_file: set[str] = set()
        f.visititems(lambda name, obj: in_file.add(name) if isinstance(obj, h5py.Dataset) else None)
        entries = list(_entries(model))
        wanted = {e.dataset for e in entries}
        missing = sorted(wanted - in_file)
        if missing:
            raise ValueError(f"{path.name}: dataset '{missing[0]}' is missing (expected by options.json; "
                             f"{len(missing)} missing in all). Do the options and weights belong together?")
        extra = sorted(in_file - wanted)
        if extra:
            raise ValueError(f"{path.name}: unexpected dataset '{extra[0]}' with shape {f[extra[0]].shape} "
                             f"({len(extra)} unexpected in all); options.json describes a different model")
        with torch.no_grad():
            for entry in entries:
                array = f[entry.dataset][()]
                expected = _expected_shape(entry, model)
                if array.shape != expected:
                    raise ValueError(f"{path.name}: dataset '{entry.dataset}' has shape {array.shape} in the file "
                                     f"but options.json implies {expected}")
                value = np.ascontiguousarray(entry.to_param(array)).astype(np.float32)
                if not np.isfinite(value).all():
                    raise ValueError(f"{path.name}: dataset '{entry.dataset}' contains NaN or infinite values")
                entry.param.copy_(torch.from_numpy(value))


def export_elmo_hdf5(model: BiLM, path: str | Path) -> None:
    """Write ``model`` in the ELMo HDF5 layout, so that AllenNLP and bilm-tf can load it (float32).

    The matching options.json is ``model.config.save(...)``.
    """
    import h5py

    p = model.config.lstm.projection_dim
    with h5py.File(Path(path), "w") as f:
        for entry in _entries(model):
            value = entry.param.detach().float().cpu().numpy()
            if entry.rows is not None:
                if entry.dataset not in f:
                    f.create_dataset(entry.dataset, shape=(2 * p, value.shape[-1]), dtype="float32")
                f[entry.dataset][entry.rows] = value
            else:
                f.create_dataset(entry.dataset, data=entry.to_file(value).astype(np.float32))


def load_bilm_from_elmo_files(options_file: str | Path, weights_file: str | Path) -> BiLM:
    """Build a BiLM from published ELMo files (options.json + weights.hdf5). Errors as ``load_elmo_hdf5``."""
    model = BiLM(BiLMConfig.from_options_json(options_file))
    load_elmo_hdf5(model, weights_file)
    return model.eval()


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
    save_file(tensors, str(directory / CHECKPOINT_WEIGHTS), metadata={"format": "elmo_core.bilm"})
    return directory


def load_checkpoint(directory: str | Path) -> BiLM:
    """Load a biLM saved by ``save_checkpoint`` (safetensors: no code runs while loading).

    Raises:
        FileNotFoundError: the directory lacks options.json or model.safetensors.
        ValueError: unreadable file, or tensors missing / unexpected / mis-shaped for the options.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    directory = Path(directory)
    for name in (CHECKPOINT_OPTIONS, CHECKPOINT_WEIGHTS):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory}: no {name} (a checkpoint holds {CHECKPOINT_OPTIONS} and {CHECKPOINT_WEIGHTS})")
    model = BiLM(BiLMConfig.from_options_json(directory / CHECKPOINT_OPTIONS))
    try:
        tensors = load_file(str(directory / CHECKPOINT_WEIGHTS))
    except (SafetensorError, OSError, ValueError) as exc:
        raise ValueError(f"{directory / CHECKPOINT_WEIGHTS}: not a readable safetensors file ({exc})") from exc
    own = model.state_dict()
    missing = sorted(set(own) - set(tensors))
    extra = sorted(set(tensors) - set(own))
    if missing or extra:
        raise ValueError(f"{directory.name}: tensor '{(missing or extra)[0]}' is "
                         f"{'missing' if missing else 'unexpected'} for the model in options.json")
    for key, value in tensors.items():
        if tuple(value.shape) != tuple(own[key].shape):
            raise ValueError(f"{directory.name}: tensor '{key}' has shape {tuple(value.shape)} in the file "
                             f"but options.json implies {tuple(own[key].shape)}")
    model.load_state_dict({k: v.float() for k, v in tensors.items()})
    return model.eval()

"""The ELMo HDF5 weights layout (bilm-tf's ``dump_weights``, as AllenNLP reads it): read as data only, checked,
copied into a ``BiLM``, and written back.

This is the only module that knows the HDF5 dataset names. Each dataset maps to a parameter through
a small transform (transpose, split of W_0, zero row of the char table). Weights are never loaded
with pickle.
Source: ELMO_SPEC.md section 1.4 (bilm-tf ``dump_weights`` layout) and section 6 (gate order).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:  # h5py is imported where a file is read, not with the package
    import h5py

from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.model.hdf5_written import check_written, fill_value


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
    yield _Entry(
        "char_embed",
        cnn.char_embedding.weight,
        lambda a: np.concatenate([np.zeros((1, e), a.dtype), a]),
        lambda p: p[1:],
    )
    for i, conv in enumerate(cnn.convs):
        # TF conv2d kernel (1, width, E, count) -> torch Conv1d (count, E, width); no flip (both correlate).
        yield _Entry(
            f"CNN/W_cnn_{i}", conv.weight, lambda a: a[0].transpose(2, 1, 0), lambda p: p.transpose(2, 1, 0)[None]
        )
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


# ---- reading an ELMo HDF5 file as data only ---------------------------------------------------------------
# Filters HDF5 decodes itself (deflate, shuffle, fletcher32) and h5py's LZF. Any other filter id would make
# the HDF5 library look for a plug-in shared library on the server, so it is refused.
_SAFE_FILTERS = {1: "deflate", 2: "shuffle", 3: "fletcher32", 32000: "lzf"}
MAX_HDF5_OBJECTS = 10_000  # links walked before a file is refused (an ELMo file has about 30; cycles end here)


def _refuse(label: str, where: str, why: str) -> ValueError:
    return ValueError(
        f"{label}: '{where}' {why}; refused (a weights file must hold complete, plain float arrays of its own)"
    )


def hdf5_datasets(f, label: str) -> dict[str, h5py.Dataset]:
    """Every dataset of an open HDF5 file by path, after checking that reading it cannot touch anything but
    the file's own bytes. Only link objects and metadata are inspected: no array is read.

    Refused: soft, external and user-defined links, HDF5 external storage (``Dataset.external``), virtual
    datasets, named datatypes, non-float dtypes, filters other than deflate/shuffle/fletcher32/LZF (an
    unknown filter would load a plug-in library), and files with more than ``MAX_HDF5_OBJECTS`` links. Later
    checks: storage never allocated or chunks missing (``_check_storage``, before any read) and storage allocated
    but never written (``read_dataset``). Compressed data cannot expand without bound: each dataset's shape is
    checked against options.json before it is read, a read allocates exactly that shape, and no chunk is larger
    than it.

    Raises:
        ValueError: naming the offending path and what it is.
    """
    import h5py

    found: dict[str, h5py.Dataset] = {}
    seen = 0
    stack: list[tuple[str, h5py.Group]] = [("", f)]
    while stack:
        prefix, group = stack.pop()
        for key in group:  # link names; nothing is resolved yet
            seen += 1
            if seen > MAX_HDF5_OBJECTS:
                raise ValueError(
                    f"{label}: more than {MAX_HDF5_OBJECTS:,} objects (an ELMo weights file has about 30); refused"
                )
            where = prefix + key
            link = group.get(key, getlink=True)
            if isinstance(link, h5py.SoftLink):
                raise _refuse(label, where, f"is a soft link (to '{link.path}')")
            if isinstance(link, h5py.ExternalLink):
                raise _refuse(label, where, f"is an external link (to '{link.path}' in another file)")
            if not isinstance(link, h5py.HardLink):
                raise _refuse(label, where, "is a user-defined link")
            obj = group.get(key)
            if isinstance(obj, h5py.Group):
                stack.append((where + "/", obj))
                continue
            if not isinstance(obj, h5py.Dataset):
                raise _refuse(label, where, f"is a {type(obj).__name__}, not a dataset")
            if obj.is_virtual:
                raise _refuse(label, where, "is a virtual dataset (its data live in other files)")
            if obj.external:
                raise _refuse(label, where, "uses external storage (its bytes live in another file)")
            if obj.dtype.kind != "f":
                raise _refuse(label, where, f"has dtype {obj.dtype}, not float")
            plist = obj.id.get_create_plist()
            for i in range(plist.get_nfilters()):
                code = plist.get_filter(i)[0]
                if code not in _SAFE_FILTERS:
                    raise _refuse(
                        label,
                        where,
                        f"uses HDF5 filter {code}, which is not one of {', '.join(_SAFE_FILTERS.values())}",
                    )
            found[where] = obj
    return found


def open_hdf5(path, label: str | None = None):
    """An HDF5 file opened read-only from a path or a binary file object (e.g. ``io.BytesIO``)."""
    import h5py

    if isinstance(path, (str, Path)):
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"weights file not found: {path}")
        label = label or path.name
    try:
        return h5py.File(path, "r")
    except (OSError, ValueError) as exc:
        raise ValueError(f"{label}: not a readable HDF5 weights file ({exc})") from exc


def read_dataset(dataset, name: str, label: str) -> np.ndarray:
    """The whole array of a checked dataset, once it is known to have been written (``hdf5_written``: storage
    allocated before any write that reads, whole or in one chunk, as unwritten storage is refused).

    Raises: ValueError naming the file and the dataset when HDF5 cannot read it (a fletcher32 checksum that
    fails, a damaged chunk) or when it was never written."""
    try:
        value = dataset[()]
    except (OSError, ValueError, RuntimeError):
        raise ValueError(
            f"{label}: dataset '{name}' cannot be read: HDF5 could not decode it (a failed checksum "
            "or a damaged chunk); the file is damaged"
        ) from None
    check_written(dataset, value, name, label)
    return value


def _without_projection(config: BiLMConfig, datasets: dict, label: str) -> bool:
    """True for a model whose LSTM cells have no projection (bilm-tf builds them without ``num_proj`` when
    projection_dim >= dim): no ``W_P_0`` dataset at all. Only C == P is a consistent such model."""
    names = [n for n in datasets if n.endswith("/LSTMCell/W_P_0")]
    if names:
        return False
    if config.lstm.dim != config.lstm.projection_dim:
        raise ValueError(
            f"{label}: no LSTM has a W_P_0 dataset (a model without projection), which needs "
            f"lstm.dim == lstm.projection_dim, but options.json has dim {config.lstm.dim} and "
            f"projection_dim {config.lstm.projection_dim}. Do the options and weights belong together?"
        )
    return True


def _never_written(label: str, name: str, dataset) -> ValueError:
    """The refusal of a dataset with no storage, saying what HDF5 would give for it."""
    import h5py

    fill = fill_value(dataset)
    if dataset.id.get_create_plist().get_fill_time() == h5py.h5d.FILL_TIME_NEVER or fill is None or math.isnan(fill):
        reads = "undefined values"
    else:
        reads = "zeros" if fill == 0.0 else f"its fill value {fill:g}"
    return _refuse(label, name, f"is declared but its data were never written (it would read as {reads})")


def _check_storage(datasets: dict, label: str) -> None:
    """Refuse datasets that would read as their fill value (zeros unless one is set): storage never allocated
    (declared but never written) or chunks missing; and datasets whose chunks are larger than the dataset (HDF5
    inflates a whole chunk to read any part of it). Metadata only; run after the shapes are known to be right,
    so that a wrong shape is reported as such. Storage allocated but never written is seen when the data are
    read (``read_dataset``)."""
    for name, dataset in datasets.items():
        if dataset.chunks is not None:
            if any(c > max(n, 1) for c, n in zip(dataset.chunks, dataset.shape)):
                raise _refuse(
                    label, name, f"is stored in chunks of {dataset.chunks}, larger than its shape {dataset.shape}"
                )
            chunks = math.prod(-(-n // c) for c, n in zip(dataset.chunks, dataset.shape))
            if dataset.size and dataset.id.get_num_chunks() == 0:
                raise _never_written(label, name, dataset)
            if dataset.id.get_num_chunks() < chunks:
                raise _refuse(
                    label,
                    name,
                    f"has {dataset.id.get_num_chunks()} of its {chunks} chunks written (the rest would read as zeros)",
                )
        elif dataset.size and dataset.id.get_storage_size() == 0:
            raise _never_written(label, name, dataset)


def _check_layout(model: BiLM, datasets: dict, label: str, no_projection: bool) -> list[_Entry]:
    """Names and shapes of the file against the model (which may live on the meta device); reads nothing."""
    entries = [e for e in _entries(model) if not (no_projection and e.dataset.endswith("/W_P_0"))]
    wanted = {e.dataset for e in entries}
    missing = sorted(wanted - set(datasets))
    if missing:
        raise ValueError(
            f"{label}: dataset '{missing[0]}' is missing (expected by options.json; "
            f"{len(missing)} missing in all). Do the options and weights belong together?"
        )
    extra = sorted(set(datasets) - wanted)
    if extra:
        raise ValueError(
            f"{label}: unexpected dataset '{extra[0]}' with shape {datasets[extra[0]].shape} "
            f"({len(extra)} unexpected in all); options.json describes a different model"
        )
    for entry in entries:
        expected = _expected_shape(entry, model)
        if datasets[entry.dataset].shape != expected:
            raise ValueError(
                f"{label}: dataset '{entry.dataset}' has shape {datasets[entry.dataset].shape} in "
                f"the file but options.json implies {expected}"
            )
    _check_storage(datasets, label)
    return entries


def _copy(model: BiLM, datasets: dict, label: str, no_projection: bool) -> None:
    entries = _check_layout(model, datasets, label, no_projection)
    with torch.no_grad():
        for entry in entries:
            value = np.ascontiguousarray(entry.to_param(read_dataset(datasets[entry.dataset], entry.dataset, label)))
            value = value.astype(np.float32)
            if not np.isfinite(value).all():
                raise ValueError(f"{label}: dataset '{entry.dataset}' contains NaN or infinite values")
            entry.param.copy_(torch.from_numpy(value))
        if no_projection:
            # No projection: h = o * tanh(c) directly, and TF applies proj_clip only with a projection.
            for layer in model.lstm.layers:
                layer.proj_weight.copy_(torch.eye(model.config.lstm.dim).expand_as(layer.proj_weight))
                layer.proj_clip = 0.0


def load_elmo_hdf5(model: BiLM, path: str | Path) -> None:
    """Copy weights from an ELMo ``weights.hdf5`` (bilm-tf / AllenNLP layout) into ``model``.

    The file is read as data only (see ``hdf5_datasets``), and every name and shape is checked before
    any array is read. A model without LSTM projection (no ``W_P_0``, lstm.dim == projection_dim) loads
    as bilm-tf runs it: identity projection and no proj_clip.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not an HDF5 file; a link, external storage, virtual dataset or unsafe filter; a
            dataset missing, unexpected, or with a shape that disagrees with options.json (the message
            names the dataset and both shapes); a dataset, or a chunk of one, never written (named); NaN or
            infinite values. The last two are found as the arrays are read: ``model`` may then hold part of
            the file's weights.
    """
    path = Path(path)
    with open_hdf5(path) as f:
        datasets = hdf5_datasets(f, path.name)
        _copy(model, datasets, path.name, _without_projection(model.config, datasets, path.name))


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


def check_elmo_files(options_file: str | Path, weights_file: str | Path, label: str | None = None) -> BiLMConfig:
    """Check that a weights.hdf5 is a complete, readable ELMo file for its options.json, without building
    the model: the downloader's last check before a file enters the cache.

    The same checks as ``load_bilm_from_elmo_files`` (options against ``config.BOUNDS``; the file read as data
    only; every dataset name and shape against the options; float dtypes), and then every array is read, one
    dataset at a time (at most the largest dataset in memory: 67 MB for Original), so that a damaged chunk
    or a NaN shows here rather than at the first use. The parameter budget is not applied: it is a
    server's limit on what it loads, not a property of the file.

    Args: label: the file's name in messages (default: its own; the downloader checks "weights.hdf5.part"
        under the name it will have).
    Returns: the options' ``BiLMConfig``.
    Raises:
        FileNotFoundError: either file is missing.
        ValueError: as ``load_bilm_from_elmo_files`` (the message names the dataset, also one never
            written), or a dataset that cannot be read (a damaged chunk).
    """
    config = BiLMConfig.from_options_json(options_file)
    weights_file = Path(weights_file)
    label = label or weights_file.name
    if not weights_file.is_file():
        raise FileNotFoundError(f"weights file not found: {weights_file}")
    with open_hdf5(weights_file, label) as f:
        datasets = hdf5_datasets(f, label)
        no_projection = _without_projection(config, datasets, label)
        checked = config
        if no_projection:
            checked = dataclasses.replace(config, lstm=dataclasses.replace(config.lstm, proj_clip=0.0))
        with torch.device("meta"):
            _check_layout(BiLM(checked), datasets, label, no_projection)
        for name in sorted(datasets):
            value = read_dataset(datasets[name], name, label)
            if not np.isfinite(value).all():
                raise ValueError(f"{label}: dataset '{name}' contains NaN or infinite values")
    return config


def bilm_from_hdf5(config: BiLMConfig, f, label: str) -> BiLM:
    """A float32 ``BiLM`` in eval mode from an open ELMo HDF5 file, checked (names, shapes, storage) against
    a model on the meta device before the model is allocated and the arrays are read.
    Raises: ValueError as ``load_elmo_hdf5``; ``label`` names the file in messages."""
    datasets = hdf5_datasets(f, label)
    no_projection = _without_projection(config, datasets, label)
    if no_projection:
        config = dataclasses.replace(config, lstm=dataclasses.replace(config.lstm, proj_clip=0.0))
    with torch.device("meta"):  # names and shapes against a model that allocates nothing
        _check_layout(BiLM(config), datasets, label, no_projection)
    model = BiLM(config)
    _copy(model, datasets, label, no_projection)
    return model.eval()

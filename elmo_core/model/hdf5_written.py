"""Whether each dataset of an ELMo weights file was written, not only allocated: HDF5 reads storage that was never
written as its fill value (zeros unless one is set), so an unwritten weight would load as a constant.

What HDF5 records depends on when the storage was allocated (the dataset's allocation time):

* late or incremental (HDF5's defaults: late for contiguous storage, incremental for chunked; bilm-tf's
  ``dump_weights``, h5py's ``create_dataset`` and ``export_elmo_hdf5`` write this way, as do all the fixtures'
  weights): storage comes into being only when data are written. A contiguous dataset with storage, or a chunked
  one with every chunk present, was written (``elmo_hdf5``'s storage check refuses one without them); its values are not looked at, so an all-zero weight is
  accepted. Incremental chunked storage proves each chunk; late chunked storage is allocated whole at the first
  write, so it proves only that one was made, and each chunk's values are checked as below.
* early (and compact storage, which is always early): storage, and the fill value if one is written into it, exist
  from creation, so nothing recorded tells a written dataset from an unwritten one. Only the data can: a dataset,
  or for chunked storage a chunk, whose every element equals what unwritten storage reads as is refused as never
  written. Unwritten storage reads as the fill value when HDF5 wrote it there (fill time "alloc", or "ifset" with a
  fill value set) and otherwise as the file's bytes, zeros in space the file never used; both values are tested.

Can a real weight be all zeros? A trained ELMo has none: every dataset is a learnt matrix or bias (none of the
bundled models' 27 tensors is all zeros, nor any dataset of the fixtures' weights). An untrained model has: its
LSTM biases ``B`` start at zero (bilm-tf and ``lstm.py``), and ``export_elmo_hdf5`` of a new ``BiLM`` writes them so. Such a file is written the default way
(late allocation), and its allocation shows the write, so it loads. Only the same zeros in early-allocated storage
are refused: there they cannot be told from never written, and a file whose weights may be unwritten is refused
rather than run with constants.

Not detectable here: a dataset written only in part where its storage is one block (contiguous or compact), and
storage never written nor filled that holds other bytes (file space left by deleted data): both read as values.
"""

from __future__ import annotations

import math

import numpy as np


def fill_value(dataset) -> float | None:
    """The dataset's fill value as a float, or None when it has none (its unwritten storage holds the file's
    bytes)."""
    try:
        return float(dataset.fillvalue)
    except (TypeError, ValueError, OSError):
        return None


def _unwritten_values(dataset) -> list[float]:
    """The values that storage of ``dataset`` allocated but never written reads as: zero, and its fill value."""
    fill = fill_value(dataset)
    return [0.0] if fill is None or fill == 0.0 else [0.0, fill]


def _blocks(dataset) -> tuple[int, ...] | None:
    """The blocks whose values must be checked: the chunk shape, the whole shape for one block of storage, or None
    when the allocation itself shows that each was written (incremental chunks; late or incremental contiguous)."""
    import h5py

    plist = dataset.id.get_create_plist()
    alloc = plist.get_alloc_time()
    if dataset.chunks is not None:
        return None if alloc == h5py.h5d.ALLOC_TIME_INCR else tuple(dataset.chunks)
    if alloc in (h5py.h5d.ALLOC_TIME_LATE, h5py.h5d.ALLOC_TIME_INCR):
        return None
    return tuple(dataset.shape)


def _equal(value: np.ndarray, unwritten: float) -> np.ndarray:
    return np.isnan(value) if math.isnan(unwritten) else value == unwritten


def _first_constant_block(same: np.ndarray, blocks: tuple[int, ...]) -> tuple[tuple[int, ...], bool] | None:
    """Where the first block of ``blocks`` whose elements are all True in ``same`` starts (None if none is), and
    whether every block is. Edge blocks count only their elements inside the array."""
    padded = np.pad(same, [(0, -n % b) for n, b in zip(same.shape, blocks)], constant_values=True)
    grid = padded.reshape([x for n, b in zip(padded.shape, blocks) for x in (n // b, b)])
    constant = grid.all(axis=tuple(range(1, 2 * same.ndim, 2)))
    found = np.argwhere(constant)
    if not len(found):
        return None
    return tuple(int(i) * b for i, b in zip(found[0], blocks)), bool(constant.all())


def check_written(dataset, value: np.ndarray, name: str, label: str) -> None:
    """Refuse ``value``, the array just read from ``dataset``, if the dataset's storage was allocated before any
    write and the whole dataset, or one of its chunks, reads as unwritten storage (the rule: the module's
    docstring). Costs nothing for storage allocated by writing (h5py's default); otherwise one comparison a block
    (its first element), and one a value only where a block starts with the value of unwritten storage.

    Raises:
        ValueError: "'NAME' is declared but its data were never written: every element reads as V, ..." for the
            whole dataset, or "'NAME' has its chunk at (i, j) never written: ..." for one chunk.
    """
    blocks = _blocks(dataset)
    if blocks is None or not value.size:
        return
    corners = value[tuple(slice(None, None, b) for b in blocks)]  # each block's first element
    for unwritten in _unwritten_values(dataset):
        if not _equal(corners, unwritten).any():  # no block can be constant: the usual case, one value a block
            continue
        same = _equal(value, unwritten)
        found = _first_constant_block(same, blocks)
        if found is None:
            continue
        start, everywhere = found
        where = (
            "is declared but its data were never written" if everywhere else f"has its chunk at {start} never written"
        )
        raise ValueError(
            f"{label}: '{name}' {where}: every element {'' if everywhere else 'of it '}reads as {unwritten:g}, the "
            "value of storage HDF5 allocated before any write; refused (a weights file must hold complete, plain "
            "float arrays of its own)"
        )

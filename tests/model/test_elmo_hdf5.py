"""elmo_core.model.elmo_hdf5: a weights dataset is accepted only if it was written. Every HDF5 allocation time x
layout x fill setting, built from the fixture biLM's weights with one dataset left unwritten (refused with its name)
or written (accepted); the CLI and the app's upload path say so in one line."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import torch

from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.model.elmo_hdf5 import check_elmo_files, export_elmo_hdf5, load_elmo_hdf5
from elmo_core.model.weights import load_bilm_from_elmo_files

NAME = "CNN_proj/W_proj"  # (124, 16) in the fixture biLM: 7,936 bytes, small enough for the compact layout
CHUNKS = (31, 16)  # four chunks of it
ALLOC = {"early": h5py.h5d.ALLOC_TIME_EARLY, "incremental": h5py.h5d.ALLOC_TIME_INCR, "late": h5py.h5d.ALLOC_TIME_LATE}
FILL_TIME = {"never": h5py.h5d.FILL_TIME_NEVER, "alloc": h5py.h5d.FILL_TIME_ALLOC, "ifset": h5py.h5d.FILL_TIME_IFSET}
NEVER_WRITTEN = rf"^weights.hdf5: '{NAME}' is declared but its data were never written"


def rewrite(path, name=NAME, *, layout, alloc, fill=None, fill_time=None, write="all", data=None):
    """Write ``path`` again, with ``name`` made through HDF5's low-level API with these creation settings (``fill``:
    a fill value set, None for HDF5's default; ``fill_time`` None for HDF5's default) and ``write`` of ``data``
    (default: the dataset's own values) written: "none", "first chunk" or "all". Returns the values meant for it.
    A new file, not the dataset deleted in place: HDF5 would give the new one the old one's file space, and storage
    that no fill value is written to would then read as the old values, not as zeros."""
    with h5py.File(path) as f:
        arrays = {}
        f.visititems(lambda key, obj: arrays.update({key: obj[()]}) if isinstance(obj, h5py.Dataset) else None)
    original = arrays.pop(name) if data is None else np.asarray(data, np.float32)
    arrays.pop(name, None)
    with h5py.File(path, "w") as f:
        for key, value in arrays.items():
            f.create_dataset(key, data=value)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        if layout == "chunked":
            dcpl.set_chunk(CHUNKS)
        elif layout == "compact":
            dcpl.set_layout(h5py.h5d.COMPACT)
        dcpl.set_alloc_time(ALLOC[alloc])
        if fill_time is not None:
            dcpl.set_fill_time(FILL_TIME[fill_time])
        if fill is not None:
            dcpl.set_fill_value(np.array(fill, original.dtype))
        space = h5py.h5s.create_simple(original.shape)
        lcpl = h5py.h5p.create(h5py.h5p.LINK_CREATE)
        lcpl.set_create_intermediate_group(True)
        dataset_id = h5py.h5d.create(
            f.id, name.encode(), h5py.h5t.py_create(original.dtype), space, dcpl=dcpl, lcpl=lcpl
        )
        dataset = h5py.Dataset(dataset_id)
        if write == "all":
            dataset[...] = original
        elif write == "first chunk":
            dataset[: CHUNKS[0]] = original[: CHUNKS[0]]
    return original


# HDF5 allows every allocation time for contiguous and chunked datasets; a compact one is allocated early.
MATRIX = [
    pytest.param(layout, alloc, fill, fill_time, id=f"{layout}-{alloc}-fill_{fill}-{fill_time}")
    for layout in ("contiguous", "chunked", "compact")
    for alloc in ALLOC
    if layout != "compact" or alloc == "early"
    for fill in (None, 0.25)
    for fill_time in FILL_TIME
]


@pytest.mark.parametrize("layout", ["contiguous", "chunked"])
def test_the_reported_case_an_early_allocated_dataset_never_written_is_refused(layout, copied):
    """The report: a dataset allocated early and never written loaded as zeros (its storage exists)."""
    options, weights = copied
    rewrite(weights, layout=layout, alloc="early", write="none")
    with h5py.File(weights) as f:
        assert f[NAME].id.get_space_status() == h5py.h5d.SPACE_STATUS_ALLOCATED and not f[NAME][()].any()
    with pytest.raises(ValueError, match=NEVER_WRITTEN + r": every element reads as 0, "):
        load_bilm_from_elmo_files(options, weights)


def _refused_everywhere(options, weights, match: str) -> None:
    """Refused by each entry point: a new model, the downloader's check, and a load into an existing model."""
    with pytest.raises(ValueError, match=match):
        load_bilm_from_elmo_files(options, weights)
    with pytest.raises(ValueError, match=match):
        check_elmo_files(options, weights)
    with torch.device("meta"):
        model = BiLM(BiLMConfig.from_options_json(options))
    with pytest.raises(ValueError, match=match):
        load_elmo_hdf5(model.to_empty(device="cpu"), weights)


@pytest.mark.parametrize("layout, alloc, fill, fill_time", MATRIX)
def test_a_dataset_never_written_is_refused_with_its_name(layout, alloc, fill, fill_time, copied):
    options, weights = copied
    rewrite(weights, layout=layout, alloc=alloc, fill=fill, fill_time=fill_time, write="none")
    _refused_everywhere(options, weights, NEVER_WRITTEN)


@pytest.mark.parametrize("layout, alloc, fill, fill_time", MATRIX)
def test_the_same_dataset_written_loads(layout, alloc, fill, fill_time, copied):
    options, weights = copied
    original = rewrite(weights, layout=layout, alloc=alloc, fill=fill, fill_time=fill_time)
    model = load_bilm_from_elmo_files(options, weights)
    torch.testing.assert_close(model.char_cnn.projection.weight, torch.from_numpy(original.T), rtol=0, atol=0)
    check_elmo_files(options, weights)


@pytest.mark.parametrize("alloc", ["early", "late"])
@pytest.mark.parametrize("fill, fill_time", [(fill, t) for fill in (None, 0.25) for t in FILL_TIME])
def test_a_chunk_never_written_is_refused_with_where_it_starts(alloc, fill, fill_time, copied):
    """Early and late allocation allocate every chunk at once (incrementally allocated chunks that were never
    written are missing, which test_weights covers): a chunk that reads as unwritten storage is refused."""
    options, weights = copied
    rewrite(weights, layout="chunked", alloc=alloc, fill=fill, fill_time=fill_time, write="first chunk")
    with h5py.File(weights) as f:
        assert f[NAME].id.get_num_chunks() == 4
    _refused_everywhere(options, weights, rf"^weights.hdf5: '{NAME}' has its chunk at \(31, 0\) never written: ")


def test_an_all_zero_weight_loads_when_its_allocation_shows_it_was_written(tmp_path, copied):
    """An untrained model's LSTM biases are all zero (bilm-tf and this library start them at zero). Written the way
    h5py and bilm-tf write, its storage is allocated by the write, which proves it; allocated early, all zeros cannot
    be told from never written, and it is refused."""
    options, _ = copied
    weights = tmp_path / "untrained.hdf5"
    model = BiLM(BiLMConfig.from_options_json(options))
    export_elmo_hdf5(model, weights)
    bias = "RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/B"
    with h5py.File(weights) as f:
        assert not f[bias][()].any()
    loaded = load_bilm_from_elmo_files(options, weights)
    assert not loaded.lstm.layers[0].bias.any()
    check_elmo_files(options, weights)
    rewrite(weights, bias, layout="contiguous", alloc="early")
    with pytest.raises(ValueError, match=rf"^untrained.hdf5: '{bias}' is declared but its data were never written"):
        load_bilm_from_elmo_files(options, weights)


def _crafted(copied) -> tuple:
    options, weights = copied
    rewrite(weights, layout="chunked", alloc="early", write="none")
    return options, weights


def test_the_cli_says_never_written_in_one_line(copied, tmp_path, capsys):
    from elmo_core.cli import main

    options, weights = _crafted(copied)
    (tmp_path / "in.txt").write_text("a b\n")
    args = ["--options", str(options), "--weights", str(weights), "--device", "cpu", "--quiet"]
    code = main(["embed", str(tmp_path / "in.txt"), str(tmp_path / "out.hdf5"), *args])
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and line.startswith(
        f"error: weights.hdf5: '{NAME}' is declared but its data were never written: every element reads as 0, "
    )
    assert not (tmp_path / "out.hdf5").exists()


@pytest.mark.usefixtures("app_env", "fresh_caches")
def test_an_upload_never_written_is_refused_in_one_line(copied):
    from app.serving import limits, models, startup, uploads

    options, weights = _crafted(copied)
    with pytest.raises(ValueError) as info:
        uploads.load_uploaded_model(
            options.read_bytes(), weights.read_bytes(), "crafted.hdf5", session="hostile", options_name="options.json"
        )
    assert str(info.value).startswith(
        f"crafted.hdf5 (with options.json): '{NAME}' is declared but its data were never written: "
        "every element reads as 0, "
    )
    assert "\n" not in str(info.value)
    assert limits.model_registry().used_bytes == 0
    assert models.current_model(session="hostile")[0].key == startup.startup_model().key

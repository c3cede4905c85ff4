"""elmo_core.model.weights: HDF5 errors name the dataset and shapes; export and safetensors round trips are exact;
hostile weight files and options (issue 10, findings 1, 2 and 6)."""

import json
import shutil
import time

import h5py
import numpy as np
import pytest
import torch

from elmo_core import Embedder
from elmo_core.model.bilm import BiLM
from elmo_core.model.chars import batch_to_ids
from elmo_core.model.config import BiLMConfig
from elmo_core.model.elmo_hdf5 import export_elmo_hdf5, load_elmo_hdf5
from elmo_core.model.weights import load_bilm_from_elmo_files, save_checkpoint

SENTS = [["The", "bank", "of", "the", "river", "."], ["Money", "in", "the", "bank"]]


def copy_weights(src, dst, edit):
    shutil.copy(src, dst)
    with h5py.File(dst, "a") as f:
        edit(f)
    return dst


def test_missing_dataset_is_named(allennlp_files, tmp_path):
    bad = copy_weights(allennlp_files[1], tmp_path / "w.hdf5", lambda f: f.__delitem__("CNN_high_1/W_carry"))
    with pytest.raises(ValueError, match="CNN_high_1/W_carry.*missing"):
        load_bilm_from_elmo_files(allennlp_files[0], bad)


def test_extra_dataset_is_named(allennlp_files, tmp_path):
    bad = copy_weights(
        allennlp_files[1], tmp_path / "w.hdf5", lambda f: f.create_dataset("softmax/W", data=np.zeros((3, 2)))
    )
    with pytest.raises(ValueError, match="softmax/W.*unexpected"):
        load_bilm_from_elmo_files(allennlp_files[0], bad)


def test_options_that_disagree_give_both_shapes(allennlp_files, tmp_path):
    options = json.loads(allennlp_files[0].read_text())
    options["lstm"]["dim"] = 32
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    with pytest.raises(
        ValueError, match=r"W_0' has shape \(32, 256\) in the file but options.json implies \(32, 128\)"
    ):
        load_bilm_from_elmo_files(path, allennlp_files[1])


def test_corrupt_and_missing_files(allennlp_files, tmp_path):
    junk = tmp_path / "junk.hdf5"
    junk.write_bytes(b"\x00\xff not hdf5" * 100)
    with pytest.raises(ValueError, match="not a readable HDF5"):
        load_bilm_from_elmo_files(allennlp_files[0], junk)
    with pytest.raises(FileNotFoundError):
        load_bilm_from_elmo_files(allennlp_files[0], tmp_path / "nope.hdf5")
    bad_json = tmp_path / "o.json"
    bad_json.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_bilm_from_elmo_files(bad_json, allennlp_files[1])
    bad_json.write_text('{"lstm": {}}')
    with pytest.raises(ValueError, match="char_cnn"):
        load_bilm_from_elmo_files(bad_json, allennlp_files[1])


@pytest.mark.parametrize("fixture", ["allennlp_files", "bilm_tf_files"])
def test_export_round_trip_is_identical(fixture, request, tmp_path):
    options, weights = request.getfixturevalue(fixture)
    model = load_bilm_from_elmo_files(options, weights)
    export_elmo_hdf5(model, tmp_path / "weights.hdf5")
    model.config.save(tmp_path / "options.json")
    with h5py.File(weights) as a, h5py.File(tmp_path / "weights.hdf5") as b:
        names = []
        a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        for name in names:
            np.testing.assert_array_equal(a[name][()], b[name][()], err_msg=name)
    original = Embedder.from_elmo_files(options, weights, device="cpu").embed_batch(SENTS)
    again = Embedder.from_elmo_files(tmp_path / "options.json", tmp_path / "weights.hdf5", device="cpu").embed_batch(
        SENTS
    )
    for x, y in zip(original, again):
        np.testing.assert_array_equal(x, y)


def test_safetensors_checkpoint_round_trip(allennlp_files, tmp_path):
    model = load_bilm_from_elmo_files(*allennlp_files)
    save_checkpoint(model, tmp_path / "ckpt")
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["model.safetensors", "options.json"]
    a = Embedder.from_elmo_files(*allennlp_files, device="cpu").embed_batch(SENTS)
    b = Embedder.from_checkpoint(tmp_path / "ckpt", device="cpu").embed_batch(SENTS)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    (tmp_path / "ckpt" / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="safetensors"):
        Embedder.from_checkpoint(tmp_path / "ckpt")


# ---- hostile weight files and options (issue 10, findings 1, 2 and 6) -----------------------------------------
# A weights file is read as data only, options.json sizes are bounded before anything is allocated, and
# models without LSTM projection load.
SECRET = b"server secret: do not hand out!!" * 2  # 64 bytes = 16 float32, the size of CNN_proj/b_proj (P = 16)


def _replace(path, name, make):
    with h5py.File(path, "a") as f:
        shape, dtype = f[name].shape, f[name].dtype
        del f[name]
        make(f, name, shape, dtype)


def test_external_storage_is_refused_before_any_read(copied, tmp_path):
    options, weights = copied
    secret = tmp_path / "secret.bin"
    secret.write_bytes(SECRET)
    _replace(
        weights,
        "CNN_proj/b_proj",
        lambda f, name, shape, dtype: f.create_dataset(
            name, shape=shape, dtype=dtype, external=[(str(secret), 0, len(SECRET))]
        ),
    )
    with h5py.File(weights) as f:  # the crafted file really reads the server file
        assert f["CNN_proj/b_proj"][()].tobytes() == SECRET
    with pytest.raises(ValueError, match=r"'CNN_proj/b_proj' uses external storage"):
        load_bilm_from_elmo_files(options, weights)
    with pytest.raises(ValueError, match="external storage"):
        load_elmo_hdf5(BiLM(BiLMConfig.from_options_json(options)), weights)


@pytest.mark.parametrize(
    "kind, message",
    [
        ("soft", "is a soft link"),
        ("external_link", "is an external link"),
        ("virtual", "is a virtual dataset"),
        ("int", "not float"),
        ("filter", "HDF5 filter"),
    ],
)
def test_links_virtual_and_odd_datasets_are_refused(kind, message, copied, tmp_path):
    options, weights = copied
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as g:
        g.create_dataset("x", data=np.frombuffer(SECRET, np.float32))

    def make(f, name, shape, dtype):
        if kind == "soft":
            f.create_dataset("elsewhere", data=np.zeros(shape, dtype))
            f[name] = h5py.SoftLink("/elsewhere")
        elif kind == "external_link":
            f[name] = h5py.ExternalLink(str(other), "/x")
        elif kind == "virtual":
            layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
            layout[:] = h5py.VirtualSource(str(other), "x", shape=shape)
            f.create_virtual_dataset(name, layout)
        elif kind == "int":
            f.create_dataset(name, data=np.zeros(shape, np.int32))
        else:  # scale-offset: a filter HDF5 has, but not one a weights file needs
            f.create_dataset(name, data=np.zeros(shape, dtype), chunks=shape, scaleoffset=2)

    _replace(weights, "CNN_proj/b_proj", make)
    with pytest.raises(ValueError, match=message) as info:
        load_bilm_from_elmo_files(options, weights)
    assert "CNN_proj/b_proj" in str(info.value)


def test_shape_is_checked_before_the_array_is_read(copied):
    """A tiny gzip dataset that would expand to 4 GB in memory is refused by its declared shape."""
    options, weights = copied
    _replace(
        weights,
        "char_embed",
        lambda f, name, shape, dtype: f.create_dataset(
            name, shape=(2**28, 4), dtype="float32", chunks=(2**20, 4), compression="gzip"
        ),
    )
    start = time.perf_counter()
    with pytest.raises(
        ValueError,
        match=r"'char_embed' has shape \(268435456, 4\) in the file but options.json "
        r"implies \(261, 4\)",
    ):
        load_bilm_from_elmo_files(options, weights)
    assert time.perf_counter() - start < 5


def _options(tmp_path, allennlp_files, **lstm):
    data = json.loads(allennlp_files[0].read_text())
    data["lstm"].update(lstm)
    path = tmp_path / "options.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "lstm, message",
    [
        ({"projection_dim": 1e9}, r"lstm.projection_dim = 1000000000 is outside the supported range 1..8192"),
        ({"n_layers": 200}, r"lstm.n_layers = 200 is outside the supported range 1..16"),
        ({"n_layers": 2.5}, r"lstm.n_layers must be an integer, got 2.5"),
        ({"dim": True}, r"lstm.dim must be an integer, got True"),
        ({"dim": "64"}, r"lstm.dim must be an integer"),
        ({"cell_clip": -1}, r"lstm.cell_clip must be a finite number >= 0"),
        ({"use_skip_connections": "no"}, r"use_skip_connections must be true or false"),
    ],
)
def test_options_out_of_bounds_fail_before_allocating(lstm, message, tmp_path, allennlp_files):
    options = _options(tmp_path, allennlp_files, **lstm)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=message):
        load_bilm_from_elmo_files(options, allennlp_files[1])
    assert time.perf_counter() - start < 2


def test_model_over_the_parameter_budget_is_refused_with_its_size(tmp_path, allennlp_files, monkeypatch):
    options = _options(tmp_path, allennlp_files, dim=16384, projection_dim=8192, n_layers=16)
    built = []
    monkeypatch.setattr(BiLM, "__init__", lambda *a, **k: built.append(1))  # nothing may be built
    with pytest.raises(
        ValueError,
        match=r"model of 38,657,892,048 parameters \(144.0 GiB in float32\), over "
        r"this server's budget of 200,000,000 parameters",
    ):
        load_bilm_from_elmo_files(options, allennlp_files[1])
    assert built == []
    monkeypatch.undo()
    with pytest.raises(ValueError, match="105,120 parameters.*budget of 100,000 parameters"):
        load_bilm_from_elmo_files(allennlp_files[0], allennlp_files[1], max_parameters=100_000)
    assert BiLMConfig.from_options_json(allennlp_files[0]).num_parameters() == 105_120  # ELMO_SPEC.md 1.2


def test_model_without_projection_loads_as_bilm_tf_runs_it(tmp_path, allennlp_files):
    """C == P and no W_P_0: h = o * tanh(c) with no proj_clip (TF's LSTMCell without num_proj). Checked
    against a NumPy computation of the first two forward steps of layer 1 straight from the file's arrays."""
    data = json.loads(allennlp_files[0].read_text())
    data["lstm"].update(dim=16, projection_dim=16, proj_clip=0.05, cell_clip=3)
    options = tmp_path / "options.json"
    options.write_text(json.dumps(data))
    torch.manual_seed(0)
    source = BiLM(BiLMConfig.from_options_json(options))
    weights = tmp_path / "noproj.hdf5"
    export_elmo_hdf5(source, weights)
    with h5py.File(weights, "a") as f:
        for d in range(2):
            for layer in range(2):
                del f[f"RNN_{d}/RNN/MultiRNNCell/Cell{layer}/LSTMCell/W_P_0"]
        w0 = f["RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/W_0"][()].astype(np.float64)
        b = f["RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/B"][()].astype(np.float64)

    model = load_bilm_from_elmo_files(options, weights)
    assert model.config.lstm.proj_clip == 0.0
    with torch.no_grad():
        out = model(batch_to_ids([["bank"]]))
    x = out.activations[0][0, :, :16].double().numpy()  # token vectors of <S>, bank, </S>
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h, c, expected = np.zeros(16), np.zeros(16), []
    for t in range(2):
        z = np.concatenate([x[t], h]) @ w0 + b
        i, j, f_, o = np.split(z, 4)
        c = np.clip(sig(f_ + 1.0) * c + sig(i) * np.tanh(j), -3, 3)
        h = sig(o) * np.tanh(c)
        expected.append(h)
    got = out.activations[1][0, :2, :16].double().numpy()
    np.testing.assert_allclose(got, np.stack(expected), atol=1e-6)
    assert np.abs(got).max() > 0.05  # proj_clip would have cut these

    # load_elmo_hdf5 into a model built from the same options does the same
    other = BiLM(BiLMConfig.from_options_json(options)).eval()
    load_elmo_hdf5(other, weights)
    with torch.no_grad():
        np.testing.assert_allclose(
            other(batch_to_ids([["bank"]])).activations[1].numpy(), out.activations[1].numpy(), atol=1e-6
        )


def test_missing_projection_with_cell_size_other_than_projection_is_a_clear_error(copied):
    options, weights = copied
    with h5py.File(weights, "a") as f:
        for d in range(2):
            for layer in range(2):
                del f[f"RNN_{d}/RNN/MultiRNNCell/Cell{layer}/LSTMCell/W_P_0"]
    with pytest.raises(ValueError, match="no LSTM has a W_P_0 dataset.*dim 64 and projection_dim 16"):
        load_bilm_from_elmo_files(options, weights)


def test_a_dataset_declared_but_never_written_is_refused(copied):
    options, weights = copied
    _replace(weights, "CNN_proj/W_proj", lambda f, name, shape, dtype: f.create_dataset(name, shape=shape, dtype=dtype))
    with h5py.File(weights) as f:  # h5py would read it as zeros
        assert not f["CNN_proj/W_proj"][()].any()
    with pytest.raises(
        ValueError,
        match=r"^weights.hdf5: 'CNN_proj/W_proj' is declared but its data were never "
        r"written \(it would read as zeros\)",
    ):
        load_bilm_from_elmo_files(options, weights)


def test_a_chunked_dataset_with_chunks_missing_is_refused(copied):
    options, weights = copied

    def partly(f, name, shape, dtype):
        dataset = f.create_dataset(name, shape=shape, dtype=dtype, chunks=(1, shape[1]))
        dataset[0] = 1.0  # one chunk written of shape[0]

    _replace(weights, "CNN_proj/W_proj", partly)
    with pytest.raises(ValueError, match=r"'CNN_proj/W_proj' has 1 of its 124 chunks written"):
        load_bilm_from_elmo_files(options, weights)


@pytest.mark.slow
def test_a_chunk_larger_than_its_dataset_is_refused_before_it_is_inflated(copied):
    """A 261 x 4 char table in one 16,384 x 16,384 gzip chunk: 4 KB of file, 1 GiB to inflate on reading."""
    options, weights = copied

    def bomb(f, name, shape, dtype):
        f.create_dataset(
            name,
            shape=shape,
            dtype=dtype,
            chunks=(16384, 16384),
            maxshape=(None, None),
            compression="gzip",
            data=np.ones(shape, dtype),
        )

    _replace(weights, "char_embed", bomb)
    assert weights.stat().st_size < 2_000_000
    with pytest.raises(
        ValueError,
        match=r"'char_embed' is stored in chunks of \(16384, 16384\), larger than its "
        r"shape \(261, 4\)",
    ):
        load_bilm_from_elmo_files(options, weights)


def test_a_failed_checksum_names_the_file_and_the_dataset(copied):
    from elmo_core.model.elmo_hdf5 import check_elmo_files

    options, weights = copied
    _replace(
        weights,
        "char_embed",
        lambda f, name, shape, dtype: f.create_dataset(name, data=np.ones(shape, dtype), chunks=shape, fletcher32=True),
    )
    load_bilm_from_elmo_files(options, weights)  # intact: loads
    with h5py.File(weights) as f:
        offset = f["char_embed"].id.get_chunk_info(0).byte_offset
    data = bytearray(weights.read_bytes())
    data[offset + 10] ^= 0xFF
    weights.write_bytes(bytes(data))
    message = (
        r"^weights.hdf5: dataset 'char_embed' cannot be read: HDF5 could not decode it \(a failed checksum "
        r"or a damaged chunk\); the file is damaged$"
    )
    with pytest.raises(ValueError, match=message):
        load_bilm_from_elmo_files(options, weights)
    with pytest.raises(ValueError, match=message):
        check_elmo_files(options, weights)

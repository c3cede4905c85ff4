"""Weight IO: HDF5 errors name the dataset and shapes; export and safetensors round trips are exact."""
import json
import shutil

import h5py
import numpy as np
import pytest

from elmo_core import Embedder
from elmo_core.weights import export_elmo_hdf5, load_bilm_from_elmo_files, save_checkpoint

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
    bad = copy_weights(allennlp_files[1], tmp_path / "w.hdf5", lambda f: f.create_dataset("softmax/W", data=np.zeros((3, 2))))
    with pytest.raises(ValueError, match="softmax/W.*unexpected"):
        load_bilm_from_elmo_files(allennlp_files[0], bad)


def test_options_that_disagree_give_both_shapes(allennlp_files, tmp_path):
    options = json.loads(allennlp_files[0].read_text())
    options["lstm"]["dim"] = 32
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    with pytest.raises(ValueError, match=r"W_0' has shape \(32, 256\) in the file but options.json implies \(32, 128\)"):
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
    again = Embedder.from_elmo_files(tmp_path / "options.json", tmp_path / "weights.hdf5", device="cpu").embed_batch(SENTS)
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


def test_parameter_counts_match_published_models():
    """ELMO_SPEC.md section 1.2: Small 13,593,296 and Original 93,600,848 parameters."""
    from elmo_core.bilm import BiLM
    from elmo_core.config import BiLMConfig

    filters = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]
    for dim, proj, highway, expected in [(1024, 128, 1, 13_593_296), (4096, 512, 2, 93_600_848)]:
        cfg = BiLMConfig.from_dict({"lstm": {"use_skip_connections": True, "projection_dim": proj, "cell_clip": 3,
                                             "proj_clip": 3, "dim": dim, "n_layers": 2},
                                    "char_cnn": {"activation": "relu", "filters": filters, "n_highway": highway,
                                                 "embedding": {"dim": 16}, "n_characters": 262, "max_characters_per_token": 50}})
        assert BiLM(cfg).num_parameters() == expected

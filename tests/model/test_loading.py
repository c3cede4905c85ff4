"""elmo_core.model.loading.load_embedder: which model the command line, the probes, the benchmarks and the app load."""

from __future__ import annotations

import numpy as np
import pytest

from elmo_core.model.loading import load_embedder
from elmo_core.model.weights import save_checkpoint
from elmo_core.paths import DEFAULT_MODEL_DIR

SENTENCE = [["The", "bank", "of", "the", "river", "."]]


def test_elmo_files_then_checkpoint_then_default(allennlp_files, tiny_embedder, tmp_path):
    options, weights = allennlp_files
    from_files = load_embedder(options, weights, device="cpu")
    np.testing.assert_array_equal(from_files.embed_batch(SENTENCE)[0], tiny_embedder.embed_batch(SENTENCE)[0])
    save_checkpoint(tiny_embedder.bilm, tmp_path / "ckpt")
    from_checkpoint = load_embedder(checkpoint=tmp_path / "ckpt", device="cpu")
    np.testing.assert_array_equal(from_checkpoint.embed_batch(SENTENCE)[0], tiny_embedder.embed_batch(SENTENCE)[0])
    # files win over a checkpoint given at the same time
    assert load_embedder(options, weights, checkpoint=tmp_path / "missing", device="cpu").dim == tiny_embedder.dim
    default = load_embedder(device="cpu")
    assert default.name == "default" and (DEFAULT_MODEL_DIR / "options.json").is_file()


def test_half_a_pair_or_missing_files_are_errors(allennlp_files, tmp_path):
    options, _ = allennlp_files
    with pytest.raises(ValueError, match="both the options and the weights"):
        load_embedder(options=options)
    with pytest.raises(FileNotFoundError):
        load_embedder(checkpoint=tmp_path / "nothing-here", device="cpu")


def test_model_folder_names_the_folder_that_is_loaded(allennlp_files, tmp_path):
    from elmo_core.model.loading import model_folder

    options, weights = allennlp_files
    assert model_folder() == DEFAULT_MODEL_DIR
    assert model_folder(checkpoint=tmp_path) == tmp_path
    assert model_folder(options, weights, checkpoint=tmp_path) is None  # the files are loaded, not the folder
    with pytest.raises(ValueError, match="both the options and the weights"):
        model_folder(weights=weights)

"""The biLM against both reference test sets, run statefully exactly as the TF code that made them."""

import h5py
import numpy as np
import pytest
import torch

from elmo_core import Embedder, batch_to_ids
from elmo_core.model import onednn
from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.model.weights import load_bilm_from_elmo_files
from tests.conftest import ALLENNLP, BILM_TF


@pytest.fixture(params=["mkl", "onednn"])
def products(request, monkeypatch):
    """Run a test with the plain products and again with every weight sent through oneDNN (module onednn)."""
    if request.param == "onednn":
        if not torch.backends.mkldnn.is_available():
            pytest.skip("this torch build has no oneDNN")
        monkeypatch.setattr(onednn, "MIN_WEIGHT_ELEMENTS", 1)
    return request.param


@pytest.mark.parametrize("folder", [ALLENNLP, BILM_TF], ids=["allennlp-skip", "bilm-tf-noskip"])
def test_stateful_fixture_top_layer(folder, fixture_sentences, products):
    """10 batches of 3, row k always file k's sentences, state carried (ELMO_SPEC.md section 11)."""
    embedder = Embedder.from_elmo_files(
        folder / "options.json", folder / "lm_weights.hdf5", device="cpu", stateful=True
    )
    for i in range(10):
        batch = [fixture_sentences[k][i].split() for k in range(3)]
        outputs = embedder.embed_batch(batch)
        for k in range(3):
            with h5py.File(folder / f"lm_embeddings_{k}.hdf5") as f:
                expected = np.concatenate([f[str(i)][0], f[str(i)][1]], axis=-1)
            assert outputs[k].shape == (3, len(batch[k]), 32)
            np.testing.assert_allclose(outputs[k][2], expected, atol=1e-6, rtol=1e-5)


def test_stateless_matches_only_first_batch(fixture_sentences, allennlp_files, products):
    """Without carried state batch 0 still matches, later batches do not: the state really matters."""
    embedder = Embedder.from_elmo_files(*allennlp_files, device="cpu", stateful=False)
    with h5py.File(ALLENNLP / "lm_embeddings_0.hdf5") as f:
        first = np.concatenate([f["0"][0], f["0"][1]], -1)
        third = np.concatenate([f["3"][0], f["3"][1]], -1)
    np.testing.assert_allclose(embedder.embed_sentence(fixture_sentences[0][0].split())[2], first, atol=1e-6, rtol=1e-5)
    assert np.abs(embedder.embed_sentence(fixture_sentences[0][3].split())[2] - third).max() > 1e-3


def test_token_embedding_fixture(allennlp_files, products):
    """Char CNN + highway + projection of 458 words in 10 rows of 50 (AllenNLP test_elmo_token_representation)."""
    model = load_bilm_from_elmo_files(*allennlp_files)
    words = (ALLENNLP / "vocab_test.txt").read_text(encoding="utf-8").split("\n")
    assert len(words) == 458
    rows = [words[i : i + 50] for i in range(0, 500, 50)]
    with torch.no_grad():
        out = model(batch_to_ids(rows))
    layer0 = out.activations[0][:, 1:-1, :16].reshape(-1, 16)[:458].numpy()
    with h5py.File(ALLENNLP / "elmo_token_embeddings.hdf5") as f:
        expected = f["embedding"][()]
    np.testing.assert_allclose(layer0, expected, atol=1e-6, rtol=1e-5)


def test_literal_boundary_tokens_encode_like_automatic_ones(allennlp_files):
    model = load_bilm_from_elmo_files(*allennlp_files)
    with torch.no_grad():
        tokens = model(batch_to_ids([["<S>", "</S>"]])).activations[0][0, :, :16]
    torch.testing.assert_close(tokens[1], tokens[0])  # literal <S> == automatic BOS
    torch.testing.assert_close(tokens[2], tokens[3])  # literal </S> == automatic EOS


def test_layer0_is_token_vector_twice_and_padding_is_zero(allennlp_files):
    model = load_bilm_from_elmo_files(*allennlp_files)
    with torch.no_grad():
        out = model(batch_to_ids([["a", "b", "c"], ["d"]]))
    assert [a.shape for a in out.activations] == [(2, 5, 32)] * 3
    torch.testing.assert_close(out.activations[0][..., :16], out.activations[0][..., 16:])
    assert out.mask.tolist()[1] == [True, True, True, False, False]
    for layer in out.activations:
        assert torch.all(layer[1, 3:] == 0)


def test_native_and_step_loop_lstm_agree():
    """Unclipped models use PyTorch's fused LSTM when no state is carried; it must equal the step loop."""
    options = {
        "lstm": {
            "use_skip_connections": True,
            "projection_dim": 8,
            "cell_clip": 0,
            "proj_clip": 0,
            "dim": 16,
            "n_layers": 2,
        },
        "char_cnn": {
            "activation": "relu",
            "filters": [[1, 4], [2, 4]],
            "n_highway": 1,
            "embedding": {"dim": 4},
            "n_characters": 262,
            "max_characters_per_token": 50,
        },
    }
    torch.manual_seed(0)
    model = BiLM(BiLMConfig.from_dict(options)).eval()
    ids = batch_to_ids([["one", "two", "three", "four"], ["five"]])
    assert model.lstm.can_use_native(False, None)
    with torch.no_grad():
        native = model(ids).activations
        loop = model(ids, return_state=True).activations  # carrying state forces the step loop
    for a, b in zip(native, loop):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)

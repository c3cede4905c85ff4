"""Embedder API: shapes, order, stateless invariance, stateful bookkeeping, bad input."""

import numpy as np
import pytest
import torch

from elmo_core import Embedder

SENT = ["The", "bank", "raised", "its", "interest", "rates", "."]
OTHERS = [["A"], ["We", "sat", "on", "the", "river", "bank", "watching", "the", "boats", "go", "by", "."], ["x"] * 30]


def test_shapes_and_order(tiny_embedder):
    batch = [["a", "b"], ["c"], ["d", "e", "f"]]
    out = tiny_embedder.embed_batch(batch, batch_size=2)
    assert [o.shape for o in out] == [(3, 2, 32), (3, 1, 32), (3, 3, 32)]
    assert all(o.dtype == np.float32 for o in out)
    for sent, arr in zip(batch, out):  # input order kept although batches are sorted by length
        np.testing.assert_allclose(arr, tiny_embedder.embed_sentence(sent), atol=1e-6, rtol=0)


def test_repeated_calls_are_bitwise_identical(tiny_embedder):
    batch = [SENT, *OTHERS]
    for x, y in zip(tiny_embedder.embed_batch(batch), tiny_embedder.embed_batch(batch)):
        np.testing.assert_array_equal(x, y)


def test_empty_sentence_and_empty_batch(tiny_embedder):
    assert tiny_embedder.embed_sentence([]).shape == (3, 0, 32)
    assert tiny_embedder.embed_batch([]) == []
    out = tiny_embedder.embed_batch([[], ["a"], []])
    assert [o.shape for o in out] == [(3, 0, 32), (3, 1, 32), (3, 0, 32)]


def test_stateless_vectors_do_not_depend_on_batch_or_history(tiny_embedder):
    alone = tiny_embedder.embed_sentence(SENT)
    in_batch = tiny_embedder.embed_batch([OTHERS[1], SENT, OTHERS[2]])[1]
    tiny_embedder.embed_batch(OTHERS * 5, batch_size=7)
    after_calls = tiny_embedder.embed_batch([OTHERS[0], SENT], batch_size=1)[1]
    np.testing.assert_allclose(in_batch, alone, atol=1e-6, rtol=0)
    np.testing.assert_allclose(after_calls, alone, atol=1e-6, rtol=0)


def test_stateful_depends_on_history_and_reset_restores(allennlp_files):
    e = Embedder.from_elmo_files(*allennlp_files, device="cpu", stateful=True)
    first = e.embed_sentence(SENT)
    second = e.embed_sentence(SENT)
    assert np.abs(first - second).max() > 1e-4  # the carried state changes the vectors
    e.reset_states()
    np.testing.assert_array_equal(e.embed_sentence(SENT), first)


def test_stateful_smaller_batch_keeps_other_rows(allennlp_files):
    """bilm-tf test: after batches of 3, a batch of 2 leaves state row 2 untouched."""
    e = Embedder.from_elmo_files(*allennlp_files, device="cpu", stateful=True)
    e.embed_batch([SENT, OTHERS[1], OTHERS[0]])
    row2 = [h[:, 2].clone() for h in e._state.h]
    e.embed_batch([SENT, SENT])
    for before, after in zip(row2, e._state.h):
        assert (before == after[:, 2]).all()


def test_raw_string_raises(tiny_embedder):
    with pytest.raises(TypeError, match="list of tokens"):
        tiny_embedder.embed_sentence("The cat sat")
    with pytest.raises(TypeError):
        tiny_embedder.embed_batch("The cat sat")


def test_unicode_and_long_tokens(tiny_embedder):
    out = tiny_embedder.embed_sentence(["naïve", "😀", "東京", "x" * 60])
    assert out.shape == (3, 4, 32) and np.isfinite(out).all()


def test_cpu_and_bad_device(allennlp_files):
    with pytest.raises(ValueError):
        Embedder.from_elmo_files(*allennlp_files, device="cpu", dtype="float16")


TYPE_WORDS = ["bank", "Bank", "banks", "river", "money", "the", "The", "spring", "string", "sing", "played", "play"]


def test_type_vectors_are_layer_zero_of_any_occurrence(tiny_embedder):
    vectors = tiny_embedder.type_vectors(TYPE_WORDS, batch_size=7)
    assert vectors.shape == (len(TYPE_WORDS), tiny_embedder.dim) and vectors.dtype == np.float32
    sentence = ["We", "sat", "on", "the", "bank", "of", "the", "river", "."]
    layer0 = tiny_embedder.embed_batch([sentence])[0][0]
    np.testing.assert_allclose(vectors[TYPE_WORDS.index("bank")], layer0[4], atol=1e-6)
    np.testing.assert_allclose(vectors[TYPE_WORDS.index("the")], layer0[3], atol=1e-6)
    np.testing.assert_allclose(vectors[TYPE_WORDS.index("river")], layer0[7], atol=1e-6)
    with pytest.raises(TypeError):
        tiny_embedder.type_vectors("bank")
    with pytest.raises(ValueError):
        tiny_embedder.type_vectors(["bank", ""])


def test_the_vocabulary_pass_takes_as_many_words_as_fit_its_memory(tiny_embedder):
    import json

    from elmo_core.model.bilm import BiLM
    from elmo_core.model.config import BiLMConfig
    from elmo_core.model.embedder import TYPE_VECTOR_MEMORY

    assert tiny_embedder.type_vector_batch() == 1024 and tiny_embedder.type_vector_batch(7) == 7
    wide = BiLMConfig.from_dict(
        json.loads(
            '{"lstm": {"use_skip_connections": true, "projection_dim": 16, "cell_clip": 3, "proj_clip": 3, '
            '"dim": 16384, "n_layers": 1}, "char_cnn": {"activation": "relu", "filters": [[1, 16384]], '
            '"n_highway": 0, "embedding": {"dim": 4}, "n_characters": 262, "max_characters_per_token": 50}}'
        )
    )
    assert wide.num_parameters() == 5_194_788  # the hostile-input review's wide model (a 20.8 MB upload)
    # per position: 400 bytes of ids, 4 x (3 x 16,384 + 16 + 8 x 16,384 + 2 x 16,384 + 2 x 2 x 32) floats
    assert wide.inference_bytes(1) == 400 + 4 * (3 * 16384 + 16 + 8 * 16384 + 2 * 16384 + 2 * 2 * 32) == 852_944
    torch.manual_seed(0)
    embedder = Embedder(BiLM(wide), device="cpu")
    batch = embedder.type_vector_batch()
    assert batch == TYPE_VECTOR_MEMORY // (3 * 852_944) == 104
    words = [f"w{i}" for i in range(batch + 3)]  # two calls: 104 words, then 3
    calls = []
    real = embedder.bilm.forward
    embedder.bilm.forward = lambda ids, **kw: calls.append(ids.shape[0]) or real(ids, **kw)
    vectors = embedder.type_vectors(words)
    assert calls == [104, 3] and vectors.shape == (107, 32)
    # the same vector as the word alone (up to float32 rounding: a batch of 104 sums in another order)
    np.testing.assert_allclose(vectors[5], embedder.embed_sentence(["w5"])[0, 0], rtol=1e-5, atol=1e-5)

"""app/explore/activations.py, the explorer's activations without Streamlit.

Expected values are worked out by hand in the comments, or follow from the definitions (softmax, cosine,
Procrustes) on small arrays built for the purpose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]

from app.explore import activations, inputs  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"


def test_token_table_rows_and_mix():
    lines = [inputs.Line("", None, ("a", "b")), inputs.Line("", None, ("c", "d", "e"))]
    acts = [
        np.arange(2 * 2 * 2, dtype=np.float32).reshape(2, 2, 2),
        np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2) + 100,
    ]
    table = activations.TokenTable(lines, acts)
    assert table.acts.shape == (2, 5, 2) and table.num_layers == 2
    assert table.row(1, 2) == 4 and table.token(4) == "e" and table.token(1) == "b"
    np.testing.assert_array_equal(table.acts[:, 4], acts[1][:, 2])
    mixed = table.mix([0.0, 0.0], 1.0)
    np.testing.assert_allclose(mixed[0], (acts[0][0, 0] + acts[0][1, 0]) / 2)
    with pytest.raises(ValueError):
        activations.TokenTable(lines, acts[:1])
    ref = activations.TokenTable.of_tokenized([("a", "b"), ("c", "d", "e")], acts)
    assert [(ln.text, ln.label, ln.tokens) for ln in ref.lines] == [
        ("a b", None, ("a", "b")),
        ("c d e", None, ("c", "d", "e")),
    ]
    np.testing.assert_array_equal(ref.acts, table.acts)


# ---- activation cache --------------------------------------------------------------------------------------
def test_activation_cache_only_embeds_new_sentences_and_is_bounded():
    calls = []

    def embed_batch(sentences):
        calls.append([tuple(s) for s in sentences])
        return [np.full((3, len(s), 4), len(s), np.float32) for s in sentences]

    cache = activations.ActivationCache(max_bytes=3 * 3 * 4 * 4 * 10)  # room for 10 tokens of (3, ., 4) float32
    out, computed = cache.get_many("m", embed_batch, [("a", "b"), ("c",)])
    assert computed == 2 and out[0].shape == (3, 2, 4) and not out[0].flags.writeable
    out, computed = cache.get_many("m", embed_batch, [("c",), ("a", "b"), ("d",)])
    assert computed == 1 and calls[-1] == [("d",)]
    assert out[1][0, 0, 0] == 2.0
    _, computed = cache.get_many("other-model", embed_batch, [("c",)])
    assert computed == 1  # keyed by model id too
    cache.get_many("m", embed_batch, [tuple("xyzuvw")])  # 6 tokens: evicts the oldest entries
    assert cache.nbytes <= cache.max_bytes


def test_activation_cache_reports_progress_on_the_new_sentences_only():
    def embed_batch(sentences):
        return [np.zeros((3, len(s), 4), np.float32) for s in sentences]

    cache = activations.ActivationCache()
    cache.get_many("m", embed_batch, [("a",), ("b",)])
    seen: list = []
    new = [(w,) for w in "cdefg"]
    _, computed = cache.get_many(
        "m",
        embed_batch,
        [("a",), ("b",), *new],
        chunk_size=2,
        progress=lambda f, text: seen.append((round(f, 3), text)),
    )
    assert computed == 5 and seen == [
        (0.4, "running the biLM: 2/5 sentences"),
        (0.8, "running the biLM: 4/5 sentences"),
        (1.0, "running the biLM: 5/5 sentences"),
    ]
    seen.clear()
    cache.get_many("m", embed_batch, [("x",), ("y",)], progress=lambda f, text: seen.append(f), progress_from=3)
    assert seen == []  # two new sentences: below progress_from, no bar
    cache.get_many("m", embed_batch, [("u",), ("v",), ("w",)], progress=lambda f, text: seen.append(f), progress_from=3)
    assert seen == [1.0]


def test_activation_cache_with_fixture_model():
    from elmo_core import Embedder

    e = Embedder.from_elmo_files(FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5", device="cpu")
    cache = activations.ActivationCache()
    sents = [("The", "bank", "."), ("Play", "ball", "!")]
    out, computed = cache.get_many("fixture", e.embed_batch, sents)
    assert computed == 2 and out[0].shape == (3, 3, 32)
    np.testing.assert_allclose(out[1], e.embed_sentence(list(sents[1])), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[0][0, :, :16], out[0][0, :, 16:])  # layer 0 is duplicated to 2P

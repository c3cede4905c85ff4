"""app.serving.type_vectors: the layer-0 vectors of a vocabulary, computed in the background, and their nearest word
types, on the tiny fixture biLM."""

from __future__ import annotations

import numpy as np
import pytest

WORDS = [
    "bank",
    "Bank",
    "banks",
    "river",
    "money",
    "the",
    "The",
    "spring",
    "string",
    "sing",
    "played",
    "play",
    "plays",
    "a",
    "cat",
    "hat",
    "dog",
    "fish",
    "fishing",
    "blank",
]


@pytest.fixture(scope="module")
def tiny(allennlp_files):
    from elmo_core import Embedder

    return Embedder.from_elmo_files(*allennlp_files, device="cpu")


def test_vocabulary_neighbours_are_the_true_cosine_neighbours(tiny):
    from app.serving.type_vectors import TypeVectors

    types = TypeVectors(WORDS, tiny.type_vectors)
    assert not types.ready and "in the background (0%)" in types.status()
    types.run_now()
    assert types.ready and types.progress == 1.0 and "20 most frequent word types" in types.status()
    # brute force: every word's own layer 0, from a sentence, against every other word's
    rows = np.stack([a[0][1] for a in tiny.embed_batch([["x", w, "y"] for w in WORDS])]).astype(np.float64)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    sims = rows @ rows.T
    for q in ("bank", "spring", "played"):
        i = WORDS.index(q)
        expected = [WORDS[j] for j in np.argsort(-sims[i], kind="stable") if j != i][:5]
        found = types.neighbours(q, rows[i].astype(np.float32), 5)
        assert [w for w, _ in found] == expected
        np.testing.assert_allclose(
            [c for _, c in found], np.sort(sims[i][np.arange(len(WORDS)) != i])[::-1][:5], atol=1e-5
        )
    # a word outside the vocabulary: nothing is left out
    off = tiny.type_vectors(["banker"])[0]
    assert len(types.neighbours("banker", off, 25)) == len(WORDS)
    with pytest.raises(ValueError):
        types.neighbours("bank", off[:3], 5)


def test_a_failing_model_is_reported_not_raised():
    from app.serving.type_vectors import TypeVectors, TypeVectorStore

    def broken(words):
        raise RuntimeError("no weights")

    types = TypeVectors(["a", "b"], broken).start()
    assert types.wait(10) is False and types.state == "failed" and "no weights" in types.status()
    with pytest.raises(RuntimeError):
        types.neighbours("a", np.ones(4), 1)
    store = TypeVectorStore(max_models=2)
    calls = []
    compute = lambda words: (calls.append(len(words)), np.ones((len(words), 4), np.float32))[1]  # noqa: E731
    first = store.get("m1", ["a", "b"], compute)
    assert store.get("m1", ["a", "b"], compute) is first  # once per model
    store.get("m2", ["a"], compute), store.get("m3", ["a"], compute)
    assert store.get("m1", ["a", "b"], compute, start=False) is not first  # the least recently used went


def test_the_vocabulary_thread_runs_below_the_server_never_above_it():
    import os
    import sys
    import threading

    if not sys.platform.startswith("linux"):
        pytest.skip("per-thread nice values are Linux's")
    from app.serving.type_vectors import BACKGROUND_NICE, TypeVectors

    seen = {}

    def compute(words):
        tid = threading.get_native_id()
        seen["thread"] = os.getpriority(os.PRIO_PROCESS, tid)
        return np.ones((len(words), 4), np.float32)

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())  # e.g. 15 under `nice -n 15`
    assert TypeVectors(["a", "b"], compute).start().wait(30)
    assert seen["thread"] == min(base + BACKGROUND_NICE, 19) and seen["thread"] >= base
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the caller's own is untouched

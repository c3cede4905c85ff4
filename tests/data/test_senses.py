"""elmo_core.data.senses on tiny hand-written WordNet-format files (tests/fixtures/probes/wordnet) and our TSV."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from elmo_core.paths import OWN_SENTENCES
from elmo_core.data.senses import SenseItem, embed_items, read_sense_sentences, read_wordnet_examples, subsample_keys
from elmo_core.data.wordforms import word_forms

WORDNET = Path(__file__).parents[1] / "fixtures" / "probes" / "wordnet"


def test_wordnet_examples_from_fixture():
    items = read_wordnet_examples(WORDNET)
    keys = {it.key for it in items}
    # light.a (one coarse sense), fast.r (one), hot_dog (multiword) are left out
    assert keys == {"bank.n", "cell.n", "mouse.n", "play.n", "play.v", "run.v"}
    for it in items:
        assert it.word.lower() in word_forms(it.lemma, it.pos) | {"mice", "ran"}
    words = {(it.key, it.word) for it in items}
    assert ("mouse.n", "mice") in words and ("run.v", "ran") in words  # irregular forms from the .exc files
    assert {it.sense for it in items if it.key == "bank.n"} == {"noun.object", "noun.group", "noun.artifact"}
    # "riverbank" is a second lemma of the first synset but never occurs in its examples
    assert all(it.lemma != "riverbank" for it in items)
    assert items == sorted(items, key=lambda it: (it.key, it.source, it.tokens))


def test_own_sentences_are_well_formed():
    items = read_sense_sentences(OWN_SENTENCES)
    by_word: dict[str, list] = {}
    for it in items:
        by_word.setdefault(it.lemma, []).append(it)
        assert it.word.lower() in word_forms(it.lemma)
    assert len(by_word) >= 15
    for word, group in by_word.items():
        assert len(group) >= 6, word
        assert 2 <= len({it.sense for it in group}) <= 3, word


def test_own_sentences_errors(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("word\tsense\tsentence\nbank\triver\tWe sat by the water.\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2: the word 'bank' does not occur"):
        read_sense_sentences(bad)
    bad.write_text("word\tsense\nbank\triver\n")
    with pytest.raises(ValueError, match="header"):
        read_sense_sentences(bad)
    bad.write_text("word\tsense\tsentence\nbank\triver\n")
    with pytest.raises(ValueError, match="3 tab-separated columns"):
        read_sense_sentences(bad)


def test_subsample_keeps_whole_lemmas():
    items = read_wordnet_examples(WORDNET)
    sub = subsample_keys(items, 10, seed=1)
    keys = {it.key for it in sub}
    assert sub and len(sub) <= 10
    assert all(sum(it.key == k for it in items) == sum(it.key == k for it in sub) for k in keys)
    assert subsample_keys(items, 0) == items and subsample_keys(items, 10, seed=1) == sub  # seeded


def test_embed_items_gives_each_target_and_its_bag_of_context(tiny_embedder):
    sentence = ("the", "bank", "of", "the", "river")
    items = [SenseItem("bank", "", "river", sentence, 1), SenseItem("river", "", "x", sentence, 4),
             SenseItem("bank", "", "money", ("bank",), 0)]
    seen = []
    targets, context = embed_items(tiny_embedder, items, progress=lambda f, text: seen.append(f))
    acts = tiny_embedder.embed_batch([list(sentence), ["bank"]])
    assert targets.shape == (3, 3, tiny_embedder.dim) and targets.dtype == np.float32 and seen == [1.0]
    np.testing.assert_allclose(targets[0], acts[0][:, 1], atol=1e-5)
    np.testing.assert_allclose(targets[1], acts[0][:, 4], atol=1e-5)
    np.testing.assert_allclose(context[0], np.delete(acts[0][0], 1, axis=0).mean(axis=0), atol=1e-5)
    assert not context[2].any()  # a one-token sentence has no context

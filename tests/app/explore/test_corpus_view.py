"""app.explore.corpus_view: the Corpus page's sampling, sense groups, telling words, examples and nearest rows, on
constructed data whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from app.explore import corpus_view as cv


def two_sense_word(n_each: int = 30, dim: int = 16, seed: int = 0) -> cv.CorpusWord:
    """ "bank" in ``n_each`` river sentences (context words "river", "muddy") and ``n_each`` money sentences
    ("money", "loan"), with filler words in both; its vectors: two tight clouds around two directions in the top
    layers, one shared vector in layer 0."""
    rng = np.random.default_rng(seed)
    sentences, fill = [], ["the", "we", "saw", "a", "day", "then"]
    for i in range(2 * n_each):
        river = i < n_each
        planted = ["river", "muddy"] if river else ["money", "loan"]
        left = [fill[(i + k) % len(fill)] for k in range(3)] + planted[:1]
        right = planted[1:] + [fill[(i + k + 2) % len(fill)] for k in range(3)] + ["far", "away", "beyond", "it"]
        sentences.append(tuple(left + ["bank"] + right))
    n = len(sentences)
    centres = rng.standard_normal((2, dim)) * 3
    layers = np.zeros((3, n, dim), dtype=np.float32)
    layers[0] = rng.standard_normal(dim)
    for j in (1, 2):
        for i in range(n):
            layers[j, i] = centres[0 if i < n_each else 1] + 0.1 * rng.standard_normal(dim)
    return cv.CorpusWord(
        "bank",
        tuple(sentences),
        np.arange(n, dtype=np.int64),
        np.full(n, 4, dtype=np.int64),
        layers,
        n,
        "a test corpus",
    )


def test_sample_rows_are_all_rows_or_a_fixed_sorted_sample():
    assert cv.sample_rows(5, 10).tolist() == [0, 1, 2, 3, 4]
    a, b = cv.sample_rows(5123, 1500), cv.sample_rows(5123, 1500)
    assert len(a) == 1500 and len(set(a.tolist())) == 1500
    assert np.array_equal(a, b) and np.all(np.diff(a) > 0) and a.max() < 5123
    assert cv.sample_note(1500, 5123) == (
        "1,500 of 5,123 occurrences drawn, evenly sampled; the groups and neighbours use all"
    )
    assert cv.sample_note(300, 300) == ""


def test_occurrence_positions_find_every_matching_token_in_reading_order():
    sent, pos = cv.occurrence_positions(
        [("a", "Bank", "b"), ("c",), ("bank", "x", "bank")], lambda t: t.lower() == "bank"
    )
    assert sent.tolist() == [0, 2, 2] and pos.tolist() == [1, 0, 2]


def test_groups_of_a_two_sense_word_are_its_two_senses_and_their_telling_words_the_planted_ones():
    word = two_sense_word()
    x = cv.mix(word.layers, [0.0, 0.0, 1.0])
    groups = cv.sense_groups(x)
    assert groups.k == 2 and groups.sampled == word.n
    river, money = groups.labels[:30], groups.labels[30:]
    assert len(set(river.tolist())) == 1 and len(set(money.tolist())) == 1 and river[0] != money[0]
    telling = cv.telling_words(cv.context_windows(word), groups.labels, exclude=frozenset({"bank"}))
    top_river = {w for w, _ in telling[int(river[0])][:2]}
    top_money = {w for w, _ in telling[int(money[0])][:2]}
    assert top_river == {"river", "muddy"} and top_money == {"money", "loan"}
    # in every window of its group and none of the other's: score 1; the fillers shared by both score nothing
    assert dict(telling[int(river[0])])["river"] == pytest.approx(1.0)
    assert "the" not in dict(telling[int(river[0])]) and "far" not in dict(telling[int(money[0])])


def test_context_windows_hold_five_tokens_either_side_without_the_word():
    word = two_sense_word(2)
    w0 = cv.context_windows(word)[0]
    # "the we saw river [bank] muddy saw a day far away beyond it": 4 tokens left, 5 right ("away" is the 6th)
    assert word.sentences[0][:10] == ("the", "we", "saw", "river", "bank", "muddy", "saw", "a", "day", "far")
    assert w0 == frozenset({"the", "we", "saw", "river", "muddy", "a", "day", "far"})


def test_telling_words_score_is_the_difference_of_shares():
    windows = [frozenset({"a", "b"}), frozenset({"a"}), frozenset({"a", "c"}), frozenset({"c"})]
    out = cv.telling_words(windows, np.array([0, 0, 1, 1]), min_support=1)
    # a: 2/2 - 1/2, b: 1/2 - 0 (ties by the word); c: 2/2 - 0; a for group 1: 1/2 - 2/2 < 0, left out
    assert out == {0: [("a", 0.5), ("b", 0.5)], 1: [("c", 1.0)]}
    assert cv.telling_words(windows, np.array([0, 0, 1, 1]), exclude=frozenset({"a"}), min_support=1)[0] == [("b", 0.5)]


def test_examples_are_the_rows_nearest_each_centre():
    x = np.array([[1, 0], [0.9, 0.1], [0.5, 0.5], [0, 1], [0.1, 0.9]], dtype=np.float32)
    ex = cv.examples(x, np.array([0, 0, 0, 1, 1]), per_group=2)
    assert ex[0][0] == 1 and set(ex[1]) == {3, 4}


def test_nearest_rows_skip_the_query_and_rank_by_cosine():
    x = np.array([[1, 0], [2, 0.1], [0, 1], [1, 1]], dtype=np.float32)
    rows, cos = cv.nearest_rows(x, x[0], k=3, skip=0)
    assert rows.tolist() == [1, 3, 2]
    assert cos[0] == pytest.approx(2 / np.hypot(2, 0.1), abs=1e-6) and cos[-1] == pytest.approx(0.0, abs=1e-6)


def test_groups_found_on_a_sample_assign_the_rest_to_the_nearest_centre():
    word = two_sense_word(60)
    x = cv.mix(word.layers, [0.0, 0.0, 1.0])
    groups = cv.sense_groups(x, limit=40)
    assert groups.sampled == 40 and groups.k == 2
    assert len(set(groups.labels[:60].tolist())) == 1 and len(set(groups.labels[60:].tolist())) == 1


def test_layer_zero_alone_has_no_groups():
    word = two_sense_word()
    groups = cv.sense_groups(cv.mix(word.layers, [1.0, 0.0, 0.0]))
    assert groups.k == 1 and not groups.labels.any()
    assert cv.group_name(0, 1) == "occurrences (no clear groups)" and cv.group_name(1, 3) == "group 2"


def test_a_chosen_number_of_groups_splits_by_k_means_in_order_of_first_occurrence():
    word = two_sense_word()
    groups = cv.sense_groups(cv.mix(word.layers, [0.0, 0.0, 1.0]), k=2)
    assert groups.k == 2 and groups.labels[:30].tolist() == [0] * 30 and groups.labels[30:].tolist() == [1] * 30
    assert "k-means" in groups.note

"""elmo_core.data.corpus.pipeline on literal strings (no packages, no network)."""
from __future__ import annotations

import pytest

from elmo_core.data.corpus.pipeline import dedup, keep_sentence, normalize_text, paragraphs, split_dev_test, split_sentences


def test_normalize_text_quotes_dashes_and_spaces():
    assert normalize_text("\u201cDon\u2019t\u201d  go\u2014now") == '"Don\'t" go -- now'
    assert normalize_text("whale--threadbare") == "whale -- threadbare"
    assert normalize_text("a\r\nb\x07c") == "a\nb c"
    with pytest.raises(TypeError):
        normalize_text(b"bytes")  # type: ignore[arg-type]


def test_paragraphs_joins_lines_and_splits_on_blank_lines():
    text = "First line\nsecond line.\n\n\n  Next para.  \n\n"
    assert paragraphs(text) == ["First line second line.", "Next para."]
    assert paragraphs("") == []


def test_split_sentences_basic_and_quotes():
    assert split_sentences('He left. "Why?" she asked! Then it rained.') == [
        "He left.", '"Why?" she asked!', "Then it rained.",
    ]
    assert split_sentences("Call me Ishmael.  Some years ago I went.") == ["Call me Ishmael.", "Some years ago I went."]


def test_split_sentences_keeps_abbreviations_and_initials():
    assert split_sentences("Mr. Darcy met Dr. Jones in the U.S. Army. They spoke.") == [
        "Mr. Darcy met Dr. Jones in the U.S. Army.", "They spoke.",
    ]
    assert split_sentences("J. R. Smith wrote it, e.g. Chapter 4. Done.") == [
        "J. R. Smith wrote it, e.g. Chapter 4.", "Done.",
    ]
    # No capital after the stop: not a boundary.
    assert split_sentences("It cost 3.5 dollars. ok then") == ["It cost 3.5 dollars. ok then"]
    assert split_sentences("   ") == []


def test_keep_sentence_filters():
    assert keep_sentence(["The", "bank", "closed", "."])
    assert not keep_sentence(["Too", "short"])
    assert not keep_sentence(["w"] * 101)
    assert keep_sentence(["w"] * 100)
    assert not keep_sentence(["1", "2", "3", "4", "x"])  # mostly numbers
    assert not keep_sentence(["see", "x" * 51, "now"])
    assert not keep_sentence(["see", "http", ":", "/", "/", "example.com", "now"])


def test_dedup_keeps_first_occurrence_order():
    assert dedup(["a b", "c d", "a b", "e f", "c d"]) == ["a b", "c d", "e f"]


def test_split_dev_test_sizes_disjoint_and_seeded():
    train, dev, test = split_dev_test(100, seed=0, frac=0.1, min_dev=5, min_test=20)
    assert (len(train), len(dev), len(test)) == (70, 10, 20)
    assert sorted(train + dev + test) == list(range(100))
    assert split_dev_test(100, seed=0, frac=0.1, min_dev=5, min_test=20) == (train, dev, test)
    assert split_dev_test(100, seed=1, frac=0.1, min_dev=5, min_test=20)[1] != dev
    # Small inputs: each held-out split is capped at a third.
    tr, dv, te = split_dev_test(9, seed=0)
    assert (len(tr), len(dv), len(te)) == (3, 3, 3)
    with pytest.raises(ValueError):
        split_dev_test(10, seed=0, frac=0.6)

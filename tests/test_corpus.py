"""Tests of the corpus builder's pure text functions, on literal strings (no packages, no network)."""
from __future__ import annotations

import pytest

from elmo_core.corpus import (
    brown_line_to_text,
    data_card,
    dedup,
    fortune_to_text,
    is_heading,
    is_speaker_line,
    jargon_paragraph_to_text,
    keep_sentence,
    normalize_text,
    osis_to_text,
    paragraphs,
    play_to_paragraphs,
    split_dev_test,
    split_sentences,
    strip_gutenberg,
    wordnet_gloss_definitions,
    wordnet_gloss_examples,
)


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


def test_brown_line_to_text_strips_tags_and_quotes():
    line = "\tThe/at jury/nn said/vbd ``/`` no/at evidence/nn ''/'' ,/, 1/2/cd ./."
    assert brown_line_to_text(line) == 'The jury said " no evidence " , 1/2 .'


def test_osis_to_text_drops_notes_titles_and_tags():
    osis = (
        '<title type="main">Genesis</title><chapter n="1" osisID="Gen.1" sID="Gen.1"/>'
        '<w lemma="strong:H7225">In</w> <w lemma="strong:H0853">the</w> beginning, God'
        '<note placement="foot"><reference type="annotateRef">1:1 </reference>Or, gods.</note> created.'
        '<div sID="gen26" type="x-p"/>Next &amp; last.'
    )
    text = osis_to_text(osis)
    assert "Genesis" not in text and "gods" not in text and "<" not in text and "1:1" not in text
    assert paragraphs(text) == ["In the beginning, God created.", "Next & last."]


def test_strip_gutenberg():
    text = "header\n*** START OF THIS PROJECT GUTENBERG EBOOK X ***\nBody text.\nEnd of Project Gutenberg's X\nlicence"
    assert strip_gutenberg(text).strip() == "Body text."
    assert strip_gutenberg("no markers") == "no markers"


def test_is_heading():
    assert is_heading("CHAPTER XII.")
    assert is_heading("ACT I.")
    assert is_heading("VII")
    assert not is_heading("Chapter and verse were quoted.")


def test_is_speaker_line_and_play_to_paragraphs():
    assert is_speaker_line("Lady Montague.", "", "O, where is Romeo?")
    assert is_speaker_line("MRS. PAGE.", "", "Hello.")
    assert not is_speaker_line("Farewell.", "ROMEO.", "")
    assert not is_speaker_line("Good night, sweet prince.", "", "And flights")
    play = (
        "HAMLET\n\nPersons Represented.\n\nHORATIO, friend to Hamlet.\n\nSCENE: Denmark.\n\nACT I.\n\nSCENE I. Elsinore.\n\n"
        "[Enter Bernardo.]\n\nBERNARDO.\nWho's there?\n\nFRANCISCO.\nNay, answer me: stand,\nand unfold yourself.\n"
    )
    assert play_to_paragraphs(play) == ["Who's there?", "Nay, answer me: stand, and unfold yourself."]


def test_wordnet_gloss_definitions_removes_examples():
    line = ('09213565 17 n 01 bank 0 001 @ 09257949 n 0000 | sloping land (especially the slope beside a body of water); '
            '"they pulled the canoe up on the bank"; "he sat on the bank of the river and watched the currents"  ')
    assert wordnet_gloss_definitions(line) == ["sloping land (especially the slope beside a body of water)"]
    assert wordnet_gloss_examples(line) == [
        "they pulled the canoe up on the bank", "he sat on the bank of the river and watched the currents",
    ]
    verb = '02000000 29 v 01 play 0 000 | participate in games or sport; "We played hockey all afternoon" '
    assert wordnet_gloss_definitions(verb) == ["participate in games or sport"]
    assert wordnet_gloss_definitions("  1 This software and database is being provided") == []
    # An unbalanced quote cuts the gloss there rather than leaking a fragment of an example.
    assert wordnet_gloss_definitions('0 03 n 01 x 0 000 | a thing; "an example that never ends') == ["a thing"]


def test_jargon_paragraph_to_text():
    assert jargon_paragraph_to_text(":zorch: /zorch/, n.") == ""
    assert jargon_paragraph_to_text("5. [MIT] n. Energy, drive, or ability. See {punt}.") == "Energy, drive, or ability. See punt."
    assert jargon_paragraph_to_text("1. [common] An undeliverable message.") == "An undeliverable message."
    assert jargon_paragraph_to_text("vt. To flunk an exam.") == "To flunk an exam."


def test_fortune_to_text_drops_attributions():
    fortune = "Never trust a computer you can't lift.\n\t\t-- Stan Mazor"
    assert fortune_to_text(fortune) == "Never trust a computer you can't lift."
    inline = '"Our vision is to speed up time." -- Alex Schure'
    assert fortune_to_text(inline) == '"Our vision is to speed up time."'
    assert fortune_to_text("Keep -- this dash.") == "Keep -- this dash."
    assert fortune_to_text("<joe> hi all\n<ann> hello joe") == ""


def test_data_card_contains_counts():
    zero = {"sentences": 0, "tokens": 0}
    stats = {
        "seed": 0,
        "sources": ["sotu"],
        "per_source": {"sotu": {"kept": 3, "duplicates_removed": 1, "train": {"sentences": 2, "tokens": 20},
                                "dev": zero, "test": {"sentences": 1, "tokens": 9}}},
        "totals": {"train": {"sentences": 2, "tokens": 20}, "dev": zero, "test": {"sentences": 1, "tokens": 9}},
        "reference": {"sentences": 1, "per_source": {"sotu": 1}},
        "brown_documents": [],
    }
    card = data_card(stats)
    assert "--sources sotu --seed 0" in card
    assert "| sotu | 2 | 20 | 0 | 0 | 1 | 9 | 1 |" in card
    assert "public domain (US federal government works)" in card

"""elmo_core.data.corpus.cleaners on literal strings (no packages, no network)."""
from __future__ import annotations

from elmo_core.data.corpus.cleaners import (fortune_to_text, is_heading, is_speaker_line, jargon_paragraph_to_text,
                                       osis_to_text, play_to_paragraphs, strip_gutenberg)
from elmo_core.data.corpus.pipeline import paragraphs


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

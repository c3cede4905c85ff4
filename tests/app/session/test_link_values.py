"""app/session/link_values.py: one checked value of a link's query parameters, and its note when it is off
(whole links: test_link.py)."""

from __future__ import annotations

from app.session.link_values import LinkValues, as_float, quote


def test_each_value_is_read_checked_with_a_note_when_it_is_off():
    notes: list[str] = []
    read = LinkValues({"k": "99", "q": "1e3", "proj": "pca", "color": "x", "ln": "1", "ctx": "yes"}, notes)
    assert read.number("k", 5, 1, 50, "k", integer=True) == 50  # clamped
    assert read.number("q", 1, 1, 10**6, "query #", integer=True) == 1000  # a whole number written as a float
    assert read.number("g", 1.0, 0.1, 4.0, "γ") == 1.0  # absent: the default, no note
    assert read.choice("proj", "auto", ["auto", "pca"], "projection") == "pca"
    assert read.choice("color", "label", ["label"], "colour-by") == "label"
    assert read.flag("ln", False) is True and read.flag("ctx", False) is False
    assert len(notes) == 3 and "outside 1 to 50; using 50" in notes[0]
    assert "unknown colour-by 'x'" in notes[1] and "neither 1 nor 0" in notes[2]


def test_quote_cuts_user_text_and_as_float_never_raises():
    assert quote("a" * 50) == repr("a" * 40 + "…") and quote("<b>") == "'<b>'"
    assert as_float("2.5") == 2.5 and as_float("x") is None

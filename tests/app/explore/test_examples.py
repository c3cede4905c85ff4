"""app/explore/examples.py: the built-in example sets."""

from __future__ import annotations

from app.explore import inputs
from app.explore.examples import EXAMPLE_SETS, find_example


def test_example_sets_are_well_formed():
    assert {"bank", "play", "spring", "cell", "match", "light"} <= set(EXAMPLE_SETS)
    for example in EXAMPLE_SETS.values():
        parsed = inputs.parse_input(example.text)
        assert 8 <= len(parsed.lines) <= 16 and parsed.notes == []
        assert all(ln.label for ln in parsed.lines)
        assert len({ln.label for ln in parsed.lines}) >= 2
        assert len(inputs.find_occurrences(parsed.lines, example.word, inflections=True)) >= len(parsed.lines)
        assert find_example(example.text + "\n") is example
    play = EXAMPLE_SETS["play"].text
    assert "Chico Ruiz made a spectacular play" in play and "Broadway play for Garson" in play

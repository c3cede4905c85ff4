"""elmo_core.data.brown: the tag map and the one Brown reader, on tests/fixtures/probes/brown."""
from __future__ import annotations

from pathlib import Path

import pytest

from elmo_core.data.brown import UNIVERSAL_TAGS, find_brown_dir, parse_brown_line, read_brown, read_lines, universal_tag

BROWN = Path(__file__).parents[1] / "fixtures" / "probes" / "brown"


@pytest.mark.parametrize("tag, expected", [
    ("nn", "NOUN"), ("nns-tl", "NOUN"), ("np$-tl-hl", "NOUN"), ("vbd", "VERB"), ("md*", "VERB"),
    ("bedz", "VERB"), ("ppss+md", "PRON"), ("*", "ADV"), ("cs", "ADP"), ("cc", "CONJ"), ("to", "PRT"),
    ("od", "ADJ"), ("fw-nn", "X"), ("uh", "X"), ("``", "."), ("--", "."), ("at", "DET"), ("cd", "NUM"),
    ("zzz", "X")])
def test_universal_tag(tag, expected):
    assert universal_tag(tag) == expected


def test_every_mapped_tag_is_universal():
    from elmo_core.data.brown import BROWN_TO_UNIVERSAL
    assert set(BROWN_TO_UNIVERSAL.values()) == set(UNIVERSAL_TAGS)


def test_read_brown_fixture():
    tokens, tags = parse_brown_line("\t``/`` We/ppss did/dod n't/* ''/'' ./.")
    assert tokens == ['"', "We", "did", "n't", '"', "."] and tags == [".", "PRON", "VERB", "ADV", ".", "."]
    docs = read_brown(BROWN)
    assert sorted(docs) == ["ca01", "ca02", "ca03", "cb01", "cb02", "cc01"]  # README is not a document
    assert all(len(s.tokens) == len(s.tags) for d in docs.values() for s in d)


def test_missing_brown_says_how_to_prepare(tmp_path, monkeypatch):
    monkeypatch.delenv("ELMO_BROWN_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match="--prepare"):
        find_brown_dir(tmp_path)


def test_corpus_text_drops_tags_and_turns_quotes():
    line = "\tThe/at jury/nn said/vbd ``/`` no/at evidence/nn ''/'' ,/, 1/2/cd ./."
    assert " ".join(parse_brown_line(line)[0]) == 'The jury said " no evidence " , 1/2 .'


def test_read_lines_feeds_both_the_probe_and_the_corpus():
    lines = list(read_lines(BROWN))
    docs = read_brown(BROWN, max_tokens=10_000)
    assert [(d, tok) for d, tok, _ in lines] == [(s.document, s.tokens) for d in docs.values() for s in d]

"""elmo_core.data.wordnet: the one WordNet reader, on literal lines and tests/fixtures/probes/wordnet."""
from __future__ import annotations

from pathlib import Path

import pytest

from elmo_core.data.senses import read_wordnet_examples
from elmo_core.data.wordnet import find_wordnet_dir, parse_data_line, read_synsets

WORDNET = Path(__file__).parents[1] / "fixtures" / "probes" / "wordnet"


def test_parse_data_line():
    line = ('00000320 00 s 02 fair(a) 0 just 0 000 | free from favoritism; "a fair trial"; "be fair to both; '
            'please"\n')
    s = parse_data_line(line)
    assert (s.offset, s.lexname, s.pos, s.lemmas) == ("00000320", "adj.all", "a", ("fair", "just"))
    assert s.examples == ("a fair trial", "be fair to both; please")
    assert parse_data_line("  1 licence header line\n") is None
    assert parse_data_line('00000010 17 n 01 bank 0 000 | sloping land\n').examples == ()


def test_definitions_never_hold_a_quoted_span():
    line = ('09213565 17 n 01 bank 0 001 @ 09257949 n 0000 | sloping land (especially the slope beside a body of water); '
            '"they pulled the canoe up on the bank"; "he sat on the bank of the river and watched the currents"  ')
    assert parse_data_line(line).definitions == ("sloping land (especially the slope beside a body of water)",)
    assert parse_data_line(line).quoted == parse_data_line(line).examples == (
        "they pulled the canoe up on the bank", "he sat on the bank of the river and watched the currents",
    )
    verb = '02000000 29 v 01 play 0 000 | participate in games or sport; "We played hockey all afternoon" '
    assert parse_data_line(verb).definitions == ("participate in games or sport",)
    assert parse_data_line("  1 This software and database is being provided") is None
    # An unbalanced quote cuts the gloss there rather than leaking a fragment of an example.
    assert parse_data_line('0 03 n 01 x 0 000 | a thing; "an example that never ends').definitions == ("a thing",)


def test_examples_are_always_among_the_quoted_spans():
    # the corpus drops every quoted span and the probes use the examples: this is what keeps them apart
    line = '00000001 03 n 01 x 0 000 | a "defined" term: "not after a semicolon"; "an example"; "another"  '
    s = parse_data_line(line)
    assert s.examples == ("an example", "another")
    assert set(s.examples) <= set(s.quoted) and "not after a semicolon" in s.quoted
    for synset in read_synsets(WORDNET):
        assert set(synset.examples) <= set(synset.quoted)
        assert not any('"' in d for d in synset.definitions)


def test_missing_wordnet_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("ELMO_WORDNET_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="apt-get install -y wordnet-base"):
        find_wordnet_dir(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="wordnet"):
        read_wordnet_examples(tmp_path)

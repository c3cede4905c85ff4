"""elmo_core.data.corpus.build: the probe sentences that the corpus and the reference corpus leave out, from the
tiny WordNet-format files (tests/fixtures/probes/wordnet) and the shipped probe TSVs. The whole build
fetches its sources and is run by hand (docs/DATA_SOURCES.md)."""
from __future__ import annotations

import shutil

from elmo_core.data.corpus.build import probe_sentences, wordnet_example_set
from elmo_core.data.fetch import deb_root
from elmo_core.paths import OWN_SENTENCES, SENSE_PROBE
from elmo_core.data.senses import read_sense_sentences, read_wordnet_examples
from tests.conftest import PROBE_DATA


def test_wordnet_examples_are_found_where_the_fetcher_unpacks_them(tmp_path):
    assert wordnet_example_set(tmp_path) == set()  # no WordNet: nothing to leave out
    shutil.copytree(PROBE_DATA / "wordnet", deb_root(tmp_path) / "usr/share/wordnet")
    spans = wordnet_example_set(tmp_path)
    examples = {" ".join(it.tokens) for it in read_wordnet_examples(PROBE_DATA / "wordnet")}
    assert examples and examples <= spans  # every probe example is among the spans kept out


def test_probe_sentences_hold_every_shipped_probe_sentence(tmp_path):
    found = probe_sentences(tmp_path)
    for path in (SENSE_PROBE, OWN_SENTENCES):
        assert {" ".join(it.tokens) for it in read_sense_sentences(path)} <= found
    assert len(found) == len({" ".join(it.tokens) for p in (SENSE_PROBE, OWN_SENTENCES)
                              for it in read_sense_sentences(p)})

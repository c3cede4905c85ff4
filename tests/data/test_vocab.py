"""elmo_core.data.vocab: the output vocabulary (frequency order, specials first, unknown tokens)."""
from __future__ import annotations

import pytest

from elmo_core.data.vocab import SPECIALS, Vocabulary


def test_build_encode_save_load(tmp_path):
    vocab = Vocabulary.build([["b", "a", "b"], ["c", "b", "a", "<S>"]], max_size=5)
    assert vocab.tokens == [*SPECIALS, "b", "a"]  # by count, then by spelling; "<S>" is not counted twice
    assert vocab.encode(["a", "zzz"]) == [0, 4, 2, 1]
    assert Vocabulary.build([["x", "y", "y"]], max_size=10, min_count=2).tokens == [*SPECIALS, "y"]
    vocab.save(tmp_path / "vocab.txt")
    assert Vocabulary.load(tmp_path / "vocab.txt").tokens == vocab.tokens and len(vocab) == 5
    with pytest.raises(ValueError, match="starts with"):
        Vocabulary(["a", "b", "c"])

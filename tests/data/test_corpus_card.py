"""elmo_core.data.corpus.card: the data card from a build's statistics."""
from __future__ import annotations

from elmo_core.data.corpus.card import data_card


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

"""Word vocabulary for the biLM's output softmax (the input side is character based and needs none).

Ids are sorted by frequency, which the adaptive softmax relies on; ``<S>``, ``</S>``, ``<UNK>`` come first.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

SPECIALS = ("<S>", "</S>", "<UNK>")


class Vocabulary:
    """Token <-> id map. Unknown tokens map to ``<UNK>``."""

    def __init__(self, tokens: Sequence[str]):
        if tuple(tokens[:3]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with {', '.join(SPECIALS)}")
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.bos, self.eos, self.unk = 0, 1, 2

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, sentence: Sequence[str]) -> list[int]:
        """``<S>`` + token ids + ``</S>`` (n + 2 ints)."""
        get = self.index.get
        return [self.bos, *(get(t, self.unk) for t in sentence), self.eos]

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], max_size: int, min_count: int = 1) -> "Vocabulary":
        """The ``max_size`` most frequent tokens seen at least ``min_count`` times (specials included)."""
        counts = Counter(t for s in sentences for t in s)
        words = [w for w, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                 if n >= min_count and w not in SPECIALS]
        return cls([*SPECIALS, *words[: max(0, max_size - len(SPECIALS))]])

    def save(self, path: str | Path) -> None:
        Path(path).write_text("\n".join(self.tokens) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "Vocabulary":
        return cls(Path(path).read_text(encoding="utf-8").splitlines())

"""Character ids: how ELMo spells a token for its character CNN.

Each token becomes W = 50 ids: begin-of-word, up to 48 UTF-8 bytes, end-of-word, then char padding.
Every id is offset by +1 so that 0 can mean "no token here" (a padded token position).
Source: ELMO_SPEC.md section 2 (AllenNLP ``ELMoCharacterMapper`` / bilm-tf ``UnicodeCharsVocabulary``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import torch

MAX_CHARS = 50  # W, character slots per token
BOS_CHAR, EOS_CHAR = 256, 257  # raw ids of the sentence-boundary characters
BOW_CHAR, EOW_CHAR, PAD_CHAR = 258, 259, 260  # begin/end of word, char padding
BOS_TOKEN, EOS_TOKEN = "<S>", "</S>"


_PAD_IDS = (PAD_CHAR + 1,) * MAX_CHARS
_PLUS_ONE = (1).__add__


def _with_marks(inner: Sequence[int]) -> tuple[int, ...]:
    # +1 on every id: id 0 is reserved for padded token positions. (map with a bound method runs in C: a third
    # of the time of a generator, which counted at batch 1, where most tokens of random text are new.)
    return (BOW_CHAR + 1, *map(_PLUS_ONE, inner), EOW_CHAR + 1, *_PAD_IDS[: MAX_CHARS - 2 - len(inner)])


BOS_IDS = _with_marks([BOS_CHAR])
EOS_IDS = _with_marks([EOS_CHAR])


@functools.lru_cache(maxsize=200_000)
def token_to_ids(token: str) -> tuple[int, ...]:
    """Model-facing character ids of one token.

    Args:
        token: the token text. The literals ``<S>`` and ``</S>`` map to the sentence-boundary ids,
            as AllenNLP does.

    Returns:
        tuple of 50 ints in 1..261: ``[259, b1+1, ..., b_k+1, 260, 261, ...]`` where b are the token's
        UTF-8 bytes truncated to 48 (possibly mid-character).
    """
    if token == BOS_TOKEN:
        return BOS_IDS
    if token == EOS_TOKEN:
        return EOS_IDS
    return _with_marks(token.encode("utf-8", "ignore")[: MAX_CHARS - 2])


def check_sentences(sentences: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    """The batch as a list, after checking that it holds lists of str tokens.

    Raises:
        TypeError: a sentence (or the batch) is a plain string rather than a list of tokens, or a
            token is not a str.
    """
    if isinstance(sentences, str):
        raise TypeError(
            "expected a list of sentences, each a list of tokens, e.g. [['The', 'cat', 'sat']]; got a single str"
        )
    sentences = list(sentences)
    for i, sent in enumerate(sentences):
        if isinstance(sent, str):
            raise TypeError(
                f"sentence {i} is a str; pass a list of tokens such as sentence.split() or "
                "elmo_core.tokenize(sentence), not the raw string (its letters would become tokens)"
            )
        for tok in sent:
            if not isinstance(tok, str):
                raise TypeError(f"sentence {i} holds a {type(tok).__name__}; tokens must be str")
    return sentences


def batch_to_ids(sentences: Sequence[Sequence[str]]) -> torch.Tensor:
    """Character ids for a batch of tokenized sentences (no ``<S>``/``</S>`` added: the biLM adds them).

    Args:
        sentences: B sentences, each a list of token strings.

    Returns:
        torch.LongTensor of shape (B, T, 50), T = longest sentence (at least 1 when B > 0);
        padded token positions are all zeros.

    Raises:
        TypeError: a sentence (or the batch) is a plain string rather than a list of tokens, or a
            token is not a str.
    """
    sentences = check_sentences(sentences)
    max_len = max((len(s) for s in sentences), default=0)
    ids = torch.zeros((len(sentences), max(max_len, 1) if sentences else 0, MAX_CHARS), dtype=torch.long)
    for i, sent in enumerate(sentences):
        if sent:
            # through numpy: building the tensor from nested tuples directly took 2.5x as long
            ids[i, : len(sent)] = torch.from_numpy(np.array([token_to_ids(t) for t in sent], dtype=np.int64))
    return ids

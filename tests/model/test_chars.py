"""Character ids: exact values from ELMO_SPEC.md section 2 (AllenNLP indexer tests and UTF-8 bytes)."""

import pytest
import torch

from elmo_core.model.chars import batch_to_ids, token_to_ids


def pad(ids, total=50):
    return ids + [261] * (total - len(ids))


@pytest.mark.parametrize(
    "token, expected",
    [
        ("<S>", pad([259, 257, 260])),
        ("</S>", pad([259, 258, 260])),
        ("Second", pad([259, 84, 102, 100, 112, 111, 101, 260])),
        (chr(256) + "t", pad([259, 197, 129, 117, 260])),
        ("café", pad([259, 100, 98, 103, 196, 170, 260])),  # é = C3 A9 in UTF-8
        ("😀", pad([259, 241, 160, 153, 129, 260])),  # F0 9F 98 80
        ("a" * 60, [259] + [98] * 48 + [260]),  # truncated to 48 bytes, no char padding left
    ],
)
def test_token_ids(token, expected):
    assert list(token_to_ids(token)) == expected


def test_truncation_counts_bytes_not_characters():
    ids = token_to_ids("é" * 30)  # 60 bytes -> 48 bytes = 24 characters
    assert list(ids[1:49]) == [196, 170] * 24
    assert ids[49] == 260


def test_batch_shape_and_padding():
    ids = batch_to_ids([["The", "cat", "sat"], ["Hi"]])
    assert ids.shape == (2, 3, 50) and ids.dtype == torch.long
    assert ids[1, 1:].abs().sum() == 0  # padded token positions are all zero
    assert ids[1, 0].tolist() == list(token_to_ids("Hi"))


def test_empty_inputs():
    assert batch_to_ids([]).shape == (0, 0, 50)
    assert batch_to_ids([[]]).shape == (1, 1, 50)
    assert batch_to_ids([[]]).abs().sum() == 0


@pytest.mark.parametrize("bad", ["The cat sat", ["The cat sat"], [["ok", 3]]])
def test_strings_instead_of_token_lists_raise(bad):
    with pytest.raises(TypeError, match="str|tokens"):
        batch_to_ids(bad)

"""The batches a run trains on: each epoch's order (shuffled, grouped by length, or anchored on shared words)
and the id tensors of one batch. Every order is deterministic in (seed, epoch), so a resumed run continues
exactly."""

from __future__ import annotations

import numpy as np
import torch

from elmo_core.data.vocab import Vocabulary
from elmo_core.model.chars import batch_to_ids


def epoch_batches(lengths: np.ndarray, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
    """The batches of one epoch: shuffled, then grouped by similar length to cut padding.

    Deterministic in (seed, epoch), so a resumed run recomputes the same order and skips to its position.
    """
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    pool = batch_size * 50
    batches = []
    for start in range(0, len(order), pool):
        chunk = order[start : start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


LENGTH_BUCKETS = (12, 20, 30, 10**9)  # anchor batches draw sentences of one length band, to limit padding


def anchor_index(
    sentence_ids: list[np.ndarray], vocab_tokens: list[str], group: int, min_id: int
) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """Per length band, the anchor words (vocabulary ids) and the sentences that hold each.

    An anchor is a word of at least three letters, id >= ``min_id``, found in at least ``group`` sentences
    of the band. Args: sentence_ids: each training sentence's token ids (boundaries excluded).
    Returns: per band of ``LENGTH_BUCKETS``, (ids (A,), [sentence indices (n_a,)]).
    """
    lengths = np.array([len(x) for x in sentence_ids])
    band = np.searchsorted(np.array(LENGTH_BUCKETS), lengths)  # band b holds lengths <= LENGTH_BUCKETS[b]
    eligible = np.array([len(t) >= 3 and t.isalpha() for t in vocab_tokens])
    eligible[:min_id] = False
    out = []
    for b in range(len(LENGTH_BUCKETS)):
        members = np.flatnonzero(band == b)
        if not len(members):
            out.append((np.zeros(0, dtype=np.int64), []))
            continue
        ids = np.concatenate([sentence_ids[i] for i in members])
        sent = np.repeat(members, [len(sentence_ids[i]) for i in members])
        pick = eligible[ids]
        pairs = np.unique(np.stack([ids[pick], sent[pick]], axis=1), axis=0)  # (word, sentence), each once
        words, starts, counts = np.unique(pairs[:, 0], return_index=True, return_counts=True)
        keep = counts >= group
        out.append((words[keep], [pairs[a : a + n, 1] for a, n in zip(starts[keep], counts[keep])]))
    return out


def anchor_epoch_batches(
    index: list[tuple[np.ndarray, list[np.ndarray]]],
    num_batches: int,
    batch_size: int,
    group: int,
    seed: int,
    epoch: int,
) -> list[np.ndarray]:
    """One epoch of anchor batches: each picks a length band (by its share of anchor sentences), then
    ``batch_size // group`` anchor words (probability ~ sqrt of their sentence count) and ``group`` of each
    one's sentences, so the batch holds many occurrences of the same words in different contexts.

    Deterministic in (seed, epoch), like ``epoch_batches``, so a resumed run continues exactly.
    """
    rng = np.random.default_rng([seed, epoch, 1])
    bands = [b for b, (words, _) in enumerate(index) if len(words)]
    if not bands:
        raise ValueError("no word occurs in enough sentences to anchor a batch; lower anchor_group")
    weight = np.array([sum(len(x) for x in index[b][1]) for b in bands], dtype=float)
    band_p = weight / weight.sum()
    word_p = {}
    for b in bands:
        w = np.sqrt([len(x) for x in index[b][1]])
        word_p[b] = w / w.sum()
    per_batch = max(1, batch_size // group)
    batches = []
    for _ in range(num_batches):
        b = bands[rng.choice(len(bands), p=band_p)]
        words, sents = index[b]
        chosen = rng.choice(len(words), size=min(per_batch, len(words)), replace=False, p=word_p[b])
        rows = np.concatenate([rng.choice(sents[a], size=group, replace=False) for a in chosen])
        batches.append(rows[np.sort(np.unique(rows, return_index=True)[1])])  # a sentence once per batch
    return batches


def make_batch(sentences: list[list[str]], vocab: Vocabulary) -> tuple[torch.Tensor, torch.Tensor]:
    """char ids (B, T, 50) and word ids (B, T + 2) with ``<S>``/``</S>``, padded with ``</S>``'s id."""
    char_ids = batch_to_ids(sentences)
    words = torch.full((len(sentences), char_ids.shape[1] + 2), vocab.eos, dtype=torch.long)
    for i, s in enumerate(sentences):
        words[i, : len(s) + 2] = torch.tensor(vocab.encode(s))
    return char_ids, words

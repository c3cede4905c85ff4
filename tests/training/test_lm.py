"""elmo_core.training.lm: the biLM training objective (forward and backward NLL through the shared adaptive softmax) and
the teacher distances, on tiny tensors whose answers are known. Training with them is tested in test_train.py
and test_teacher.py."""

from __future__ import annotations

import math

import pytest
import torch

from elmo_core.model.bilm import BiLM
from elmo_core.model.chars import batch_to_ids
from elmo_core.model.config import BiLMConfig
from elmo_core.training.lm import (
    BiLanguageModel,
    LMLoss,
    cosine_distance,
    default_cutoffs,
    first_occurrences,
    occurrence_distance,
)
from tests.training.test_train import TINY_OPTIONS


def test_first_occurrences():
    uniq, first = first_occurrences(torch.tensor([5, 3, 5, 9, 3, 3]))
    assert uniq.tolist() == [3, 5, 9]
    assert first.tolist() == [1, 0, 3]


def test_default_cutoffs():
    assert default_cutoffs(100_000) == [2000, 10000, 40000]
    assert default_cutoffs(5000) == [2000]
    assert default_cutoffs(10) == [5]  # a tiny vocabulary: one tail cluster of half of it


def test_cosine_distance_is_scale_free():
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    assert float(cosine_distance(a, 5 * a)) == pytest.approx(0.0, abs=1e-6)
    assert float(cosine_distance(a, -a)) == pytest.approx(2.0)
    assert float(cosine_distance(a, a.flip(1))) == pytest.approx(1.0)  # orthogonal rows


def test_a_softmax_that_knows_nothing_scores_its_uniform_likelihood():
    """With every softmax weight zero, the adaptive softmax (V = 10, cutoff 5) gives each head word 1/6 and
    each of the 5 tail words 1/6 * 1/5: the summed NLL follows from the targets alone."""
    torch.manual_seed(0)
    model = BiLanguageModel(BiLM(BiLMConfig.from_dict(TINY_OPTIONS)), vocab_size=10, dropout=0.0).eval()
    for p in model.softmax.parameters():
        torch.nn.init.zeros_(p)
    words = [["a", "b", "c"], ["d"]]
    word_ids = torch.tensor([[1, 3, 7, 9, 2], [1, 4, 2, 0, 0]])  # <S> w... </S>, padded
    with torch.no_grad():
        loss = model(batch_to_ids(words), word_ids)
    assert isinstance(loss, LMLoss) and loss.tokens == 4 + 2  # n_i + 1 predictions per direction

    def nll(targets):
        return sum(math.log(6) + (math.log(5) if t >= 5 else 0.0) for t in targets)

    assert float(loss.forward_nll) == pytest.approx(nll([3, 7, 9, 2, 4, 2]), rel=1e-5)
    assert float(loss.backward_nll) == pytest.approx(nll([1, 3, 7, 9, 1, 4]), rel=1e-5)
    assert float(loss.mean) == pytest.approx((float(loss.forward_nll) + float(loss.backward_nll)) / 12, rel=1e-6)
    assert float(loss.total(lexical_weight=1.0)) == pytest.approx(float(loss.mean))  # no teacher target given


def test_occurrence_ids_decide_which_tokens_are_one_word():
    from elmo_core.model.bilm import BiLM
    from elmo_core.model.config import BiLMConfig
    from tests.training.test_train import TINY_OPTIONS

    torch.manual_seed(0)
    model = BiLanguageModel(BiLM(BiLMConfig.from_dict(TINY_OPTIONS)), 8, contextual_dim=6, occurrence_min_id=3).eval()
    # ids 3 and 4 each occur once (no pair of their own); as one word they have two occurrences
    words = torch.tensor([[0, 3, 5, 1], [0, 4, 6, 1]])
    chars = torch.randint(5, 200, (2, 2, 50))
    targets = (torch.randn(2, 2, 6), torch.ones(2, 2, dtype=torch.bool))
    assert model(chars, words, contextual=targets).occurrence is None
    joined = torch.tensor([[0, 3, 5, 1], [0, 3, 6, 1]])
    # each occurrence's only neighbour is the other, so both distributions are one-hot: KL 0
    assert float(model(chars, words, contextual=targets, occurrence_ids=joined).occurrence) == pytest.approx(
        0.0, abs=1e-6
    )
    three = torch.tensor([[0, 3, 3, 1], [0, 3, 6, 1]])  # three occurrences: the KL now depends on the geometry
    assert float(model(chars, words, contextual=targets, occurrence_ids=three).occurrence) > 1e-4


def test_occurrence_distance():
    gen = torch.Generator().manual_seed(0)
    ids = torch.tensor([200, 200, 5, 300, 200, 300, 5])
    teacher_rows = torch.randn(7, 6, generator=gen)
    assert float(occurrence_distance(teacher_rows.clone(), teacher_rows, ids, 150)) == pytest.approx(0.0, abs=1e-6)
    student = torch.randn(7, 4, generator=gen)
    loss = float(occurrence_distance(student, teacher_rows, ids, 150))
    assert loss > 0.01
    # Rows of words below min_id (here id 5) take no part: changing them changes nothing.
    other = student.clone()
    other[[2, 6]] = torch.randn(2, 4, generator=gen)
    assert float(occurrence_distance(other, teacher_rows, ids, 150)) == pytest.approx(loss, abs=1e-6)
    # A student that keeps the teacher's order of a word's occurrences but adds a shared word-identity
    # direction (cosines pulled up together, order kept) costs far less than one with the order scrambled.
    ids8 = torch.tensor([200] * 8 + [300] * 8)
    t = torch.nn.functional.normalize(torch.randn(16, 6, generator=gen), dim=-1)
    same_order = torch.cat([t, torch.full((16, 1), 0.5)], dim=1)  # cos_s = (cos_t + 0.25) / 1.25
    scrambled = same_order[torch.cat([torch.randperm(8, generator=gen), 8 + torch.randperm(8, generator=gen)])]
    kl_kept = float(occurrence_distance(same_order, t, ids8, 150))
    kl_scrambled = float(occurrence_distance(scrambled, t, ids8, 150))
    assert kl_kept < 0.25 * kl_scrambled
    assert occurrence_distance(student, teacher_rows, torch.arange(200, 207), 150) is None  # no repeated word


def test_side_bag_distance():
    from elmo_core.training.lm import side_bag_distance

    # P = 3 per direction, K = 2: the bags sit in dims 0-1 (forward) and 3-4 (backward); dims 2 and 5 are free.
    top = torch.zeros(1, 4, 6)
    top[0, 1] = torch.tensor(
        [2.0, 0.0, 9.0, 0.0, 2.0, -9.0]
    )  # token 1: exactly scale x target, whatever dims 2, 5 hold
    top[0, 2] = torch.tensor([0.0, 0.0, 5.0, 0.0, 0.0, 5.0])  # token 2: nothing where its bags should be
    target = torch.tensor([[[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]]])
    mask = torch.tensor([[True, True]])
    # Error only from token 2: |(0,0,0,0) - 2 * (0,1,1,0)|^2 = 8, over the targets' energy 8 + 8 = 16.
    assert float(side_bag_distance(top, target, mask, scale=2.0)) == pytest.approx(0.5)
    assert float(side_bag_distance(top, target, torch.tensor([[True, False]]), scale=2.0)) == pytest.approx(0.0)
    assert side_bag_distance(top, target, torch.tensor([[False, False]]), scale=2.0) is None
    assert side_bag_distance(top, torch.zeros_like(target), mask, scale=2.0) is None  # no kept word: no 1e6 loss
    with pytest.raises(ValueError, match="do not fit"):
        side_bag_distance(top[..., :2].repeat(1, 1, 1), torch.zeros(1, 2, 4), mask, scale=1.0)

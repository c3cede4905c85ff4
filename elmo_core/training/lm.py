"""The biLM training objective: forward and backward language models with a shared softmax.

The forward LM at position t predicts token t + 1, the backward LM predicts token t - 1, and the loss is
the sum of both negative log likelihoods (Peters et al. 2018 section 3.1, equation in 3.1). The output
layer is PyTorch's adaptive softmax (Grave et al. 2017), so a large word vocabulary is not the bottleneck.
Dims: B sentences, T tokens, P projection size, V vocabulary size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from elmo_core.model.bilm import BiLM


@dataclass
class LMLoss:
    """Summed negative log likelihoods (nats) and token counts for each direction, plus the teacher losses.

    lexical, contextual: mean cosine distances (1 - cos, in [0, 2]) of the teacher heads, or None when the
    batch has no such target (see ``BiLanguageModel.forward``).
    """

    forward_nll: torch.Tensor
    backward_nll: torch.Tensor
    tokens: int
    lexical: torch.Tensor | None = None
    contextual: torch.Tensor | None = None
    similarity: torch.Tensor | None = None
    occurrence: torch.Tensor | None = None
    side_bag: torch.Tensor | None = None

    @property
    def mean(self) -> torch.Tensor:
        """(forward + backward) / 2 per predicted token: the LM part of the training loss."""
        return (self.forward_nll + self.backward_nll) / (2 * self.tokens)

    def total(
        self,
        lexical_weight: float = 0.0,
        contextual_weight: float = 0.0,
        similarity_weight: float = 0.0,
        occurrence_weight: float = 0.0,
        side_bag_weight: float = 0.0,
    ) -> torch.Tensor:
        """The training objective: the paper's LM loss, always, plus the weighted teacher losses."""
        loss = self.mean
        if side_bag_weight and self.side_bag is not None:
            loss = loss + side_bag_weight * self.side_bag
        if occurrence_weight and self.occurrence is not None:
            loss = loss + occurrence_weight * self.occurrence
        if similarity_weight and self.similarity is not None:
            loss = loss + similarity_weight * self.similarity
        if lexical_weight and self.lexical is not None:
            loss = loss + lexical_weight * self.lexical
        if contextual_weight and self.contextual is not None:
            loss = loss + contextual_weight * self.contextual
        return loss


def cosine_distance(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean of 1 - cos over rows; pred, target (N, K) float32. A scale-free target: only the direction counts."""
    return (1.0 - nn.functional.cosine_similarity(pred.float(), target.float(), dim=-1, eps=1e-6)).mean()


SIMILARITY_SAMPLE = 768  # tokens per batch whose pairwise similarities are matched (cost grows with its square)


def similarity_distance(
    student: torch.Tensor, teacher: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Mean squared difference of the pairwise cosine similarities of sampled rows (similarity-preserving
    distillation): it shapes the student's own geometry, which is what nearest neighbours and maps read.

    Args: student (N, D) and teacher (N, K) rows of the same tokens. Returns a float32 scalar.
    """
    if len(student) > SIMILARITY_SAMPLE:
        pick = torch.randperm(len(student), generator=generator, device=student.device)[:SIMILARITY_SAMPLE]
        student, teacher = student[pick], teacher[pick]
    s = nn.functional.normalize(student.float(), dim=-1, eps=1e-6)
    t = nn.functional.normalize(teacher.float(), dim=-1, eps=1e-6)
    return ((s @ s.T - t @ t.T) ** 2).mean()


OCCURRENCE_SAMPLE = 2048  # at most this many repeated-word tokens per batch enter the same-word pairs


def occurrence_distance(
    student: torch.Tensor,
    teacher: torch.Tensor,
    word_ids: torch.Tensor,
    min_id: int,
    temperature: float = 0.1,
    generator: torch.Generator | None = None,
) -> torch.Tensor | None:
    """Listwise distillation over occurrences of the same word: for each occurrence, which of the word's
    other occurrences in the batch are nearest, as a distribution (softmax of cosine / ``temperature``); the
    loss is the KL divergence from the teacher's distribution to the student's, averaged over occurrences.

    This is the geometry the explorer and the sense probe read: how a word's occurrences rank each other
    from context to context. It ignores a shift of all of a word's cosines (a word-identity component the
    student keeps for its language model), which a squared difference of cosines mostly spends itself on.
    Pairs of different words, which dominate ``similarity_distance``, say little about it. Ids below
    ``min_id`` (the most frequent words, mostly function words and punctuation) and ``<UNK>`` are left out.

    Args: student (N, D), teacher (N, K) rows of the same N tokens; word_ids (N,) LongTensor.
    Returns: a float32 scalar (nats), or None when the batch has no repeated word.
    """
    keep = word_ids >= min_id
    _, inverse, counts = torch.unique(word_ids, return_inverse=True, return_counts=True)
    keep &= counts[inverse] >= 2
    where = keep.nonzero().squeeze(1)
    if len(where) > OCCURRENCE_SAMPLE:
        where = where[torch.randperm(len(where), generator=generator, device=where.device)[:OCCURRENCE_SAMPLE]]
    if len(where) < 2:
        return None
    ids = word_ids[where]
    same = ids.unsqueeze(0) == ids.unsqueeze(1)
    same.fill_diagonal_(False)
    rows = same.any(dim=1)
    if not bool(rows.any()):
        return None
    same = same[rows]
    s = nn.functional.normalize(student[where].float(), dim=-1, eps=1e-6)
    t = nn.functional.normalize(teacher[where].float(), dim=-1, eps=1e-6)
    # A large negative rather than -inf outside the word's occurrences keeps 0 * log 0 out of the sum.
    log_ps = ((s[rows] @ s.T) / temperature).masked_fill(~same, -1e4).log_softmax(dim=-1)
    log_pt = ((t[rows] @ t.T) / temperature).masked_fill(~same, -1e4).log_softmax(dim=-1)
    return (log_pt.exp() * (log_pt - log_ps)).masked_fill(~same, 0.0).sum(dim=-1).mean()


def side_bag_distance(top: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor | None:
    """Relative squared error of the top layer's first K dimensions of each direction against ``scale`` times
    the side bags: sum ||h_sub - scale * target||^2 / sum ||scale * target||^2 over the masked tokens.

    No head: the bags are written into the exported vectors, in the first K of the P dimensions of the forward half
    (the bag before the token) and of the backward half (the bag after it), so they shape the cosines directly. With
    ``scale`` large against the rest of the layer they dominate those cosines; the softmax, which reads the same
    layer, is free to weigh them as it likes.

    Args: top (B, T + 2, 2P) the top layer (boundaries included); target float32 (B, T, 2K) from
    ``teacher.side_bags``; mask bool (B, T), the real tokens. Returns: a float32 scalar, or None when no token
    or no bag holds anything (a batch without a kept word).
    Raises: ValueError when K > P.
    """
    p = top.shape[-1] // 2
    k = target.shape[-1] // 2
    if k > p:
        raise ValueError(f"side bags of {k} dimensions do not fit a projection of {p}: the bags need P >= K")
    if not bool(mask.any()):
        return None
    inner = top[:, 1 : target.shape[1] + 1].float()
    student = torch.cat([inner[..., :k], inner[..., p : p + k]], dim=-1)[mask]
    goal = scale * target[mask].float()
    energy = (goal**2).sum()
    if float(energy) == 0.0:  # no kept word in the batch: nothing to be relative to
        return None
    return ((student - goal) ** 2).sum() / energy


def first_occurrences(ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Distinct values of a 1-D LongTensor and the index of each one's first occurrence (both (U,))."""
    uniq, inverse = torch.unique(ids, return_inverse=True)
    order = torch.arange(len(ids), device=ids.device)
    first = torch.full((len(uniq),), len(ids), dtype=torch.long, device=ids.device)
    return uniq, first.scatter_reduce(0, inverse, order, reduce="amin")


def default_cutoffs(vocab_size: int) -> list[int]:
    cutoffs = [c for c in (2000, 10000, 40000) if c < vocab_size - 1]
    return cutoffs or [max(1, vocab_size // 2)]


class BiLanguageModel(nn.Module):
    """A biLM plus its shared adaptive softmax.

    Args:
        bilm: the biLM (its top layer feeds the softmax).
        vocab_size: V, including ``<S>``, ``</S>``, ``<UNK>``.
        dropout: on the top layer before the softmax (training only).
        occurrence_min_id: vocabulary ids from which words form same-word pairs for ``occurrence_distance``;
            None (default) leaves the occurrence term out. occurrence_temperature: its softmax temperature.
        bag_parts: equal parts of ``context_bag`` along its last axis, each normalised on its own: 1 for
            ``teacher.context_bags``, 2 for ``teacher.directional_bags``.
    """

    def __init__(
        self,
        bilm: BiLM,
        vocab_size: int,
        dropout: float = 0.1,
        cutoffs: list[int] | None = None,
        lexical_dim: int = 0,
        contextual_dim: int = 0,
        occurrence_min_id: int | None = None,
        occurrence_temperature: float = 0.1,
        bag_parts: int = 1,
        side_bag_scale: float = 8.0,
    ):
        super().__init__()
        self.bilm = bilm
        p = bilm.config.lstm.projection_dim
        self.softmax = nn.AdaptiveLogSoftmaxWithLoss(
            p, vocab_size, cutoffs or default_cutoffs(vocab_size), div_value=4.0
        )
        self.dropout = nn.Dropout(dropout)
        # Teacher heads exist only in training; export writes the biLM and the softmax, never these.
        self.lexical_head = nn.Linear(p, lexical_dim) if lexical_dim else None
        self.contextual_head = nn.Linear(2 * p, contextual_dim) if contextual_dim else None
        self.occurrence_min_id = occurrence_min_id
        self.occurrence_temperature = occurrence_temperature
        self.bag_parts = bag_parts
        self.side_bag_scale = side_bag_scale

    def forward(
        self,
        char_ids: torch.Tensor,
        word_ids: torch.Tensor,
        lexical: tuple[torch.Tensor, torch.Tensor] | None = None,
        contextual: tuple[torch.Tensor, torch.Tensor] | None = None,
        context_bag: torch.Tensor | None = None,
        occurrence_ids: torch.Tensor | None = None,
        side_bag: torch.Tensor | None = None,
    ) -> LMLoss:
        """Loss for a batch.

        Args:
            char_ids: (B, T, 50) LongTensor from ``batch_to_ids`` (no boundaries).
            word_ids: (B, T + 2) LongTensor of vocabulary ids, ``<S>`` ... ``</S>``, padded with anything.
            lexical: optional (targets float32 (V, K_lex), has_target bool (V,)) per vocabulary id: layer 0's
                token vector of each distinct word of the batch predicts its target through ``lexical_head``.
            contextual: optional (targets float32 (B, T, K_ctx), mask bool (B, T)) per token: the top layer's
                [forward; backward] vector predicts it through ``contextual_head``. Layer 1 is not a target.
            context_bag: optional float32 (B, T, K_bag), a second view of each token's context
                (``teacher.context_bags``, or ``teacher.directional_bags`` with ``bag_parts=2``); when given,
                the geometry the similarity terms match is [unit teacher state ; unit bag], the two teachers
                weighted equally.
            occurrence_ids: optional (B, T + 2) LongTensor laid out like ``word_ids``: which tokens the occurrence
                term counts as the same word (``wordforms.form_grouper``); by default their vocabulary ids.
            side_bag: optional float32 (B, T, 2K) from ``teacher.side_bags``: the top layer's first K dimensions
                per direction are fitted to them (``side_bag_distance``) at the real tokens.

        Returns:
            LMLoss with summed NLLs (float32 scalars) over the B * (n_i + 1) predictions per direction, and
            the teacher losses (mean cosine distance) when their targets are given.
        """
        out = self.bilm(char_ids)
        lexical_loss = contextual_loss = similarity_loss = occurrence_loss = None
        if lexical is not None and self.lexical_head is not None:
            targets, has = lexical
            p = out.activations[0].shape[-1] // 2
            flat_ids = word_ids.reshape(-1)
            where = (out.mask.reshape(-1) & has[flat_ids]).nonzero().squeeze(1)
            if len(where):
                # One row per distinct word: a type-level target should not be weighted by frequency.
                uniq, first = first_occurrences(flat_ids[where])
                token_vectors = out.activations[0].reshape(-1, 2 * p)[where[first], :p]
                lexical_loss = cosine_distance(self.lexical_head(token_vectors), targets[uniq])
        if contextual is not None and self.contextual_head is not None:
            targets, tmask = contextual
            inner = out.activations[-1][:, 1 : targets.shape[1] + 1]  # token positions, boundaries dropped
            if bool(tmask.any()):
                contextual_loss = cosine_distance(self.contextual_head(inner[tmask]), targets[tmask])
                geometry = targets[tmask]
                if context_bag is not None:
                    # Each of the bag's parts (one, or the two sides of ``teacher.directional_bags``) unit length,
                    # scaled so that the bag as a whole weighs as much as the teacher state.
                    parts = context_bag[tmask].float().chunk(self.bag_parts, dim=-1)
                    geometry = torch.cat(
                        [
                            nn.functional.normalize(geometry.float(), dim=-1, eps=1e-6),
                            *(nn.functional.normalize(b, dim=-1, eps=1e-6) / self.bag_parts**0.5 for b in parts),
                        ],
                        dim=-1,
                    )
                similarity_loss = similarity_distance(inner[tmask], geometry)
                if self.occurrence_min_id is not None:  # None: the term is not in this run's objective
                    same_word = word_ids if occurrence_ids is None else occurrence_ids
                    token_ids = same_word[:, 1 : targets.shape[1] + 1][tmask]
                    occurrence_loss = occurrence_distance(
                        inner[tmask], geometry, token_ids, self.occurrence_min_id, self.occurrence_temperature
                    )
        side_bag_loss = None
        if side_bag is not None:
            # Token j sits at position j + 1 and is real when position j + 2 (its successor or </S>) still is.
            real = out.mask[:, 2 : side_bag.shape[1] + 2]
            side_bag_loss = side_bag_distance(out.activations[-1], side_bag, real, self.side_bag_scale)
        top = self.dropout(out.activations[-1])  # (B, T + 2, 2P)
        p = top.shape[-1] // 2
        mask = out.mask
        # Forward: positions 0..n predict 1..n+1; backward: positions 1..n+1 predict 0..n.
        pred_mask = mask[:, 1:]
        fwd_in = top[:, :-1, :p][pred_mask]
        fwd_target = word_ids[:, 1:][pred_mask]
        bwd_in = top[:, 1:, p:][pred_mask]
        bwd_target = word_ids[:, :-1][pred_mask]
        n = int(pred_mask.sum())
        # One softmax call for both directions (it is shared); split the per-token log likelihoods after.
        # Always in float32, also under a bfloat16 autocast: the log-sum-exp over the vocabulary is where
        # low precision hurts.
        with torch.autocast(fwd_in.device.type, enabled=False):
            logp = self.softmax(torch.cat([fwd_in, bwd_in]).float(), torch.cat([fwd_target, bwd_target])).output
        return LMLoss(
            -logp[:n].sum(),
            -logp[n:].sum(),
            n,
            lexical_loss,
            contextual_loss,
            similarity_loss,
            occurrence_loss,
            side_bag_loss,
        )

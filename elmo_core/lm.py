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

from .bilm import BiLM


@dataclass
class LMLoss:
    """Summed negative log likelihoods (nats) and token counts for each direction."""

    forward_nll: torch.Tensor
    backward_nll: torch.Tensor
    tokens: int

    @property
    def mean(self) -> torch.Tensor:
        """(forward + backward) / 2 per predicted token: the training loss."""
        return (self.forward_nll + self.backward_nll) / (2 * self.tokens)


def default_cutoffs(vocab_size: int) -> list[int]:
    cutoffs = [c for c in (2000, 10000, 40000) if c < vocab_size - 1]
    return cutoffs or [max(1, vocab_size // 2)]


class BiLanguageModel(nn.Module):
    """A biLM plus its shared adaptive softmax.

    Args:
        bilm: the biLM (its top layer feeds the softmax).
        vocab_size: V, including ``<S>``, ``</S>``, ``<UNK>``.
        dropout: on the top layer before the softmax (training only).
    """

    def __init__(self, bilm: BiLM, vocab_size: int, dropout: float = 0.1, cutoffs: list[int] | None = None):
        super().__init__()
        self.bilm = bilm
        p = bilm.config.lstm.projection_dim
        self.softmax = nn.AdaptiveLogSoftmaxWithLoss(p, vocab_size, cutoffs or default_cutoffs(vocab_size), div_value=4.0)
        self.dropout = nn.Dropout(dropout)

    def forward(self, char_ids: torch.Tensor, word_ids: torch.Tensor) -> LMLoss:
        """Loss for a batch.

        Args:
            char_ids: (B, T, 50) LongTensor from ``batch_to_ids`` (no boundaries).
            word_ids: (B, T + 2) LongTensor of vocabulary ids, ``<S>`` ... ``</S>``, padded with anything.

        Returns:
            LMLoss with summed NLLs (float32 scalars) over the B * (n_i + 1) predictions per direction.
        """
        out = self.bilm(char_ids)
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
        logp = self.softmax(torch.cat([fwd_in, bwd_in]).float(), torch.cat([fwd_target, bwd_target])).output
        return LMLoss(-logp[:n].sum(), -logp[n:].sum(), n)

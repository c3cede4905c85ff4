"""The biLM: character CNN (layer 0) and biLSTM (layers 1..L), returning all L + 1 layers.

Dims: B sentences, T tokens (without boundaries), W = 50, P projection size, L LSTM layers.
Source: Peters et al. 2018 sections 3.1 and 3.4; ELMO_SPEC.md sections 7-8 (AllenNLP ``_ElmoBiLm``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from elmo_core.model.char_cnn import CharCNN
from elmo_core.model.chars import BOS_IDS, EOS_IDS
from elmo_core.model.config import BiLMConfig
from elmo_core.model.lstm import BiLSTM, LSTMState


@dataclass
class BiLMOutput:
    """activations: L + 1 tensors (B, T + 2, 2P), ``<S>``/``</S>`` included; layer 0 is the token
    vector concatenated with itself. mask: (B, T + 2) bool. state: carried LSTM state, or None."""

    activations: list[torch.Tensor]
    mask: torch.Tensor
    state: LSTMState | None = None


def add_sentence_boundaries(char_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Wrap each sentence in ``<S>`` ... ``</S>``.

    Args:
        char_ids: LongTensor (B, T, 50), right-padded with all-zero tokens.

    Returns:
        ids (B, T + 2, 50) and mask (B, T + 2) bool.
    """
    batch, steps, width = char_ids.shape
    lengths = (char_ids > 0).any(dim=-1).sum(dim=1)
    ids = char_ids.new_zeros(batch, steps + 2, width)
    ids[:, 1 : steps + 1] = char_ids
    ids[:, 0] = torch.tensor(BOS_IDS, device=char_ids.device)
    ids[torch.arange(batch, device=char_ids.device), lengths + 1] = torch.tensor(EOS_IDS, device=char_ids.device)
    mask = torch.arange(steps + 2, device=char_ids.device).unsqueeze(0) < (lengths + 2).unsqueeze(1)
    return ids, mask


class BiLM(nn.Module):
    """The ELMo bidirectional language model (without the softmax, which only training needs)."""

    def __init__(self, config: BiLMConfig, dropout: float = 0.0):
        super().__init__()
        self.config = config
        self.char_cnn = CharCNN(config.char_cnn, config.lstm.projection_dim)
        self.lstm = BiLSTM(config.lstm, dropout)

    def forward(self, char_ids: torch.Tensor, state: LSTMState | None = None, return_state: bool = False) -> BiLMOutput:
        """All biLM layers for a batch.

        Args:
            char_ids: LongTensor (B, T, 50) from ``batch_to_ids`` (no boundaries: they are added here).
            state: carried LSTM state for the B rows (stateful use), or None for zeros.
            return_state: return the state after each row's ``</S>`` (forward) and ``<S>`` (backward).

        Returns:
            BiLMOutput with activations (B, T + 2, 2P) per layer, float32 unless the model was cast.
        """
        ids, mask = add_sentence_boundaries(char_ids)
        # Each distinct token goes through the char CNN once: in running text most tokens repeat
        # within a batch, and the CNN costs about as much as the LSTMs per token.
        unique, inverse = torch.unique(ids.reshape(-1, ids.shape[-1]), dim=0, return_inverse=True)
        tokens = self.char_cnn(unique)[inverse].reshape(*ids.shape[:2], -1)  # (B, T + 2, P)
        keep = mask.unsqueeze(-1).to(tokens.dtype)
        layer0 = torch.cat([tokens, tokens], dim=-1) * keep
        lstm_out, new_state = self.lstm(tokens, mask, state, return_state)
        return BiLMOutput([layer0, *lstm_out], mask, new_state)

    def num_parameters(self) -> int:
        """Parameters of the biLM (char CNN + biLSTM), as counted for the published models."""
        return sum(p.numel() for p in self.parameters()) - self.char_cnn.char_embedding.embedding_dim

"""Layer 0: the context-free token representation (character CNN, highway layers, projection).

Dims: N tokens, W = 50 character slots, E char embedding size, NF total filters, P projection size.
Source: Peters et al. 2018 section 3.4; ELMO_SPEC.md sections 3-5 (bilm-tf ``_build_word_char_embeddings``).
"""
from __future__ import annotations

import torch
from torch import nn

from .config import CharCNNConfig


class Highway(nn.Module):
    """One highway layer in the TensorFlow form used by bilm-tf.

    ``t = sigmoid(x W_carry + b_carry)``, ``g = relu(x W_transform + b_transform)``,
    ``y = t * g + (1 - t) * x``. The gate named "carry" gates the transformed branch, and the
    nonlinearity is always ReLU whatever ``char_cnn.activation`` says (ELMO_SPEC.md section 4).
    """

    def __init__(self, size: int):
        super().__init__()
        self.carry = nn.Linear(size, size)
        self.transform = nn.Linear(size, size)
        nn.init.constant_(self.carry.bias, -2.0)  # bilm-tf init: start close to the identity

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = torch.sigmoid(self.carry(x))
        return t * torch.relu(self.transform(x)) + (1.0 - t) * x


class CharCNN(nn.Module):
    """Character CNN + highway + projection.

    Args:
        config: the ``char_cnn`` block of options.json.
        projection_dim: P, the biLM's LSTM input size.
    """

    def __init__(self, config: CharCNNConfig, projection_dim: int):
        super().__init__()
        self.config = config
        # Row 0 is the padded-token row and stays zero (padding_idx keeps it out of training too).
        self.char_embedding = nn.Embedding(262, config.embedding_dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(config.embedding_dim, count, width) for width, count in config.filters)
        nf = config.n_filters
        self.highways = nn.ModuleList(Highway(nf) for _ in range(config.n_highway))
        # bilm-tf only creates CNN_proj when NF != P.
        self.projection = nn.Linear(nf, projection_dim) if nf != projection_dim else None
        self._activation = torch.relu if config.activation == "relu" else torch.tanh

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Token vectors from character ids.

        Args:
            char_ids: LongTensor (..., 50) of model-facing ids 0..261.

        Returns:
            FloatTensor (..., P). A token of all-zero ids still gets a (non-zero) vector;
            callers mask padded positions.
        """
        lead = char_ids.shape[:-1]
        x = self.char_embedding(char_ids.reshape(-1, char_ids.shape[-1]))  # (N, W, E)
        x = x.transpose(1, 2)  # (N, E, W)
        # Max over all 50 positions (char padding included, unmasked), then the activation.
        pooled = [conv(x).amax(dim=-1) for conv in self.convs]
        h = self._activation(torch.cat(pooled, dim=-1))  # (N, NF)
        for highway in self.highways:
            h = highway(h)
        if self.projection is not None:
            h = self.projection(h)
        return h.reshape(*lead, h.shape[-1])

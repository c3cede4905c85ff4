"""Scalar mix and the downstream ``Elmo`` module: ELMo_k = gamma_k * sum_j s_kj * h_j, s_k = softmax(w_k).

Dims: B sentences, T tokens, D = 2P, L + 1 layers.
Source: Peters et al. 2018 equation (1) and section 3.3; ELMO_SPEC.md section 10 (AllenNLP ``ScalarMix``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from elmo_core.model.bilm import BiLM


class ScalarMix(nn.Module):
    """gamma * sum_j softmax(w)_j * h_j over the L + 1 biLM layers.

    Args:
        num_layers: L + 1.
        do_layer_norm: normalise each layer first with ONE mean and variance over all unmasked
            (batch, time, feature) elements (AllenNLP's whole-tensor statistics, eps 1e-13), not per token.
        initial_w: starting raw weights w (default zeros, i.e. s_j = 1/(L+1)); gamma starts at 1.
        trainable: whether w and gamma receive gradients.
    """

    def __init__(
        self,
        num_layers: int,
        do_layer_norm: bool = False,
        initial_w: Sequence[float] | None = None,
        initial_gamma: float = 1.0,
        trainable: bool = True,
    ):
        super().__init__()
        w = torch.zeros(num_layers) if initial_w is None else torch.as_tensor(initial_w, dtype=torch.float32)
        if w.shape != (num_layers,):
            raise ValueError(f"initial_w has {w.numel()} values but the biLM has {num_layers} layers")
        self.w = nn.Parameter(w.clone(), requires_grad=trainable)
        self.gamma = nn.Parameter(torch.tensor(float(initial_gamma)), requires_grad=trainable)
        self.do_layer_norm = do_layer_norm
        self.num_layers = num_layers

    @property
    def s(self) -> torch.Tensor:
        """Layer weights s = softmax(w), shape (L + 1,), summing to 1."""
        return torch.softmax(self.w, dim=0)

    def forward(self, layers: Sequence[torch.Tensor] | torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Mix the layers.

        Args:
            layers: L + 1 tensors (..., D), or one tensor (L + 1, ..., D).
            mask: (...) bool, required with ``do_layer_norm``.

        Returns:
            (..., D) tensor of the layers' dtype.

        Raises:
            ValueError: wrong number of layers, or layer norm without a mask.
        """
        if len(layers) != self.num_layers:
            raise ValueError(f"ScalarMix expects {self.num_layers} layers, got {len(layers)}")
        s = self.s
        mixed = 0
        for j, h in enumerate(layers):
            if self.do_layer_norm:
                if mask is None:
                    raise ValueError("do_layer_norm needs the mask of real positions")
                h = whole_tensor_norm(h, mask)
            mixed = mixed + s[j] * h
        return self.gamma * mixed

    def regularization(self, coef: float = 0.001) -> torch.Tensor:
        """lambda * ||w||^2, the paper's regulariser on the layer weights (bilm-tf ``l2_coef`` 0.001)."""
        return coef * (self.w**2).sum()


def whole_tensor_norm(h: torch.Tensor, mask: torch.Tensor, eps: float = 1e-13) -> torch.Tensor:
    """(h - mean) / sqrt(var + eps) with one mean and variance over all unmasked elements of h.

    Args: h (..., D), mask (...) bool. Returns a tensor shaped like h.
    """
    m = mask.unsqueeze(-1).to(h.dtype)
    count = m.sum() * h.shape[-1]
    mean = (h * m).sum() / count
    var = (((h - mean) * m) ** 2).sum() / count
    return (h - mean) / torch.sqrt(var + eps)


@dataclass
class ElmoOutput:
    """representations: K tensors (B, T, 2P) (boundaries removed unless kept); mask (B, T) bool."""

    representations: list[torch.Tensor]
    mask: torch.Tensor


class Elmo(nn.Module):
    """ELMo as a downstream model attaches it: a frozen biLM and K trainable scalar mixes.

    Args:
        bilm: the pretrained biLM (its parameters are frozen here).
        num_output_representations: K, e.g. 2 to add ELMo at both the input and the output of a task RNN.
        dropout: applied to each mixed representation (AllenNLP's default is 0.5).
        do_layer_norm: see ``ScalarMix``.
        keep_sentence_boundaries: keep the ``<S>``/``</S>`` positions in the output.

    Only the mixes' w and gamma require grad; the biLM always runs statelessly in eval mode.
    Source: Peters et al. 2018 section 3.3; AllenNLP ``Elmo``.
    """

    def __init__(
        self,
        bilm: BiLM,
        num_output_representations: int = 1,
        dropout: float = 0.5,
        do_layer_norm: bool = False,
        keep_sentence_boundaries: bool = False,
    ):
        super().__init__()
        self.bilm = bilm
        for p in self.bilm.parameters():
            p.requires_grad_(False)
        n = bilm.config.num_layers
        self.scalar_mixes = nn.ModuleList(ScalarMix(n, do_layer_norm) for _ in range(num_output_representations))
        self.dropout = nn.Dropout(dropout)
        self.keep_sentence_boundaries = keep_sentence_boundaries

    def train(self, mode: bool = True) -> Elmo:
        super().train(mode)
        self.bilm.eval()  # frozen: never biLM dropout or training behaviour
        return self

    def forward(self, char_ids: torch.Tensor) -> ElmoOutput:
        """Args: char_ids LongTensor (B, T, 50) from ``batch_to_ids``. Returns ElmoOutput."""
        with torch.no_grad():
            out = self.bilm(char_ids)
        layers, mask = out.activations, out.mask
        if not self.keep_sentence_boundaries:
            layers = [remove_sentence_boundaries(h, mask) for h in layers]
            mask = torch.arange(mask.shape[1] - 2, device=mask.device).unsqueeze(0) < (mask.sum(1, keepdim=True) - 2)
        reps = [self.dropout(mix(layers, mask)) for mix in self.scalar_mixes]
        return ElmoOutput(reps, mask)

    def regularization(self, coef: float = 0.001) -> torch.Tensor:
        """Sum of lambda * ||w_k||^2 over the K mixes; add it to the task loss."""
        return sum(mix.regularization(coef) for mix in self.scalar_mixes)


def remove_sentence_boundaries(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Drop ``<S>``/``</S>``: (B, T + 2, D) -> (B, T, D), zeros after each sentence's last token."""
    lengths = mask.sum(dim=1) - 2
    out = h[:, 1:-1].clone()
    keep = torch.arange(out.shape[1], device=h.device).unsqueeze(0) < lengths.unsqueeze(1)
    return out * keep.unsqueeze(-1).to(h.dtype)

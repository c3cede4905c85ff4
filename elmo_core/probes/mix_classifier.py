"""The scalar mix trained jointly with a linear classifier, as the probes learn each task's layer weights s.

Dims: N items or tokens, L + 1 layers, D = 2P, C classes.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from elmo_core.model.mix import ScalarMix
from elmo_core.probes.task import Progress


class MixClassifier(nn.Module):
    """ELMo scalar mix followed by a linear layer: logits = Linear(gamma * sum_j s_j (h_j - mu_j) W).

    mu_j (per layer and dimension) and W (D, D; one whitening matrix shared by all layers) are fixed
    training-set statistics. Because the mix is linear, sum_j s_j (h_j - mu_j) W = (sum_j s_j h_j) W - const:
    the offset goes into the classifier's bias and W into its weights, so the model is still a linear
    classifier on the raw ELMo mix and s means what it means in the explorer; only the optimisation is
    better conditioned.

    Args: num_layers L + 1; dim D; num_classes C.
    forward(h (N, L + 1, D) float32, allowed (N, C) bool or None) -> logits (N, C); classes not allowed
    for an item get -inf (WSD: only the senses its lemma has in training).
    Source: Peters et al. 2018 equation (1) and section 5.3 (a linear classifier over the representation).
    """

    def __init__(self, num_layers: int, dim: int, num_classes: int):
        super().__init__()
        self.mix = ScalarMix(num_layers, do_layer_norm=False)
        self.linear = nn.Linear(dim, num_classes)
        self.register_buffer("offset", torch.zeros(num_layers, dim))
        self.register_buffer("whiten", torch.eye(dim))

    def forward(self, h: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        h = (h - self.offset) @ self.whiten  # (N, L + 1, D)
        logits = self.linear(self.mix(h.unbind(dim=1)))  # (N, C)
        if allowed is not None:
            logits = logits.masked_fill(~allowed, float("-inf"))
        return logits


def train_mix_classifier(
    features: np.ndarray,
    labels: np.ndarray,
    num_classes: int,
    allowed: np.ndarray | None = None,
    epochs: int = 8,
    lr: float = 5e-3,
    coef: float = 0.001,
    batch_size: int = 256,
    seed: int = 0,
    progress: Progress | None = None,
) -> MixClassifier:
    """Train the scalar mix (w, gamma) and a linear classifier jointly with Adam.

    Loss = cross-entropy + coef * ||w||^2 (the paper's regulariser, bilm-tf ``l2_coef``).

    Args:
        features: float32 (N, L + 1, D) layer activations of the items.
        labels: int (N,) class ids in [0, C).
        allowed: optional bool (N, C) candidate classes per item (must include the item's label).
    Returns: the trained MixClassifier in eval mode; ``.mix.s`` are the learned layer weights.
    Raises: ValueError on mismatched shapes or an empty training set.
    """
    if len(features) == 0 or len(features) != len(labels):
        raise ValueError(f"need as many labels as feature rows, got {len(features)} and {len(labels)}")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))
    y = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    ok = None if allowed is None else torch.from_numpy(np.asarray(allowed, dtype=bool))
    model = MixClassifier(x.shape[1], x.shape[2], num_classes)
    model.offset.copy_(x.mean(dim=0))
    model.whiten.copy_(_whitening(x - model.offset))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    steps = epochs * ((len(x) + batch_size - 1) // batch_size)
    step = 0
    model.train()
    for _ in range(epochs):
        for batch in torch.randperm(len(x), generator=gen).split(batch_size):
            logits = model(x[batch], None if ok is None else ok[batch])
            loss = nn.functional.cross_entropy(logits, y[batch]) + model.mix.regularization(coef)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if progress and step % 20 == 0:
                progress(step / steps, f"training the scalar mix: step {step}/{steps}")
    return model.eval()


def _whitening(centred: torch.Tensor, eps: float = 1e-3) -> torch.Tensor:
    """(D, D) matrix W with cov(x W) ~= I for the rows of all layers pooled; eps (relative to the largest
    eigenvalue) keeps near-empty directions from blowing up."""
    flat = centred.reshape(-1, centred.shape[-1]).double()
    cov = flat.T @ flat / max(len(flat) - 1, 1)
    values, vectors = torch.linalg.eigh(cov)
    values = values.clamp_min(0) + eps * float(values.max().clamp_min(1e-12))
    return (vectors / values.sqrt()).float()


def mix_summary(model: MixClassifier) -> dict:
    """{"s": the learned s (L + 1, sums to 1), "w": the raw weights, "gamma"} of a trained model."""
    s = model.mix.s.detach().double()
    s = (s / s.sum()).tolist()  # renormalised in float64 so the stored values sum to 1 exactly enough
    return {"s": s, "w": model.mix.w.detach().tolist(), "gamma": float(model.mix.gamma.detach())}


def layer_scale(features: np.ndarray) -> list[float]:
    """Mean L2 norm of each layer's vectors (the mix acts on raw layers, so their scales matter for s)."""
    return [round(float(v), 3) for v in np.linalg.norm(features, axis=-1).mean(axis=0)]

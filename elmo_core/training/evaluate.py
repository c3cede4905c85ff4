"""Evaluation of a biLM beyond the probes: held-out perplexity, and the identity of a model that result files
record (``model_info``, ``model_fingerprint``).

The ``evaluate`` command (``elmo_core.cli.evaluate``) runs the leave-one-out sense probe
(``elmo_core.probes.loo_sense``) on three sense sets and ``heldout_perplexity`` on the corpus's test split.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch and the training modules load on first use: probes import this module for model_info
    import torch

    from elmo_core.data.vocab import Vocabulary
    from elmo_core.training.lm import BiLanguageModel


# ---- model identity ---------------------------------------------------------------------------------------
def model_fingerprint(embedder) -> str:
    """A short hash of the biLM's parameter names, shapes and first values: the same for every load of the
    same weights, different for another model. Used to match precomputed probe results to a model."""
    h = hashlib.sha1()
    for name, tensor in embedder.bilm.state_dict().items():
        h.update(f"{name}{tuple(tensor.shape)}".encode())
        h.update(tensor.detach().flatten()[:64].float().cpu().numpy().round(5).tobytes())
    return h.hexdigest()[:16]


def model_info(embedder) -> dict:
    """{"name", "num_parameters", "dim", "num_layers", "fingerprint"} for result files."""
    return {
        "name": embedder.name,
        "num_parameters": int(embedder.num_parameters),
        "dim": int(embedder.dim),
        "num_layers": int(embedder.num_layers),
        "fingerprint": model_fingerprint(embedder),
    }


# ---- perplexity -------------------------------------------------------------------------------------------
def perplexity(
    model: BiLanguageModel,
    sentences: list[list[str]],
    vocab: Vocabulary,
    batch_size: int = 64,
    device: torch.device | None = None,
) -> dict[str, float]:
    """Held-out forward and backward perplexity (exp of mean NLL per predicted token, ``</S>``/``<S>`` included).

    Returns: {"forward": ppl, "backward": ppl, "average": mean of the two ppls, "tokens": predictions per direction}.
    """
    import torch

    from elmo_core.training.batches import make_batch

    was_training = model.training
    model.eval()
    device = device or next(model.parameters()).device
    fwd = bwd = 0.0
    tokens = 0
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            batch = [sentences[i] for i in order[start : start + batch_size]]
            char_ids, words = make_batch(batch, vocab)
            loss = model(char_ids.to(device), words.to(device))
            fwd += float(loss.forward_nll)
            bwd += float(loss.backward_nll)
            tokens += loss.tokens
    model.train(was_training)
    f, b = math.exp(fwd / max(tokens, 1)), math.exp(bwd / max(tokens, 1))
    return {"forward": f, "backward": b, "average": (f + b) / 2, "tokens": tokens}


def heldout_perplexity(checkpoint_dir: str | Path, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> dict:
    """Forward/backward perplexity of a checkpoint's language model (biLM + softmax + vocabulary).

    Args: checkpoint_dir with options.json, model.safetensors, softmax.safetensors, vocab.txt;
        sentences: tokenized held-out sentences.
    Returns: {"forward", "backward", "average", "tokens"} (see ``perplexity``).
    Raises: FileNotFoundError when the softmax or the vocabulary is missing.
    Source: Peters et al. 2018 section 3.4 (average of forward and backward perplexity).
    """
    from elmo_core.training.checkpoints import load_language_model

    model, vocab = load_language_model(checkpoint_dir)
    return perplexity(model, [list(s) for s in sentences], vocab, batch_size=batch_size)

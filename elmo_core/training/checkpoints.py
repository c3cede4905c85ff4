"""What a run writes and starts from: the resumable training state (safetensors + JSON, never pickle), the
exported language model (biLM, softmax, vocabulary) and the weights ``init_from`` names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from elmo_core.data.vocab import Vocabulary
from elmo_core.model.strict_json import loads_strict
from elmo_core.model.weights import save_checkpoint
from elmo_core.training.lm import BiLanguageModel


def save_training_state(
    path: Path, model: BiLanguageModel, optimizer: torch.optim.Optimizer, meta: dict[str, Any]
) -> None:
    """Write ``path`` (a folder): model.safetensors (the language model's state), state.safetensors (Adam's
    moments, torch's RNG state) and meta.json (``meta`` and the optimizer's param_groups). The new folder
    replaces an older one only once it is complete."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, str(tmp / "model.safetensors"))
    opt = optimizer.state_dict()
    tensors = {"rng.torch": torch.get_rng_state()}
    for idx, state in opt["state"].items():
        for key, value in state.items():
            tensors[f"opt.{idx}.{key}"] = torch.as_tensor(value).detach().cpu().contiguous()
    save_file(tensors, str(tmp / "state.safetensors"))
    (tmp / "meta.json").write_text(json.dumps({**meta, "param_groups": opt["param_groups"]}, indent=1))
    # Swap in atomically-ish so a crash mid-save never leaves a half checkpoint as the only one.
    old = path.with_name(path.name + ".old")
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    if old.exists():
        for f in old.iterdir():
            f.unlink()
        old.rmdir()


def load_training_state(path: Path, model: BiLanguageModel, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore what ``save_training_state`` wrote into ``model``, ``optimizer`` and torch's RNG; returns the
    run's meta (step, epoch, batch_in_epoch, tokens_seen, train_seconds, cpu_seconds, best_dev)."""
    model.load_state_dict(load_file(str(path / "model.safetensors")))
    tensors = load_file(str(path / "state.safetensors"))
    meta = loads_strict((path / "meta.json").read_text(), str(path / "meta.json"), constants=True)
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith("opt."):
            _, idx, name = key.split(".", 2)
            state.setdefault(int(idx), {})[name] = value
    optimizer.load_state_dict({"state": state, "param_groups": meta.pop("param_groups")})
    torch.set_rng_state(tensors["rng.torch"])
    return meta


def export_model(model: BiLanguageModel, vocab: Vocabulary, directory: Path, dtype=torch.float32) -> None:
    """Write the inference files: options.json + model.safetensors (biLM), softmax.safetensors, vocab.txt."""
    save_checkpoint(model.bilm, directory, dtype)
    save_file(
        {k: v.detach().to(dtype).cpu().contiguous() for k, v in model.softmax.state_dict().items()},
        str(directory / "softmax.safetensors"),
        metadata={"cutoffs": json.dumps(model.softmax.cutoffs[:-1])},
    )
    vocab.save(directory / "vocab.txt")


def load_language_model(directory: str | Path) -> tuple[BiLanguageModel, Vocabulary]:
    """Load an exported biLM together with its softmax and vocabulary (for perplexity).

    Raises: FileNotFoundError if softmax.safetensors or vocab.txt is missing.
    """
    from safetensors import safe_open

    from elmo_core.model.weights import load_checkpoint

    directory = Path(directory)
    for name in ("softmax.safetensors", "vocab.txt"):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory}: no {name}; perplexity needs the softmax and vocabulary")
    vocab = Vocabulary.load(directory / "vocab.txt")
    with safe_open(str(directory / "softmax.safetensors"), "pt") as f:
        cutoffs = loads_strict(f.metadata()["cutoffs"], f"{directory / 'softmax.safetensors'}: cutoffs")
    model = BiLanguageModel(load_checkpoint(directory), len(vocab), dropout=0.0, cutoffs=cutoffs)
    model.softmax.load_state_dict({k: v.float() for k, v in load_file(str(directory / "softmax.safetensors")).items()})
    return model.eval(), vocab


def start_state(init: Path) -> dict:
    """The language model's weights to start from (``init_from``), float32, keyed as ``BiLanguageModel``'s:
    a run's checkpoint as it is, or a shipped model's biLM and softmax (stored float16) under "bilm." and
    "softmax.". Raises: FileNotFoundError when the folder is neither."""
    if (init / "checkpoint" / "model.safetensors").is_file():
        return load_file(str(init / "checkpoint" / "model.safetensors"))
    if (init / "model.safetensors").is_file() and (init / "softmax.safetensors").is_file():
        state = {f"bilm.{k}": v.float() for k, v in load_file(str(init / "model.safetensors")).items()}
        state.update({f"softmax.{k}": v.float() for k, v in load_file(str(init / "softmax.safetensors")).items()})
        return state
    raise FileNotFoundError(
        f"init_from {init}: neither a run folder (checkpoint/model.safetensors) nor a shipped "
        "model folder (model.safetensors + softmax.safetensors)"
    )

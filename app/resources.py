"""Everything the explorer keeps between reruns and sessions: models, activations, reference corpus.

This is the only module that uses ``st.cache_resource`` / ``st.cache_data``.

Configuration (environment variables; Streamlit's config.toml cannot hold app-specific sections):
    ELMO_EXPLORER_OPTIONS + ELMO_EXPLORER_WEIGHTS   published-format model to use instead of the default
    ELMO_EXPLORER_CHECKPOINT                        our format (dir with options.json + model.safetensors)
    ELMO_EXPLORER_DEVICE                            "cpu", "cuda", ... (default: GPU when there is one)
    ELMO_EXPLORER_REFERENCE                         reference sentences, one per line, already tokenized
                                                    (tokens separated by spaces)
                                                    (default assets/reference_sentences.txt)
    ELMO_EXPLORER_ALLOW_SERVER_PATHS=1              allow loading weights from paths on the server
    ELMO_EXPLORER_UMAP_WARMUP=0                     do not compile UMAP in the background (tests)
    ELMO_EXPLORER_CACHE_MB                          activation cache size (default 512 MB)
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from app.explore import ActivationCache, ParsedInput, UmapWarmUp, parse_input, word_forms

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_OPTIONS = ROOT / "tests" / "fixtures" / "allennlp-elmo" / "options.json"
FIXTURE_WEIGHTS = ROOT / "tests" / "fixtures" / "allennlp-elmo" / "lm_weights.hdf5"
DEFAULT_REFERENCE = ROOT / "assets" / "reference_sentences.txt"
MAX_REFERENCE_SENTENCES = 40  # reference sentences embedded per target word (first view stays under ~3 s on 2 cores)


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in ("1", "true", "yes", "on")


def allow_server_paths() -> bool:
    return env_flag("ELMO_EXPLORER_ALLOW_SERVER_PATHS")


def _device() -> str | None:
    return os.environ.get("ELMO_EXPLORER_DEVICE") or None


# ---- models ---------------------------------------------------------------------------------------------
@dataclass
class LoadedModel:
    key: str  # id used in the activation cache and session state
    embedder: object  # elmo_core.Embedder
    source: str  # where it came from, for the model panel
    warning: str = ""  # e.g. the fallback to the tiny test model


class ModelRegistry:
    """The startup model plus up to ``max_user_models`` user-loaded ones, shared by all sessions."""

    def __init__(self, max_user_models: int = 2):
        self.max_user_models = max_user_models
        self._models: OrderedDict[str, LoadedModel] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> LoadedModel | None:
        with self._lock:
            return self._models.get(key)

    def add(self, model: LoadedModel) -> None:
        with self._lock:
            self._models[model.key] = model
            self._models.move_to_end(model.key)
            while len(self._models) > self.max_user_models:
                self._models.popitem(last=False)


@st.cache_resource(show_spinner="Loading the biLM…")
def startup_model() -> LoadedModel:
    """The model every session starts with: env-configured files, else the shipped default, else (with a
    visible warning) the tiny test model."""
    from elmo_core import Embedder
    opts, weights = os.environ.get("ELMO_EXPLORER_OPTIONS"), os.environ.get("ELMO_EXPLORER_WEIGHTS")
    ckpt = os.environ.get("ELMO_EXPLORER_CHECKPOINT")
    if opts and weights:
        e = Embedder.from_elmo_files(opts, weights, device=_device())
        return LoadedModel("startup:" + _digest(f"{opts}|{weights}"), e, f"{Path(weights).name} (set by environment)")
    if ckpt:
        e = Embedder.from_checkpoint(ckpt, device=_device())
        return LoadedModel("startup:" + _digest(ckpt), e, f"{Path(ckpt).name} (set by environment)")
    try:
        e = Embedder.default(device=_device())
        return LoadedModel("default", e, "default model shipped in assets/default")
    except Exception as err:  # missing assets during development: say so loudly, keep the app usable
        e = Embedder.from_elmo_files(FIXTURE_OPTIONS, FIXTURE_WEIGHTS, device=_device())
        return LoadedModel("fixture", e, "tiny AllenNLP test model (tests/fixtures)",
                           warning=f"The default model could not be loaded ({err}). Using the tiny test model: "
                                   "its vectors are not meaningful.")


@st.cache_resource
def model_registry() -> ModelRegistry:
    return ModelRegistry()


def _digest(data: str | bytes) -> str:
    return hashlib.sha1(data.encode() if isinstance(data, str) else data).hexdigest()[:12]


@st.cache_resource
def _upload_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="elmo-explorer-uploads-"))


def load_uploaded_model(options_bytes: bytes, weights_bytes: bytes, weights_name: str) -> LoadedModel:
    """Load a user's model from uploaded bytes: published ELMo (options.json + .hdf5) or ours
    (options.json + .safetensors). Raises on a bad file; the caller keeps the previous model."""
    from elmo_core import Embedder
    key = "upload:" + _digest(_digest(options_bytes) + _digest(weights_bytes))
    known = model_registry().get(key)
    if known is not None:
        return known
    folder = _upload_dir() / key.split(":")[1]
    folder.mkdir(parents=True, exist_ok=True)
    safe_name = re.sub(r"[^A-Za-z0-9._-]", "_", weights_name)[:100] or "weights"
    (folder / "options.json").write_bytes(options_bytes)
    try:
        if safe_name.endswith(".safetensors"):
            (folder / "model.safetensors").write_bytes(weights_bytes)
            e = Embedder.from_checkpoint(folder, device=_device())
        else:
            (folder / safe_name).write_bytes(weights_bytes)
            e = Embedder.from_elmo_files(folder / "options.json", folder / safe_name, device=_device())
    except Exception as err:  # name the user's file, not our temporary folder
        message = str(err)
        for internal in (str(folder / "model.safetensors"), str(folder / safe_name), str(folder / "options.json"),
                         str(folder), folder.name):
            message = message.replace(internal, weights_name)
        if message.startswith(weights_name):
            message = message[len(weights_name):].lstrip(":; ")
        raise ValueError(f"{weights_name} (with the uploaded options.json): {message}") from err
    e.name = weights_name
    model = LoadedModel(key, e, f"uploaded: {weights_name}")
    model_registry().add(model)
    return model


def load_server_model(options_path: str, weights_path: str) -> LoadedModel:
    """Load from paths on the server; only call when ``allow_server_paths()``."""
    from elmo_core import Embedder
    if not allow_server_paths():
        raise PermissionError("reading weights from server paths is disabled")
    key = "path:" + _digest(f"{options_path}|{weights_path}")
    known = model_registry().get(key)
    if known is not None:
        return known
    if weights_path.endswith(".safetensors") or Path(weights_path).is_dir():
        folder = Path(weights_path) if Path(weights_path).is_dir() else Path(weights_path).parent
        e = Embedder.from_checkpoint(folder, device=_device())
    else:
        e = Embedder.from_elmo_files(options_path, weights_path, device=_device())
    model = LoadedModel(key, e, f"server path: {weights_path}")
    model_registry().add(model)
    return model


def current_model(key: str | None) -> tuple[LoadedModel, str]:
    """The model for a session's key, and a note when it had to fall back to the startup model."""
    start = startup_model()
    if key in (None, start.key):
        return start, ""
    found = model_registry().get(key)
    if found is None:
        return start, "The model you loaded earlier is no longer in memory; back to the startup model."
    return found, ""


def device_description(embedder) -> str:
    device = embedder.device
    if device.type == "cuda":
        import torch
        try:
            return f"GPU: {torch.cuda.get_device_name(device)} ({device})"
        except Exception:
            return f"GPU ({device})"
    return "CPU"


# ---- input ----------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=32)
def parse_sentences(text: str) -> ParsedInput:
    """``explore.parse_input`` with the Moses tokenizer, cached per text (tokenizing 500 lines takes a while)."""
    return parse_input(text)


# ---- activations ----------------------------------------------------------------------------------------
@st.cache_resource
def activation_cache() -> ActivationCache:
    mb = int(os.environ.get("ELMO_EXPLORER_CACHE_MB", "512"))
    return ActivationCache(max_bytes=mb * 2**20)


def embed(model: LoadedModel, token_lists, progress=None) -> tuple[list[np.ndarray], int]:
    """Activations (L + 1, n_i, D) per sentence from the shared cache; only new sentences run the biLM."""
    return activation_cache().get_many(model.key, model.embedder.embed_batch, token_lists, progress=progress)


# ---- UMAP warm-up ---------------------------------------------------------------------------------------
@st.cache_resource
def umap_warm_up() -> UmapWarmUp:
    """Started once per server process, in a background thread, so the first user does not wait for numba."""
    warm = UmapWarmUp()
    if env_flag("ELMO_EXPLORER_UMAP_WARMUP", True):
        warm.start()
    return warm


# ---- reference corpus -----------------------------------------------------------------------------------
def reference_path() -> Path:
    return Path(os.environ.get("ELMO_EXPLORER_REFERENCE", DEFAULT_REFERENCE))


@st.cache_data(show_spinner=False, max_entries=4)
def _reference_lines(path: str, mtime: float) -> list[str]:
    with open(path, encoding="utf-8", errors="replace") as f:
        return [" ".join(line.split()) for line in f if line.strip()]


def reference_available() -> bool:
    return reference_path().is_file()


def reference_size() -> int:
    p = reference_path()
    return len(_reference_lines(str(p), p.stat().st_mtime)) if p.is_file() else 0


@st.cache_data(show_spinner=False, max_entries=256)
def reference_matches(path: str, mtime: float, word: str, inflections: bool,
                      limit: int = MAX_REFERENCE_SENTENCES) -> tuple[list[tuple[str, ...]], int]:
    """Tokenized reference sentences that contain the word (at most ``limit``, spread evenly over the
    corpus), and how many sentences contain it in all (by a whole-word text search).

    The reference file is stored already tokenized (space-separated Moses tokens), so lines are split on
    whitespace; tokenizing them again would break tokens such as "'s" into "' s"."""
    forms = word_forms(word, inflections)
    if not word.strip():
        return [], 0
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
    candidates = [line for line in _reference_lines(path, mtime) if pattern.search(line)]
    total = len(candidates)
    if total > 2 * limit:  # keep only an even spread of the candidates
        picks = np.linspace(0, total - 1, 2 * limit).round().astype(int)
        candidates = [candidates[i] for i in picks]
    hits = [tuple(toks[:100]) for toks in (line.split() for line in candidates) if any(t.casefold() in forms for t in toks[:100])]
    if len(hits) > limit:
        picks = np.linspace(0, len(hits) - 1, limit).round().astype(int)
        hits = [hits[i] for i in picks]
    return hits, total


def reference_for_word(word: str, inflections: bool) -> tuple[list[tuple[str, ...]], int]:
    p = reference_path()
    if not p.is_file():
        return [], 0
    return reference_matches(str(p), p.stat().st_mtime, word, inflections)

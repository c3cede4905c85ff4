"""The models that need no user's memory: the server's startup model, the bundled ones, and the loader of a cached
published model (``LoadedModel``: what the app keeps of a model)."""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from app.serving.settings import device
from elmo_core import (
    BUNDLED_MODELS,
    PUBLISHED,
    CacheEntry,
    Embedder,
    cache_entry,
    cached_files,
    download_command,
    load_bilm_from_elmo_files,
    load_embedder,
    mismatch_note,
)

log = logging.getLogger(__name__)


@dataclass
class LoadedModel:
    """A model the app serves: ``key`` identifies it in the activation cache and the model registry ("default",
    "startup:…", "bundled:NAME", "published:NAME", "upload:…", "path:…")."""

    key: str
    embedder: object  # elmo_core.Embedder
    source: str  # where it came from, for the model panel
    warning: str = ""  # e.g. the fallback to the default model
    name: str = ""  # the name shown to this session (for an upload: this session's own file name)

    @property
    def display_name(self) -> str:
        return self.name or self.embedder.name


def digest(data: str | bytes) -> str:
    """12 hex digits of the SHA-1 of ``data`` (a str is UTF-8 encoded): a model key's suffix."""
    return hashlib.sha1(data.encode() if isinstance(data, str) else data).hexdigest()[:12]


@st.cache_resource(show_spinner="Loading the biLM…")
def startup_model() -> LoadedModel:
    """The model every session starts with: env-configured files, else the named model of
    ``ELMO_EXPLORER_MODEL`` (``named_startup``), else the shipped default.

    Raises: FileNotFoundError or ValueError when that model cannot be loaded (the page says so).
    """
    opts, weights = os.environ.get("ELMO_EXPLORER_OPTIONS"), os.environ.get("ELMO_EXPLORER_WEIGHTS")
    ckpt = os.environ.get("ELMO_EXPLORER_CHECKPOINT")
    named = (os.environ.get("ELMO_EXPLORER_MODEL") or "").strip()
    if named and (opts or weights or ckpt):
        raise ValueError(
            "set either ELMO_EXPLORER_MODEL or ELMO_EXPLORER_OPTIONS + ELMO_EXPLORER_WEIGHTS or "
            "ELMO_EXPLORER_CHECKPOINT, not several"
        )
    why = ""
    if named and named != "default":
        model, why = named_startup(named)
        if model is not None:
            return model
        log.warning("%s", why)
    e = load_embedder(opts, weights, ckpt, device=device())  # only one of options/weights set: an error
    if opts:
        return LoadedModel("startup:" + digest(f"{opts}|{weights}"), e, f"{Path(weights).name} (set by environment)")
    if ckpt:
        return LoadedModel("startup:" + digest(ckpt), e, f"{Path(ckpt).name} (set by environment)")
    return LoadedModel("default", e, "default model shipped in assets/default", warning=why)


def named_startup(name: str) -> tuple[LoadedModel | None, str]:
    """``ELMO_EXPLORER_MODEL``'s model: a bundled one, or a published one from the cache (never downloaded
    here). Returns (the model, "") or (None, why not: one line for the log and the page, naming the command
    that fixes it)."""
    said, fallback = f"ELMO_EXPLORER_MODEL={name}", "the server started on the default model"
    if name in BUNDLED_MODELS:
        try:
            return bundled_model(name), ""
        except (FileNotFoundError, ValueError) as err:
            return None, f"{said}: the bundled model could not be loaded ({err}); {fallback}."
    if name.lower() not in PUBLISHED:
        return None, (
            f"{said} is not a model name (bundled: {', '.join(BUNDLED_MODELS)}; published: "
            f"{', '.join(PUBLISHED)}); {fallback}."
        )
    entry = cache_entry(name)
    if entry.state != "cached":
        what = (
            "is not downloaded on this server"
            if entry.state == "missing"
            else f"is damaged in the cache ({entry.detail})"
        )
        fix = download_command(name) + (" --force" if entry.state == "damaged" else "")
        return None, (
            f"{said}: the published model “{entry.model.name}” {what}, so {fallback}. The operator can "
            f"run: {fix} (or make app MODEL={entry.model.name}), then restart it."
        )
    try:
        return load_cached_published(entry, None), ""
    except (FileNotFoundError, ValueError) as err:
        return None, f"{said}: the cached “{entry.model.name}” could not be loaded ({err}); {fallback}."


def startup_name() -> str | None:
    """The name the server's startup model goes by in the model panel and in links ("default", a bundled or a
    published model's name), or None when it was set by files (``ELMO_EXPLORER_OPTIONS``, ``..._CHECKPOINT``)
    or cannot be loaded."""
    try:
        key = startup_model().key
    except Exception:  # noqa: BLE001 - no startup model: the model panel says why
        return None
    if key == "default":
        return "default"
    kind, _, name = key.partition(":")
    return name if kind in ("bundled", "published") else None


@st.cache_resource(show_spinner="Loading the biLM…")
def bundled_model(name: str) -> LoadedModel:
    """A model shipped in assets/ other than the default (read-only, so one copy serves every session).

    Raises: KeyError for an unknown name; FileNotFoundError when its files are missing."""
    return LoadedModel(f"bundled:{name}", Embedder.bundled(name, device=device()), f"bundled model assets/{name}")


def bundled_choices() -> list[str]:
    """The bundled models whose files are there."""
    return [name for name, folder in BUNDLED_MODELS.items() if (folder / "model.safetensors").is_file()]


def published_source(entry: CacheEntry) -> str:
    """The model panel's line under a published model's name."""
    return f"published ELMo {entry.model.title} (AllenNLP), from this server's cache"


def load_cached_published(entry: CacheEntry, max_params: int | None) -> LoadedModel:
    """The published model of ``entry`` (``elmo_core.cache_entry``: the name resolved once by the caller), read
    from the cache (``max_params``: refuse larger ones; None: the library's default).

    Raises: FileNotFoundError (not cached), ValueError (damaged, over the budget, bad files)."""
    if entry.state != "cached":
        cached_files(entry.model.name)  # raises the library's message, with the command that fixes it
    bilm = load_bilm_from_elmo_files(entry.options, entry.weights, max_params)
    note = mismatch_note(entry) or ""
    return LoadedModel(
        f"published:{entry.model.name}",
        Embedder(bilm, device=device(), name=entry.model.name),
        published_source(entry),
        warning=note[:1].upper() + note[1:] + ("." if note else ""),
    )

"""The published AllenNLP models on this server: which are cached, loading one as a session's model (counted in
the server's memory for loaded models), and their background downloads (one ``Downloads`` per server process)."""

from __future__ import annotations

import streamlit as st

from app.serving.downloads import Downloads, DownloadState
from app.serving.limits import check_model_limits, max_parameters, model_registry, session_id
from app.serving.settings import allow_downloads, for_visitor
from app.serving.startup import LoadedModel, load_cached_published, published_source, startup_model
from elmo_core import PUBLISHED, BiLMConfig, CacheEntry, PublishedModel, cache_entry, download_command, published_model


def published_entries() -> dict[str, CacheEntry]:
    """{name: ``elmo_core.CacheEntry``} of every published model, as this server's cache holds it (read from the
    cache folder on every call: a few small files; a download in another process shows)."""
    return {name: cache_entry(name) for name in PUBLISHED}


def cached_published() -> list[str]:
    """The published models in this server's cache."""
    try:
        return [name for name, entry in published_entries().items() if entry.state == "cached"]
    except OSError:  # an unreadable cache folder: none
        return []


def unavailable_models() -> dict[str, str]:
    """{name: why a link cannot open it here}, for the published models that are not cached (the reason
    completes "The link asks for the model 'small', which ..."; the command that fixes it as a visitor may see it:
    ``settings.for_visitor``)."""
    try:
        entries = published_entries()
    except OSError:
        return {}
    button = "; or press Download under “Published ELMo models” in the sidebar" if allow_downloads() else ""
    out = {}
    for name, entry in entries.items():
        command = for_visitor(download_command(name))
        if entry.state == "missing":
            out[name] = f"is not downloaded on this server (the operator can run: {command}{button})"
        elif entry.state == "damaged":
            out[name] = f"is damaged in this server's cache (the operator can run: {command} --force{button})"
    return out


def published_caption(name: str) -> str:
    """What a published model is, in one line for the model panel (plain text). Raises: KeyError (unknown name)."""
    m = published_model(name)
    return f"AllenNLP's ELMo {m.title}: {m.architecture}; training data: {m.trained_on}."


def published_over_limits(m: PublishedModel) -> str:
    """Why this server cannot load the published model ``m`` for a session (its parameters over
    ``ELMO_EXPLORER_MAX_PARAMETERS``, its float32 weights over ``ELMO_EXPLORER_MODEL_MB``), or "" when it fits
    (other sessions' models may still leave no room at load time: ``ModelRegistry.reserve`` says so then)."""
    if m.parameters > max_parameters():
        return (
            f"Larger than this server allows for a loaded model ({m.parameters:,} parameters; the limit is "
            f"{max_parameters():,}, ELMO_EXPLORER_MAX_PARAMETERS)."
        )
    need, limit = 4 * m.parameters, model_registry().max_bytes
    if need > limit:
        return (
            f"Needs {need / 2**20:,.0f} MB, more than this server allows for a loaded model "
            f"({limit / 2**20:,.0f} MB, ELMO_EXPLORER_MODEL_MB)."
        )
    return ""


def load_published_model(name: str, session: str | None = None) -> LoadedModel:
    """A cached published model as this session's model: one copy in memory for every session that picks it,
    counted in the registry's memory for loaded models like an upload and reserved before it is read
    (``ELMO_EXPLORER_MODEL_MB``; refused over ``ELMO_EXPLORER_MAX_PARAMETERS`` or ``ELMO_EXPLORER_WORK_MB``:
    ``check_model_limits``). The startup model when it is that model. The name is resolved once
    (``elmo_core.cache_entry``) and that entry is what the load reads.

    Raises: KeyError (unknown name), FileNotFoundError (not cached), ValueError (damaged, over a limit:
    ``ModelBudgetError`` is one; the message says which and what to do)."""
    entry = cache_entry(name)
    key = f"published:{entry.model.name}"
    start = startup_model()
    if start.key == key:
        return start
    session = session or session_id()
    registry = model_registry()
    source = published_source(entry)
    known = registry.claim_known(session, key, entry.model.name, source)
    if known is not None:
        return known
    if entry.state != "cached":
        load_cached_published(entry, None)  # raises why (not downloaded, damaged) before anything is reserved
    nbytes = check_model_limits(BiLMConfig.from_options_json(entry.options))
    return registry.load(
        session, key, nbytes, lambda: load_cached_published(entry, max_parameters()), entry.model.name, source
    )


@st.cache_resource
def _downloads() -> Downloads:
    return Downloads()


def downloads() -> Downloads:
    """The server process's background downloads of published models (``app.serving.downloads``)."""
    return _downloads()


def start_download(name: str) -> DownloadState:
    """Download a published model in the background, or join the download of it that is running.
    Raises: PermissionError when the operator has not allowed downloads; KeyError for an unknown name."""
    if not allow_downloads():
        raise PermissionError(
            "downloading models from the page is off on this server (ELMO_EXPLORER_ALLOW_DOWNLOADS=1 turns it on)"
        )
    return downloads().start(published_model(name).name)

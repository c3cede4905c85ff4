"""Everything the explorer keeps between reruns and sessions: models, activations, reference corpus.

This is the only module that uses ``st.cache_resource`` / ``st.cache_data``.

Configuration (environment variables; Streamlit's config.toml cannot hold app-specific sections):
    ELMO_EXPLORER_OPTIONS + ELMO_EXPLORER_WEIGHTS   published-format model to use instead of the default
    ELMO_EXPLORER_CHECKPOINT                        our format (dir with options.json + model.safetensors)
    ELMO_EXPLORER_MODEL                             a named startup model instead: a bundled one ("default",
                                                    "lm-only") or a published one in the cache ("small",
                                                    "original", ...; never downloaded by the app itself: a
                                                    published name that is not cached starts on the default,
                                                    and the log and the page say why)
    ELMO_EXPLORER_DEVICE                            "cpu", "cuda", ... (default: GPU when there is one)
    ELMO_EXPLORER_REFERENCE                         the reference corpus folder (sentences.txt.xz + index.npz,
                                                    made by scripts/build_reference_corpus.py; default
                                                    assets/reference)
    ELMO_EXPLORER_TYPE_VECTORS=0                    no layer-0 vocabulary vectors (layer-0 neighbours come
                                                    from the input's own word types)
    ELMO_EXPLORER_TYPE_VOCAB                        vocabulary size for layer-0 neighbours (default 50000)
    ELMO_EXPLORER_TYPE_MODELS                       models whose vocabulary vectors are kept (default 3)
    ELMO_EXPLORER_ALLOW_SERVER_PATHS=1              allow loading weights from paths on the server
    ELMO_EXPLORER_ALLOW_DOWNLOADS=1                 a Download button for the published models that are not
                                                    cached (off by default: a class server should not fetch
                                                    374 MB because a student clicked)
    ELMO_CORE_CACHE, ELMO_CORE_BASE_URL             the published models' cache folder and mirror
                                                    (``elmo_core.model.published``)
    ELMO_EXPLORER_UMAP_WARMUP=0                     do not load UMAP in the background (tests; the first UMAP map
                                                    loads it)
    NUMBA_CACHE_DIR                                 numba's cache of UMAP's compiled code (default: <venv>/
                                                    numba-cache, which `make app` fills: ``explore.import_umap``)
    ELMO_EXPLORER_CACHE_MB                          activation cache size, all sessions (default 256 MB)
    ELMO_EXPLORER_MODEL_MB                          memory for user-loaded models, all sessions (default 1024 MB;
                                                    reserved before a load: ``app.serving.memory.ModelRegistry``)
    ELMO_EXPLORER_WORK_MB                           working memory of the biLM calls, all sessions (default 1024 MB;
                                                    a user's model whose page call needs more is refused:
                                                    ``app.serving.memory.WorkingMemory``)
    ELMO_EXPLORER_MODEL_IDLE_MIN                    a loaded model idle this long may make room for others (20)
    ELMO_EXPLORER_MAX_PARAMETERS                    largest model a user may load (default 200M parameters)
    ELMO_EXPLORER_WEIGHTS_UPLOAD_MB                 largest weights upload (default 1024 MB)
    ELMO_EXPLORER_SESSION_MB                        activations one session keeps for its sentences (96 MB)
"""
from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from app.serving.downloads import Downloads, DownloadState
from app.explore.activations import ActivationCache, TokenTable
from app.explore.inputs import ParsedInput, parse_input
from app.explore.projections import UmapWarmUp
from app.serving.memory import (MB, BoundedEmbedder, ModelBudgetError, ModelRegistry, WorkingMemory,  # noqa: F401 (re-exported)
                        config_model_bytes, model_bytes)
from app.render.safe import hide_paths, md
from app.serving.type_vectors import TypeVectors, TypeVectorStore
from elmo_core.model.embedder import Progress
from elmo_core.data.reference import INDEX_FILE, REFERENCE_DIR, ReferenceCorpus
from elmo_core.data.wordforms import word_forms

DEFAULT_REFERENCE = REFERENCE_DIR
log = logging.getLogger(__name__)
MAX_REFERENCE_SENTENCES = 60  # reference sentences embedded per word (benchmarks/type_vectors.py times it)


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in ("1", "true", "yes", "on")


def allow_server_paths() -> bool:
    return env_flag("ELMO_EXPLORER_ALLOW_SERVER_PATHS")


def allow_downloads() -> bool:
    """Whether the model panel may download a published model (``ELMO_EXPLORER_ALLOW_DOWNLOADS=1``)."""
    return env_flag("ELMO_EXPLORER_ALLOW_DOWNLOADS")


def _device() -> str | None:
    return os.environ.get("ELMO_EXPLORER_DEVICE") or None


# ---- models ---------------------------------------------------------------------------------------------
@dataclass
class LoadedModel:
    key: str  # id used in the activation cache and session state
    embedder: object  # elmo_core.Embedder
    source: str  # where it came from, for the model panel
    warning: str = ""  # e.g. the fallback to the tiny test model
    name: str = ""  # the name shown to this session (for an upload: this session's own file name)

    @property
    def display_name(self) -> str:
        return self.name or self.embedder.name


def _session_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def _session_is_active(session_id: str) -> bool:
    """Whether a browser session is still connected (True when that cannot be known, e.g. in AppTest)."""
    try:
        from streamlit.runtime import Runtime
        return Runtime.instance().is_active_session(session_id)
    except Exception:
        return True


@st.cache_resource(show_spinner="Loading the biLM…")
def startup_model() -> LoadedModel:
    """The model every session starts with: env-configured files, else the named model of
    ``ELMO_EXPLORER_MODEL`` (``named_startup``), else the shipped default.

    Raises: FileNotFoundError or ValueError when that model cannot be loaded (the page says so).
    """
    from elmo_core.model.loading import load_embedder
    opts, weights = os.environ.get("ELMO_EXPLORER_OPTIONS"), os.environ.get("ELMO_EXPLORER_WEIGHTS")
    ckpt = os.environ.get("ELMO_EXPLORER_CHECKPOINT")
    named = (os.environ.get("ELMO_EXPLORER_MODEL") or "").strip()
    if named and (opts or weights or ckpt):
        raise ValueError("set either ELMO_EXPLORER_MODEL or ELMO_EXPLORER_OPTIONS + ELMO_EXPLORER_WEIGHTS or "
                         "ELMO_EXPLORER_CHECKPOINT, not several")
    why = ""
    if named and named != "default":
        model, why = named_startup(named)
        if model is not None:
            return model
        log.warning("%s", why)
    e = load_embedder(opts, weights, ckpt, device=_device())  # only one of options/weights set: an error
    if opts:
        return LoadedModel("startup:" + _digest(f"{opts}|{weights}"), e, f"{Path(weights).name} (set by environment)")
    if ckpt:
        return LoadedModel("startup:" + _digest(ckpt), e, f"{Path(ckpt).name} (set by environment)")
    return LoadedModel("default", e, "default model shipped in assets/default", warning=why)


def named_startup(name: str) -> tuple[LoadedModel | None, str]:
    """``ELMO_EXPLORER_MODEL``'s model: a bundled one, or a published one from the cache (never downloaded
    here). Returns (the model, "") or (None, why not: one line for the log and the page, naming the command
    that fixes it)."""
    from elmo_core.paths import BUNDLED_MODELS
    from elmo_core.model.published import PUBLISHED, cache_entry, download_command
    said, fallback = f"ELMO_EXPLORER_MODEL={name}", "the server started on the default model"
    if name in BUNDLED_MODELS:
        try:
            return bundled_model(name), ""
        except (FileNotFoundError, ValueError) as err:
            return None, f"{said}: the bundled model could not be loaded ({err}); {fallback}."
    if name.lower() not in PUBLISHED:
        return None, (f"{said} is not a model name (bundled: {', '.join(BUNDLED_MODELS)}; published: "
                      f"{', '.join(PUBLISHED)}); {fallback}.")
    entry = cache_entry(name)
    if entry.state != "cached":
        what = ("is not downloaded on this server" if entry.state == "missing"
                else f"is damaged in the cache ({entry.detail})")
        fix = download_command(name) + (" --force" if entry.state == "damaged" else "")
        return None, (f"{said}: the published model “{entry.model.name}” {what}, so {fallback}. The operator can "
                      f"run: {fix} (or make app MODEL={entry.model.name}), then restart it.")
    try:
        return _load_published(entry.model.name, None), ""
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


def env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


@st.cache_resource
def model_registry() -> ModelRegistry:
    """The server's memory for user-loaded models (``ELMO_EXPLORER_MODEL_MB``), one per server process."""
    return ModelRegistry(max_bytes=env_int("ELMO_EXPLORER_MODEL_MB", 1024) * MB,
                         idle_seconds=env_int("ELMO_EXPLORER_MODEL_IDLE_MIN", 20) * 60, is_active=_session_is_active)


@st.cache_resource
def working_memory() -> WorkingMemory:
    """The working memory of every biLM call of the server (``ELMO_EXPLORER_WORK_MB``), one per server process."""
    return WorkingMemory(env_int("ELMO_EXPLORER_WORK_MB", 1024) * MB)


def bounded_embedder(model: LoadedModel) -> BoundedEmbedder:
    """``model``'s embedder with its calls bounded by the server's working memory, for code that batches on its own
    (the probes of the Layer probes page)."""
    return BoundedEmbedder(model.embedder, working_memory())


def check_model_limits(config) -> int:
    """Refuse a model a user asked for when it is over this server's limits on parameters
    (``ELMO_EXPLORER_MAX_PARAMETERS``) or working memory (``ELMO_EXPLORER_WORK_MB``), before anything is read or
    reserved (a refused model evicts nobody). Returns the bytes to reserve for it (``config_model_bytes``).

    Raises: ValueError, one line for the user."""
    config.check_budget(max_parameters())
    problem = working_memory().work_problem(config)
    if problem:
        raise ValueError(problem)
    return config_model_bytes(config)


def _digest(data: str | bytes) -> str:
    return hashlib.sha1(data.encode() if isinstance(data, str) else data).hexdigest()[:12]


# Per-uploader limits, checked on the server (the uploader widgets also get them, for the browser).
UPLOAD_LIMITS_MB = {"options": 1, "weights": env_int("ELMO_EXPLORER_WEIGHTS_UPLOAD_MB", 1024), "sentences": 2}


def check_upload_size(kind: str, size: int, name: str) -> None:
    """Raise ValueError (for the user) when an upload of ``kind`` is over its limit."""
    limit = UPLOAD_LIMITS_MB[kind]
    if size > limit * 2**20:
        raise ValueError(f"{name} is {size / 2**20:,.1f} MB; the limit for this upload is {limit:,} MB")


def max_parameters() -> int:
    from elmo_core.model.config import DEFAULT_MAX_PARAMETERS
    return env_int("ELMO_EXPLORER_MAX_PARAMETERS", DEFAULT_MAX_PARAMETERS)


def load_uploaded_model(options_bytes: bytes, weights_bytes: bytes, weights_name: str,
                        session: str | None = None, options_name: str = "options.json") -> LoadedModel:
    """Load a user's model from uploaded bytes: published ELMo (options.json + .hdf5) or ours
    (options.json + .safetensors), as this session's model. Nothing is written to disk: the bytes are
    read in memory and dropped after the load (or the failure). Its options are checked against this server's
    limits (``check_model_limits``) and its bytes reserved (``ModelRegistry.load``) before the weights are read.

    Raises: ValueError, one line for the user: a bad file (the message starts with the file it is about,
    ``options_name`` or ``weights_name``), a model over a limit, no room right now (``ModelBudgetError``); the caller
    keeps the previous model."""
    from elmo_core import Embedder
    from elmo_core.model.config import BiLMConfig
    from elmo_core.model.weights import load_bilm_from_bytes
    session = session or _session_id()
    check_upload_size("options", len(options_bytes), options_name)
    check_upload_size("weights", len(weights_bytes), weights_name)
    registry = model_registry()
    key = "upload:" + _digest(_digest(options_bytes) + _digest(weights_bytes))
    source = f"uploaded: {weights_name}"
    known = registry.claim_known(session, key, weights_name, source)
    if known is not None:
        return known
    # a bad options file's message starts with the user's file name; a limit's says which limit
    nbytes = check_model_limits(BiLMConfig.from_json_bytes(options_bytes, options_name))
    fmt = "safetensors" if weights_name.lower().endswith(".safetensors") else "hdf5"

    def build() -> LoadedModel:
        try:
            bilm = load_bilm_from_bytes(options_bytes, weights_bytes, fmt, weights_name, max_parameters())
        except (ValueError, FileNotFoundError) as err:
            read_as = "" if options_name == "options.json" else " read as options.json"
            why = str(err).removeprefix(f"{weights_name}: ")  # the library names the file too: once is enough
            raise ValueError(f"{weights_name} (with {options_name}{read_as}): {why}") from None
        return LoadedModel(key, Embedder(bilm, device=_device(), name=weights_name), source)
    return registry.load(session, key, nbytes, build, weights_name, source)


def load_server_model(options_path: str, weights_path: str, session: str | None = None) -> LoadedModel:
    """Load from paths on the server; only call when ``allow_server_paths()``. Checked and reserved as an upload
    (``check_model_limits``, ``ModelRegistry.load``) before the weights are read."""
    from elmo_core import Embedder
    from elmo_core.model.config import BiLMConfig
    from elmo_core.model.weights import CHECKPOINT_OPTIONS, load_bilm_from_elmo_files, load_checkpoint
    if not allow_server_paths():
        raise PermissionError("reading weights from server paths is disabled")
    session = session or _session_id()
    registry = model_registry()
    key = "path:" + _digest(f"{options_path}|{weights_path}")
    source = f"server path: {weights_path}"
    name = Path(weights_path).name
    known = registry.claim_known(session, key, name, source)
    if known is not None:
        return known
    folder = None
    if weights_path.endswith(".safetensors") or Path(weights_path).is_dir():
        folder = Path(weights_path) if Path(weights_path).is_dir() else Path(weights_path).parent
    nbytes = check_model_limits(BiLMConfig.from_options_json(folder / CHECKPOINT_OPTIONS if folder else options_path))

    def build() -> LoadedModel:
        bilm = (load_checkpoint(folder, max_parameters()) if folder is not None
                else load_bilm_from_elmo_files(options_path, weights_path, max_parameters()))
        return LoadedModel(key, Embedder(bilm, device=_device(), name=name), source)
    return registry.load(session, key, nbytes, build, name, source)


def release_model(session: str | None = None) -> None:
    """Back to the startup model: this session no longer holds its loaded model."""
    model_registry().release(session or _session_id())


BUNDLED_CHOICE_KEY = "bundled_model"  # session-state key of the model panel's named model (bundled or published)


@st.cache_resource(show_spinner="Loading the biLM…")
def bundled_model(name: str) -> LoadedModel:
    """A model shipped in assets/ other than the default (read-only, so one copy serves every session).

    Raises: KeyError for an unknown name; FileNotFoundError when its files are missing."""
    from elmo_core import Embedder
    return LoadedModel(f"bundled:{name}", Embedder.bundled(name, device=_device()), f"bundled model assets/{name}")


def bundled_choices() -> list[str]:
    """The bundled models whose files are there."""
    from elmo_core.paths import BUNDLED_MODELS
    return [name for name, folder in BUNDLED_MODELS.items() if (folder / "model.safetensors").is_file()]


def published_entries() -> dict:
    """{name: ``elmo_core.model.published.CacheEntry``} of every published model, as this server's cache holds it
    (read from the cache folder on every call: a few small files; a download in another process shows)."""
    from elmo_core.model.published import PUBLISHED, cache_entry
    return {name: cache_entry(name) for name in PUBLISHED}


def cached_published() -> list[str]:
    """The published models in this server's cache."""
    try:
        return [name for name, entry in published_entries().items() if entry.state == "cached"]
    except OSError:  # an unreadable cache folder: none
        return []


def model_choices() -> list[str]:
    """The named models the model panel offers (and a link may name): the bundled models, then the published
    ones in this server's cache; none when the server's startup model was set by files."""
    if startup_name() is None:
        return []
    return bundled_choices() + cached_published()


def unavailable_models() -> dict[str, str]:
    """{name: why a link cannot open it here}, for the published models that are not cached (the reason
    completes "The link asks for the model 'small', which ...")."""
    from elmo_core.model.published import download_command
    try:
        entries = published_entries()
    except OSError:
        return {}
    button = "; or press Download under “Published ELMo models” in the sidebar" if allow_downloads() else ""
    out = {}
    for name, entry in entries.items():
        if entry.state == "missing":
            out[name] = f"is not downloaded on this server (the operator can run: {download_command(name)}{button})"
        elif entry.state == "damaged":
            out[name] = (f"is damaged in this server's cache (the operator can run: {download_command(name)} "
                         f"--force{button})")
    return out


def published_source(name: str) -> str:
    """The model panel's line under a published model's name."""
    from elmo_core.model.published import published_model
    model = published_model(name)
    return f"published ELMo {model.title} (AllenNLP), from this server's cache"


def published_caption(name: str) -> str:
    """What a published model is, in one line for the model panel (plain text)."""
    from elmo_core.model.published import published_model
    m = published_model(name)
    return f"AllenNLP's ELMo {m.title}: {m.architecture}; training data: {m.trained_on}."


def published_over_limits(name: str) -> str:
    """Why this server cannot load the published model ``name`` for a session (its parameters over
    ``ELMO_EXPLORER_MAX_PARAMETERS``, its float32 weights over ``ELMO_EXPLORER_MODEL_MB``), or "" when it fits
    (other sessions' models may still leave no room at load time: ``ModelRegistry.reserve`` says so then)."""
    from elmo_core.model.published import published_model
    m = published_model(name)
    if m.parameters > max_parameters():
        return (f"Larger than this server allows for a loaded model ({m.parameters:,} parameters; the limit is "
                f"{max_parameters():,}, ELMO_EXPLORER_MAX_PARAMETERS).")
    need, limit = 4 * m.parameters, model_registry().max_bytes
    if need > limit:
        return (f"Needs {need / 2**20:,.0f} MB, more than this server allows for a loaded model "
                f"({limit / 2**20:,.0f} MB, ELMO_EXPLORER_MODEL_MB).")
    return ""


def _load_published(name: str, max_params: int | None) -> LoadedModel:
    """A cached published model, loaded (``max_params``: refuse larger ones; None: the library's default).
    Raises: FileNotFoundError (not cached), ValueError (damaged, over the budget, bad files)."""
    from elmo_core import Embedder
    from elmo_core.model.published import cache_entry, cached_files, mismatch_note, published_model
    from elmo_core.model.weights import load_bilm_from_elmo_files
    model = published_model(name)
    options, weights = cached_files(model.name)
    bilm = load_bilm_from_elmo_files(options, weights, max_params)
    note = mismatch_note(cache_entry(model.name)) or ""
    return LoadedModel(f"published:{model.name}", Embedder(bilm, device=_device(), name=model.name),
                       published_source(model.name), warning=note[:1].upper() + note[1:] + ("." if note else ""))


def load_published_model(name: str, session: str | None = None) -> LoadedModel:
    """A cached published model as this session's model: one copy in memory for every session that picks it,
    counted in the registry's memory for loaded models like an upload and reserved before it is read
    (``ELMO_EXPLORER_MODEL_MB``; refused over ``ELMO_EXPLORER_MAX_PARAMETERS`` or ``ELMO_EXPLORER_WORK_MB``:
    ``check_model_limits``). The startup model when it is that model.

    Raises: KeyError (unknown name), FileNotFoundError (not cached), ValueError (damaged, over a limit:
    ``ModelBudgetError`` is one; the message says which and what to do)."""
    from elmo_core.model.config import BiLMConfig
    from elmo_core.model.published import cached_files, published_model
    model = published_model(name)
    key = f"published:{model.name}"
    start = startup_model()
    if start.key == key:
        return start
    session = session or _session_id()
    registry = model_registry()
    source = published_source(model.name)
    known = registry.claim_known(session, key, model.name, source)
    if known is not None:
        return known
    options, _ = cached_files(model.name)
    nbytes = check_model_limits(BiLMConfig.from_options_json(options))
    return registry.load(session, key, nbytes, lambda: _load_published(model.name, max_parameters()), model.name,
                         source)


def named_model(name: str, session: str | None = None) -> LoadedModel:
    """The model panel's model ``name``: the startup model when it is that one, a bundled model, or a cached
    published one (``load_published_model``: may raise)."""
    start = startup_model()
    if name == startup_name():
        return start
    if name in bundled_choices():
        return start if name == "default" and start.key == "default" else bundled_model(name)
    return load_published_model(name, session)


def model_to_load(session: str | None = None) -> str | None:
    """The published model ``current_model`` is about to read from disk for this session (seconds for
    Original: the panel shows a spinner), else None."""
    choice = st.session_state.get(BUNDLED_CHOICE_KEY)
    if not choice or choice == startup_name() or choice in bundled_choices() or choice not in cached_published():
        return None
    return None if model_registry().holds(session or _session_id()) else choice


def current_model(key: str | None = None, session: str | None = None) -> tuple[LoadedModel, str]:
    """This session's model (its own loaded one, else the named model it chose, else the startup model) and a
    note when a loaded model had to go. ``key`` is accepted for compatibility and ignored: the registry knows
    the session's model.

    Raises: what ``load_published_model`` raises when the session chose a published model that cannot be
    loaded (the model panel puts the choice back and says why)."""
    start = startup_model()
    session = session or _session_id()
    found, notice = model_registry().for_session(session)
    if found is not None:
        return found, ""
    choice = st.session_state.get(BUNDLED_CHOICE_KEY, "default")
    if not choice or choice == startup_name() or choice not in model_choices():
        return start, notice
    if notice and choice not in bundled_choices():
        return start, notice  # its published model was unloaded: back to the startup model (the panel says so)
    return named_model(choice, session), notice


def downloads() -> Downloads:
    """The server process's background downloads of published models (``app.serving.downloads``)."""
    return _downloads()


@st.cache_resource
def _downloads() -> Downloads:
    return Downloads()


def start_download(name: str) -> DownloadState:
    """Download a published model in the background, or join the download of it that is running.
    Raises: PermissionError when the operator has not allowed downloads; KeyError for an unknown name."""
    from elmo_core.model.published import published_model
    if not allow_downloads():
        raise PermissionError("downloading models from the page is off on this server "
                              "(ELMO_EXPLORER_ALLOW_DOWNLOADS=1 turns it on)")
    return downloads().start(published_model(name).name)


def comparison_choices(session: str | None = None) -> dict[str, str]:
    """The models the Compare tab offers: {label: spec}. Every bundled model whose files are there
    ("bundled:NAME"), the startup model when it is neither the shipped default nor a bundled one ("startup"),
    and this session's own model ("session"): one it uploaded or loaded from server paths, or the published
    model it picked in the model panel. (Other cached published models are not offered: a session holds one
    model in the server's memory for loaded models; pick one in the panel to compare it.)"""
    out = {}
    start = startup_model()
    if start.key != "default" and not start.key.startswith("bundled:"):
        kind = "published, startup model" if start.key.startswith("published:") else "startup model"
        out[f"{start.display_name} ({kind})"] = "startup"
    for name in bundled_choices():
        out[f"{name} (bundled)"] = f"bundled:{name}"
    found, _ = model_registry().for_session(session or _session_id())
    if found is not None:
        kind = "published" if found.key.startswith("published:") else "yours, this session only"
        out[f"{found.display_name} ({kind})"] = "session"
    return out


def comparison_spec(model: LoadedModel, session: str | None = None) -> str | None:
    """The ``comparison_choices`` spec of ``model`` (the page's model), the inverse of ``comparison_model``:
    "session" for this session's own model, "bundled:NAME" for a bundled one (the startup default included),
    "startup" for another startup model; None for a model the Compare tab does not offer."""
    found, _ = model_registry().for_session(session or _session_id())
    if found is not None and model.key == found.key:
        return "session"
    if model.key == "default":
        return "bundled:default"
    if model.key.startswith("bundled:"):
        return model.key
    return "startup" if model.key == startup_model().key else None


def comparison_model(spec: str, session: str | None = None) -> LoadedModel:
    """The model behind a ``comparison_choices`` spec. Raises KeyError when it is no longer there (e.g. an
    uploaded model that was unloaded)."""
    if spec == "startup":
        return startup_model()
    if spec == "session":
        found, _ = model_registry().for_session(session or _session_id())
        if found is None:
            raise KeyError("your model is no longer loaded")
        return found
    if spec.startswith("bundled:"):
        name = spec.split(":", 1)[1]
        start = startup_model()
        return start if name == "default" and start.key == "default" else bundled_model(name)
    raise KeyError(f"unknown model {spec!r}")


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
    mb = env_int("ELMO_EXPLORER_CACHE_MB", 256)
    return ActivationCache(max_bytes=mb * 2**20)


def session_budget_bytes() -> int:
    """Activations one session may keep for its sentence set (its table, plus a layer-normed copy)."""
    return env_int("ELMO_EXPLORER_SESSION_MB", 96) * 2**20


def embed(model: LoadedModel, token_lists, progress: Progress | None = None,
          progress_from: int = 1) -> tuple[list[np.ndarray], int]:
    """Activations (L + 1, n_i, D) per sentence from the shared cache; only new sentences run the biLM, a chunk of
    ``memory.CALL_SENTENCES`` at a time, each call within the server's working memory (``WorkingMemory``)
    (``progress`` reports on those, when there are at least ``progress_from``: ``ActivationCache.get_many``)."""
    from app.serving.memory import CALL_SENTENCES
    memory = working_memory()
    return activation_cache().get_many(model.key, lambda chunk: memory.embed_batch(model.embedder, chunk), token_lists,
                                       chunk_size=CALL_SENTENCES, progress=progress, progress_from=progress_from)


# ---- UMAP warm-up ---------------------------------------------------------------------------------------
# What the sidebar and the map's spinner say while the warm-up runs (``explore.UmapWarmUp``: the seconds are
# measured there, on 2 idle cores).
UMAP_LOADING = ("UMAP is loading on this server (its code was compiled at install by `make app`: a few seconds; "
                "where that cache is missing it compiles once, about 30 s, minutes on a busy machine). A UMAP map "
                "waits for it and is the same map as ever.")


@st.cache_resource
def umap_warm_up() -> UmapWarmUp:
    """UMAP's import and first fits (``explore.UmapWarmUp``), started once per server process by its first page,
    in a background thread, so that the first UMAP map does not wait for them. The maps never depend on its
    state; a UMAP map asked for meanwhile waits for it. ``ELMO_EXPLORER_UMAP_WARMUP=0``: not started (the
    first UMAP map loads UMAP itself)."""
    warm = UmapWarmUp()
    if env_flag("ELMO_EXPLORER_UMAP_WARMUP", True):
        warm.start()
    return warm


def projecting_text(points: int, method: str) -> str:
    """The map's spinner: the projection that runs and, while the server's UMAP warm-up is still running and
    the map may be a UMAP one, that the map waits for it (it never falls back to another projection)."""
    from app.render.display import plural
    from app.explore.frame import method_name
    text = f"Projecting {plural(points, 'point')} with {method_name(method)}…"
    if method in ("auto", "umap") and umap_warm_up().state == "warming":
        text += " " + UMAP_LOADING
    return text


# ---- reference corpus -----------------------------------------------------------------------------------
def reference_path() -> Path:
    """The reference corpus folder (``ELMO_EXPLORER_REFERENCE``, default assets/reference)."""
    return Path(os.environ.get("ELMO_EXPLORER_REFERENCE", DEFAULT_REFERENCE))


@st.cache_resource(show_spinner="Reading the reference corpus…", max_entries=2)
def _reference_corpus(path: str, mtime: float) -> tuple[ReferenceCorpus | None, str]:
    try:
        return ReferenceCorpus.load(path), ""
    except (FileNotFoundError, ValueError) as err:
        return None, str(err)


def reference_corpus() -> tuple[ReferenceCorpus | None, str]:
    """The reference corpus, read once per server process (about 1 s), or None and why not."""
    p = reference_path()
    index = p / INDEX_FILE
    if not index.is_file():
        return None, f"no reference corpus at {p}"
    return _reference_corpus(str(p), index.stat().st_mtime)


def reference_available() -> bool:
    return reference_corpus()[0] is not None


def reference_size() -> int:
    corpus = reference_corpus()[0]
    return len(corpus) if corpus is not None else 0


def reference_for_word(word: str, inflections: bool,
                       limit: int = MAX_REFERENCE_SENTENCES) -> tuple[list[tuple[str, ...]], int]:
    """Up to ``limit`` reference sentences (tokens) that hold the word or, with ``inflections``, its regular
    forms (``elmo_core.data.wordforms``: whole tokens, case and a possessive ending ignored), evenly spread over
    all that do; and how many do. ([], 0): none, or no corpus."""
    corpus = reference_corpus()[0]
    if corpus is None or not word.strip():
        return [], 0
    return corpus.contexts(word_forms(word, inflections=inflections), limit)


@st.cache_resource
def _reference_tables() -> dict:
    return {}


def reference_table(model: LoadedModel, word: str, inflections: bool,
                    progress: Progress | None = None) -> tuple[TokenTable | None, int, str]:
    """The word's reference sentences embedded with this model (only new ones run the biLM: the activation
    cache is per model), as a token table; how many reference sentences hold the word; a note when there is
    no table. ``progress(fraction, text)`` is called while the biLM runs.

    Returns: (table or None, total, note).
    """
    corpus, why = reference_corpus()
    if corpus is None:
        why = why if allow_server_paths() else hide_paths(why)  # a visitor is not shown the server's folders
        return None, 0, (f"No reference corpus ({md(why)}): reference neighbours are skipped (set "
                         "ELMO_EXPLORER_REFERENCE to a folder made by scripts/build_reference_corpus.py).")
    tokens, total = reference_for_word(word, inflections)
    if not tokens:
        return None, 0, f"“{md(word)}” does not occur in the reference corpus ({len(corpus):,} sentences)."
    key = (model.key, word.casefold(), inflections, len(tokens), str(reference_path()))
    memo = _reference_tables()
    if key in memo:
        return memo[key], total, ""
    if progress is not None:
        progress(0.0, f"running the biLM: 0/{len(tokens):,} sentences")  # the bar is up before the first batch
    try:
        acts, _ = embed(model, tokens, progress)
    except Exception as err:  # a user's model failing on some sentence: say so, keep the page
        return None, 0, f"The biLM failed on the reference sentences: {md(err)}"
    table = TokenTable.of_tokenized(tokens, acts)
    memo[key] = table
    while len(memo) > 4:  # each holds a copy of its activations (a few MB), outside the shared cache
        memo.pop(next(iter(memo)))
    return table, total, ""


# ---- layer-0 vocabulary ---------------------------------------------------------------------------------
@st.cache_resource
def _type_vector_store() -> TypeVectorStore:
    return TypeVectorStore(max_models=env_int("ELMO_EXPLORER_TYPE_MODELS", 3))


def type_vectors(model: LoadedModel) -> TypeVectors | None:
    """The layer-0 vectors of the reference corpus's vocabulary (50,000 most frequent word types) for this
    model, started in a background thread on first use (minutes on a busy 2-core CPU; benchmarks/
    type_vectors.py); None without a reference corpus or with ``ELMO_EXPLORER_TYPE_VECTORS=0``."""
    corpus = reference_corpus()[0]
    if corpus is None or not env_flag("ELMO_EXPLORER_TYPE_VECTORS", True):
        return None
    words = corpus.vocabulary(env_int("ELMO_EXPLORER_TYPE_VOCAB", 50000))
    # keyed by the corpus too: a server (or a test) pointed at another corpus gets that corpus's vocabulary
    index = reference_path() / INDEX_FILE
    key = f"{model.key}|{index}|{index.stat().st_mtime}|{len(words)}"
    memory = working_memory()
    return _type_vector_store().get(key, words, lambda chunk: memory.type_vectors(model.embedder, chunk))

"""A user's own model: uploaded bytes (read in memory, never written to disk) or files at paths on the server;
checked against the server's limits and reserved in its memory for loaded models before the weights are read."""

from __future__ import annotations

from pathlib import Path

from app.serving.limits import check_model_limits, max_parameters, model_registry, session_id
from app.serving.settings import allow_server_paths, device, env_int
from app.serving.startup import LoadedModel, digest
from elmo_core import (
    CHECKPOINT_OPTIONS,
    BiLMConfig,
    Embedder,
    load_bilm_from_bytes,
    load_bilm_from_elmo_files,
    load_checkpoint,
)

# Per-uploader limits in MB, checked on the server (the uploader widgets also get them, for the browser).
UPLOAD_LIMITS_MB = {"options": 1, "weights": env_int("ELMO_EXPLORER_WEIGHTS_UPLOAD_MB", 1024), "sentences": 2}


def check_upload_size(kind: str, size: int, name: str) -> None:
    """Raise ValueError (for the user) when an upload of ``kind`` ("options", "weights", "sentences") of ``size``
    bytes is over its limit."""
    limit = UPLOAD_LIMITS_MB[kind]
    if size > limit * 2**20:
        raise ValueError(f"{name} is {size / 2**20:,.1f} MB; the limit for this upload is {limit:,} MB")


def load_uploaded_model(
    options_bytes: bytes,
    weights_bytes: bytes,
    weights_name: str,
    session: str | None = None,
    options_name: str = "options.json",
) -> LoadedModel:
    """Load a user's model from uploaded bytes: published ELMo (options.json + .hdf5) or ours
    (options.json + .safetensors), as this session's model. Nothing is written to disk: the bytes are
    read in memory and dropped after the load (or the failure). Its options are checked against this server's
    limits (``check_model_limits``) and its bytes reserved (``ModelRegistry.load``) before the weights are read.

    Raises: ValueError, one line for the user: a bad file (the message starts with the file it is about,
    ``options_name`` or ``weights_name``), a model over a limit, no room right now (``ModelBudgetError``); the caller
    keeps the previous model."""
    session = session or session_id()
    check_upload_size("options", len(options_bytes), options_name)
    check_upload_size("weights", len(weights_bytes), weights_name)
    registry = model_registry()
    key = "upload:" + digest(digest(options_bytes) + digest(weights_bytes))
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
        return LoadedModel(key, Embedder(bilm, device=device(), name=weights_name), source)

    return registry.load(session, key, nbytes, build, weights_name, source)


def load_server_model(options_path: str, weights_path: str, session: str | None = None) -> LoadedModel:
    """Load from paths on the server (published ELMo files, or our checkpoint folder or its .safetensors file).
    Checked and reserved as an upload (``check_model_limits``, ``ModelRegistry.load``) before the weights are read.

    Raises: PermissionError unless ``allow_server_paths()``; ValueError, FileNotFoundError for bad files."""
    if not allow_server_paths():
        raise PermissionError("reading weights from server paths is disabled")
    session = session or session_id()
    registry = model_registry()
    key = "path:" + digest(f"{options_path}|{weights_path}")
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
        bilm = (
            load_checkpoint(folder, max_parameters())
            if folder is not None
            else load_bilm_from_elmo_files(options_path, weights_path, max_parameters())
        )
        return LoadedModel(key, Embedder(bilm, device=device(), name=name), source)

    return registry.load(session, key, nbytes, build, name, source)

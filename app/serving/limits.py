"""The server's memory for models and biLM calls, one of each per server process, and the limits a user's model is
checked against before it is read (``ELMO_EXPLORER_MODEL_MB``, ``..._WORK_MB``, ``..._MAX_PARAMETERS``)."""

from __future__ import annotations

import streamlit as st

from app.serving.memory import MB, BoundedEmbedder, ModelRegistry, WorkingMemory, config_model_bytes
from app.serving.settings import env_int
from elmo_core import DEFAULT_MAX_PARAMETERS


def session_id() -> str:
    """The id of the browser session whose script runs in this thread; "no-session" outside a script run."""
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


@st.cache_resource
def model_registry() -> ModelRegistry:
    """The server's memory for user-loaded models (``ELMO_EXPLORER_MODEL_MB``), one per server process."""
    return ModelRegistry(
        max_bytes=env_int("ELMO_EXPLORER_MODEL_MB", 1024) * MB,
        idle_seconds=env_int("ELMO_EXPLORER_MODEL_IDLE_MIN", 20) * 60,
        is_active=_session_is_active,
    )


@st.cache_resource
def working_memory() -> WorkingMemory:
    """The working memory of every biLM call of the server (``ELMO_EXPLORER_WORK_MB``), one per server process."""
    return WorkingMemory(env_int("ELMO_EXPLORER_WORK_MB", 1024) * MB)


def bounded_embedder(model) -> BoundedEmbedder:
    """``model``'s (a ``LoadedModel``) embedder with its calls bounded by the server's working memory, for code that
    batches on its own (the probes of the Layer probes page)."""
    return BoundedEmbedder(model.embedder, working_memory())


def max_parameters() -> int:
    """The largest model a user may load, in parameters (``ELMO_EXPLORER_MAX_PARAMETERS``)."""
    return env_int("ELMO_EXPLORER_MAX_PARAMETERS", DEFAULT_MAX_PARAMETERS)


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

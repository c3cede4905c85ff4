"""This session's model: the owner of the model-panel choice (``BUNDLED_CHOICE_KEY``, which a link's ``?model=``
sets) and the one place it is resolved to a ``LoadedModel``, once per script run (``current_model``: the entry
script's model panel; ``page_model``: the page takes that same model and passes it down). Also the Compare tab's
models."""

from __future__ import annotations

import streamlit as st

from app.serving.limits import model_registry, session_id
from app.serving.published import cached_published, load_published_model
from app.serving.startup import LoadedModel, bundled_choices, bundled_model, startup_model, startup_name

__all__ = [
    "BUNDLED_CHOICE_KEY",
    "LoadedModel",
    "comparison_choices",
    "comparison_model",
    "comparison_spec",
    "current_model",
    "device_description",
    "model_choices",
    "model_to_load",
    "named_model",
    "page_model",
    "release_model",
    "startup_model",
    "startup_name",
]

BUNDLED_CHOICE_KEY = "bundled_model"  # session-state key of the model panel's named model (bundled or published)
_RUN_MODEL = "_serving_run_model"  # session-state key: (model, note) resolved by this run's model panel


def model_choices() -> list[str]:
    """The named models the model panel offers (and a link may name): the bundled models, then the published
    ones in this server's cache; none when the server's startup model was set by files."""
    if startup_name() is None:
        return []
    return bundled_choices() + cached_published()


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
    return None if model_registry().holds(session or session_id()) else choice


def current_model(session: str | None = None) -> tuple[LoadedModel, str]:
    """Resolve this session's model: its own loaded one, else the named model it chose (``BUNDLED_CHOICE_KEY``), else
    the startup model; and a note when a loaded model had to go. The model is also kept for this run's page
    (``page_model``), so a script run resolves it once.

    Raises: what ``load_published_model`` raises when the session chose a published model that cannot be
    loaded (the model panel puts the choice back and says why)."""
    resolved = _resolve(session or session_id())
    if session is None:
        st.session_state[_RUN_MODEL] = resolved
    return resolved


def page_model() -> tuple[LoadedModel, str]:
    """The (model, note) this run's model panel resolved, handed over once (the page passes it down); resolved
    here when the page runs without the panel (a page run on its own). Raises: as ``current_model``."""
    handed = st.session_state.pop(_RUN_MODEL, None)
    if handed is not None:
        return handed
    resolved = current_model()
    st.session_state.pop(_RUN_MODEL, None)
    return resolved


def _resolve(session: str) -> tuple[LoadedModel, str]:
    start = startup_model()
    found, notice = model_registry().for_session(session)
    if found is not None:
        return found, ""
    choice = st.session_state.get(BUNDLED_CHOICE_KEY, "default")
    if not choice or choice == startup_name() or choice not in model_choices():
        return start, notice
    if notice and choice not in bundled_choices():
        return start, notice  # its published model was unloaded: back to the startup model (the panel says so)
    return named_model(choice, session), notice


def release_model(session: str | None = None) -> None:
    """Back to the startup model: this session no longer holds its loaded model."""
    model_registry().release(session or session_id())


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
    found, _ = model_registry().for_session(session or session_id())
    if found is not None:
        kind = "published" if found.key.startswith("published:") else "yours, this session only"
        out[f"{found.display_name} ({kind})"] = "session"
    return out


def comparison_spec(model: LoadedModel, session: str | None = None) -> str | None:
    """The ``comparison_choices`` spec of ``model`` (the page's model), the inverse of ``comparison_model``:
    "session" for this session's own model, "bundled:NAME" for a bundled one (the startup default included),
    "startup" for another startup model; None for a model the Compare tab does not offer."""
    found, _ = model_registry().for_session(session or session_id())
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
        found, _ = model_registry().for_session(session or session_id())
        if found is None:
            raise KeyError("your model is no longer loaded")
        return found
    if spec.startswith("bundled:"):
        name = spec.split(":", 1)[1]
        start = startup_model()
        return start if name == "default" and start.key == "default" else bundled_model(name)
    raise KeyError(f"unknown model {spec!r}")


def device_description(embedder) -> str:
    """The device of an ``elmo_core.Embedder``, for the model panel: "CPU" or "GPU: <name> (cuda:0)"."""
    device = embedder.device
    if device.type == "cuda":
        import torch

        try:
            return f"GPU: {torch.cuda.get_device_name(device)} ({device})"
        except Exception:
            return f"GPU ({device})"
    return "CPU"

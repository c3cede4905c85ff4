"""app/serving/startup.py: the startup model follows the environment (the fixture biLM's files), and a half-set
environment is an error, never a silent default."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches")


def test_startup_model_follows_load_embedder(monkeypatch):
    from app.serving import startup

    assert startup.startup_model().key.startswith("startup:")  # app_env: the fixture biLM's files
    startup.startup_model.clear()
    monkeypatch.delenv("ELMO_EXPLORER_WEIGHTS")
    with pytest.raises(ValueError, match="both the options and the weights"):  # not a silent default model
        startup.startup_model()

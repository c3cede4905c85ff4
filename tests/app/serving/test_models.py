"""app/serving/models.py: this session's model, resolved once per script run, and the Compare tab's specs, with the
tiny fixture biLM."""

from __future__ import annotations

import pytest

from tests.conftest import ALLENNLP as FIXTURE

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches")


def test_the_page_model_has_its_compare_spec():
    from app.serving import models, startup, uploads

    options = (FIXTURE / "options.json").read_bytes()
    mine = uploads.load_uploaded_model(options, (FIXTURE / "lm_weights.hdf5").read_bytes(), "w.hdf5", session="spec")
    assert models.comparison_spec(mine, session="spec") == "session"
    assert models.comparison_model("session", session="spec").key == mine.key  # the inverse of comparison_model
    start = startup.startup_model()
    expected = "bundled:default" if start.key == "default" else "startup"
    assert models.comparison_spec(start, session="spec") == expected
    assert models.comparison_model(expected, session="spec").key == start.key
    other = startup.LoadedModel("bundled:lm-only", start.embedder, "x")
    assert models.comparison_spec(other, session="spec") == "bundled:lm-only"
    assert models.comparison_spec(mine, session="someone else") is None  # not offered to another session


def test_same_upload_from_two_sessions_shares_memory_but_not_names():
    from app.serving import limits, memory, models, startup, uploads

    options = (FIXTURE / "options.json").read_bytes()
    weights = (FIXTURE / "lm_weights.hdf5").read_bytes()
    alice = uploads.load_uploaded_model(options, weights, "alice.hdf5", session="alice")
    bob = uploads.load_uploaded_model(options, weights, "bob.hdf5", session="bob")
    assert alice.embedder is bob.embedder
    assert models.current_model(session="alice")[0].display_name == "alice.hdf5"
    assert models.current_model(session="bob")[0].display_name == "bob.hdf5"
    assert models.current_model(session="bob")[0].source == "uploaded: bob.hdf5"
    models.release_model("alice")
    assert models.current_model(session="alice")[0].key == startup.startup_model().key
    assert models.current_model(session="bob")[0].display_name == "bob.hdf5"  # bob still owns it
    # one copy for both sessions: 105,120 parameters + the 4-value padding row of the char table, float32,
    # plus the model's buffers
    one_copy = memory.model_bytes(alice.embedder.bilm)
    assert one_copy >= 105_124 * 4
    assert limits.model_registry().used_bytes == one_copy

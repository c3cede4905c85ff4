"""app/resources.py: the Streamlit-cached services (models, uploads, the model registry, the reference corpus)
with the tiny fixture biLM."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ALLENNLP as FIXTURE
from tests.conftest import ROOT

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches")


def _reference_folder(monkeypatch, tmp_path, sentences: list[str]) -> None:
    """A reference corpus folder (``elmo_core.reference`` format) of these sentences, used by the app."""
    from elmo_core.reference import write_reference
    write_reference(tmp_path / "ref", sentences, [("bank", 1)], {})
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(tmp_path / "ref"))


def test_reference_sentences_are_split_not_retokenized(monkeypatch, tmp_path):
    from app import resources
    _reference_folder(monkeypatch, tmp_path, ["The industry 's bank closed .", "A bank ( the old one ) -- gone ."])
    hits, total = resources.reference_for_word("bank", False)
    assert total == 2
    assert hits[0] == ("The", "industry", "'s", "bank", "closed", ".")
    assert hits[1] == ("A", "bank", "(", "the", "old", "one", ")", "--", "gone", ".")


def test_uploaded_model_bad_file_raises_and_good_file_loads():
    from app import resources
    with pytest.raises(Exception):
        resources.load_uploaded_model(b'{"lstm": {}}', b"\x00garbage", "weights.hdf5")
    options = (FIXTURE / "options.json").read_bytes()
    with pytest.raises(Exception):
        resources.load_uploaded_model(options, b"not an hdf5 file", "weights.hdf5")
    model = resources.load_uploaded_model(options, (FIXTURE / "lm_weights.hdf5").read_bytes(), "lm_weights.hdf5")
    assert model.key.startswith("upload:") and model.embedder.dim == 32
    again = resources.current_model()[0]
    assert again.key == model.key and again.embedder is model.embedder and again.display_name == "lm_weights.hdf5"


def test_the_page_model_has_its_compare_spec():
    from app import resources
    options = (FIXTURE / "options.json").read_bytes()
    mine = resources.load_uploaded_model(options, (FIXTURE / "lm_weights.hdf5").read_bytes(), "w.hdf5", session="spec")
    assert resources.comparison_spec(mine, session="spec") == "session"
    assert resources.comparison_model("session", session="spec").key == mine.key  # the inverse of comparison_model
    start = resources.startup_model()
    expected = "bundled:default" if start.key == "default" else "startup"
    assert resources.comparison_spec(start, session="spec") == expected
    assert resources.comparison_model(expected, session="spec").key == start.key
    other = resources.LoadedModel("bundled:lm-only", start.embedder, "x")
    assert resources.comparison_spec(other, session="spec") == "bundled:lm-only"
    assert resources.comparison_spec(mine, session="someone else") is None  # not offered to another session


def test_uploaded_model_error_names_the_users_file():
    from safetensors.numpy import save

    from app import resources
    options = (ROOT / "assets" / "default" / "options.json").read_bytes()
    with pytest.raises(ValueError) as info:
        resources.load_uploaded_model(options, save({"x": np.zeros(2, dtype=np.float32)}), "my.safetensors")
    message = str(info.value)
    assert message.startswith("my.safetensors") and "is missing" in message
    assert "elmo-explorer-uploads" not in message and "upload:" not in message


def test_uploaded_model_error_names_the_users_options_file():
    from app import resources
    with pytest.raises(ValueError) as info:
        resources.load_uploaded_model(b'{"lstm": {}}', b"\x00garbage", "garbage.hdf5", options_name="garbage.json")
    assert str(info.value) == ("garbage.hdf5 (with garbage.json read as options.json): options.json: missing key "
                               "'char_cnn'")


def test_uploads_never_touch_the_disk(monkeypatch):
    import tempfile

    from app import resources

    def no_disk(*a, **k):
        raise AssertionError("an upload was written to disk")
    monkeypatch.setattr(Path, "write_bytes", no_disk)
    monkeypatch.setattr(tempfile, "mkdtemp", no_disk)
    options = (FIXTURE / "options.json").read_bytes()
    with pytest.raises(ValueError, match="not a readable HDF5"):
        resources.load_uploaded_model(options, b"not an hdf5 file", "weights.hdf5", session="s1")
    model = resources.load_uploaded_model(options, (FIXTURE / "lm_weights.hdf5").read_bytes(), "w.hdf5", session="s1")
    assert model.embedder.dim == 32


def test_each_uploader_has_its_own_limit():
    from app import resources
    resources.check_upload_size("weights", 60 * 2**20, "w.hdf5")  # fine for weights
    with pytest.raises(ValueError, match=r"big.txt is 60.0 MB; the limit for this upload is 2 MB"):
        resources.check_upload_size("sentences", 60 * 2**20, "big.txt")
    with pytest.raises(ValueError, match="limit for this upload is 1 MB"):
        resources.load_uploaded_model(b" " * (2 * 2**20), b"", "w.hdf5", session="s1")


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _model(key: str, mb: int):
    import torch

    from app.resources import LoadedModel

    class _E:
        name = key
        bilm = torch.nn.Linear(mb * 2**18, 1, bias=False)  # mb MB of float32
    return LoadedModel(key, _E(), "uploaded")


def test_registry_never_evicts_a_model_in_use_and_tells_idle_owners():
    from app.resources import ModelBudgetError, ModelRegistry
    clock, active = _Clock(), {"a", "b", "c"}
    reg = ModelRegistry(max_bytes=20 * 2**20, idle_seconds=600, clock=clock, is_active=lambda s: s in active)
    for session, key in (("a", "m1"), ("b", "m2")):
        reg.make_room(session, 8 * 2**20)
        reg.claim(session, _model(key, 8), f"{session}.hdf5", "uploaded")
    clock.now = 300
    with pytest.raises(ModelBudgetError, match=r"in use by other sessions \(16 of 20 MB; this model needs 8 MB\)"):
        reg.make_room("c", 8 * 2**20)
    assert reg.for_session("a")[0].display_name == "a.hdf5" and reg.for_session("b")[0] is not None
    clock.now = 1000  # a and b idle for 700 s; b comes back first
    assert reg.for_session("b")[0] is not None
    reg.make_room("c", 8 * 2**20)  # a's model (idle) makes room, b's (just used) stays
    reg.claim("c", _model("m3", 8), "c.hdf5", "uploaded")
    model, notice = reg.for_session("a")
    assert model is None and "Your model “a.hdf5” was unloaded to make room" in notice
    assert reg.for_session("a") == (None, "")  # told once
    assert reg.for_session("b")[0].key == "m2" and reg.for_session("c")[0].key == "m3"
    active.discard("b")  # b closed the tab: its model may go at once
    reg.make_room("a", 8 * 2**20)
    assert reg.for_session("b")[0] is None
    with pytest.raises(ModelBudgetError, match="needs 30 MB, more than this server allows"):
        reg.make_room("a", 30 * 2**20)


def test_same_upload_from_two_sessions_shares_memory_but_not_names():
    from app import resources
    options = (FIXTURE / "options.json").read_bytes()
    weights = (FIXTURE / "lm_weights.hdf5").read_bytes()
    alice = resources.load_uploaded_model(options, weights, "alice.hdf5", session="alice")
    bob = resources.load_uploaded_model(options, weights, "bob.hdf5", session="bob")
    assert alice.embedder is bob.embedder
    assert resources.current_model(session="alice")[0].display_name == "alice.hdf5"
    assert resources.current_model(session="bob")[0].display_name == "bob.hdf5"
    assert resources.current_model(session="bob")[0].source == "uploaded: bob.hdf5"
    resources.release_model("alice")
    assert resources.current_model(session="alice")[0].key == resources.startup_model().key
    assert resources.current_model(session="bob")[0].display_name == "bob.hdf5"  # bob still owns it
    # one copy for both sessions: 105,120 parameters + the 4-value padding row of the char table, float32,
    # plus the model's buffers
    one_copy = resources.model_bytes(alice.embedder.bilm)
    assert one_copy >= 105_124 * 4
    assert resources.model_registry().used_bytes == one_copy


def test_reference_search_counts_whole_tokens_only(monkeypatch, tmp_path):
    from app import resources
    _reference_folder(monkeypatch, tmp_path, ["The river-bank flooded .", "The bank 's vault .", "Banks lend .",
                                              "A banker smiled ."])
    hits, total = resources.reference_for_word("bank", True)
    assert total == 2  # not "river-bank", not "banker" (elmo_core.wordforms)
    assert hits == [("The", "bank", "'s", "vault", "."), ("Banks", "lend", ".")]
    assert resources.reference_for_word("  ", True) == ([], 0)


def test_startup_model_follows_load_embedder(monkeypatch):
    from app import resources
    assert resources.startup_model().key.startswith("startup:")  # app_env: the fixture biLM's files
    resources.startup_model.clear()
    monkeypatch.delenv("ELMO_EXPLORER_WEIGHTS")
    with pytest.raises(ValueError, match="both the options and the weights"):  # not a silent default model
        resources.startup_model()

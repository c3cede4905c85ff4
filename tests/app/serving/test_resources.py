"""app/serving/resources.py: the Streamlit-cached services (models, uploads, the model registry, the reference corpus)
with the tiny fixture biLM."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ALLENNLP as FIXTURE
from tests.conftest import ROOT

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches")


def _reference_folder(monkeypatch, tmp_path, sentences: list[str]) -> None:
    """A reference corpus folder (``elmo_core.data.reference`` format) of these sentences, used by the app."""
    from elmo_core.data.reference import write_reference
    write_reference(tmp_path / "ref", sentences, [("bank", 1)], {})
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(tmp_path / "ref"))


def test_reference_sentences_are_split_not_retokenized(monkeypatch, tmp_path):
    from app.serving import resources
    _reference_folder(monkeypatch, tmp_path, ["The industry 's bank closed .", "A bank ( the old one ) -- gone ."])
    hits, total = resources.reference_for_word("bank", False)
    assert total == 2
    assert hits[0] == ("The", "industry", "'s", "bank", "closed", ".")
    assert hits[1] == ("A", "bank", "(", "the", "old", "one", ")", "--", "gone", ".")


def test_uploaded_model_bad_file_raises_and_good_file_loads():
    from app.serving import resources
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
    from app.serving import resources
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

    from app.serving import resources
    options = (ROOT / "assets" / "default" / "options.json").read_bytes()
    with pytest.raises(ValueError) as info:
        resources.load_uploaded_model(options, save({"x": np.zeros(2, dtype=np.float32)}), "my.safetensors")
    message = str(info.value)
    assert message.startswith("my.safetensors") and "is missing" in message
    assert "elmo-explorer-uploads" not in message and "upload:" not in message


def test_uploaded_model_error_names_the_users_options_file():
    from app.serving import resources
    with pytest.raises(ValueError) as info:
        resources.load_uploaded_model(b'{"lstm": {}}', b"\x00garbage", "garbage.hdf5", options_name="garbage.json")
    assert str(info.value) == "garbage.json: missing key 'char_cnn'"  # the options file's fault, under its name


def test_uploads_never_touch_the_disk(monkeypatch):
    import tempfile

    from app.serving import resources

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
    from app.serving import resources
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

    from app.serving.resources import LoadedModel

    class _E:
        name = key
        bilm = torch.nn.Linear(mb * 2**18, 1, bias=False)  # mb MB of float32
    return LoadedModel(key, _E(), "uploaded")


def _load(reg, session: str, key: str, mb: int, name: str):
    """``session`` loads a model of ``mb`` MB into ``reg`` (reserved, built, claimed)."""
    return reg.load(session, key, mb * 2**20, lambda: _model(key, mb), name, "uploaded")


def test_registry_never_evicts_a_model_in_use_and_tells_idle_owners():
    from app.serving.resources import ModelBudgetError, ModelRegistry
    clock, active = _Clock(), {"a", "b", "c"}
    reg = ModelRegistry(max_bytes=20 * 2**20, idle_seconds=600, clock=clock, is_active=lambda s: s in active)
    for session, key in (("a", "m1"), ("b", "m2")):
        _load(reg, session, key, 8, f"{session}.hdf5")
    clock.now = 300
    with pytest.raises(ModelBudgetError, match=r"in use by other sessions \(16 of 20 MB, counting models being "
                                               r"loaded; this model needs 8 MB\)"):
        _load(reg, "c", "m3", 8, "c.hdf5")
    assert reg.for_session("a")[0].display_name == "a.hdf5" and reg.for_session("b")[0] is not None
    clock.now = 1000  # a and b idle for 700 s; b comes back first
    assert reg.for_session("b")[0] is not None
    _load(reg, "c", "m3", 8, "c.hdf5")  # a's model (idle) makes room, b's (just used) stays
    model, notice = reg.for_session("a")
    assert model is None and "Your model “a.hdf5” was unloaded to make room" in notice
    assert reg.for_session("a") == (None, "")  # told once
    assert reg.for_session("b")[0].key == "m2" and reg.for_session("c")[0].key == "m3"
    active.discard("b")  # b closed the tab: its model may go at once
    _load(reg, "a", "m4", 8, "a.hdf5")
    assert reg.for_session("b")[0] is None
    with pytest.raises(ModelBudgetError, match="needs 30 MB, more than this server allows"):
        _load(reg, "a", "m5", 30, "a.hdf5")
    assert reg.used_bytes == 16 * 2**20 and reg.reserved_bytes == 0


def test_same_upload_from_two_sessions_shares_memory_but_not_names():
    from app.serving import resources
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
    from app.serving import resources
    _reference_folder(monkeypatch, tmp_path, ["The river-bank flooded .", "The bank 's vault .", "Banks lend .",
                                              "A banker smiled ."])
    hits, total = resources.reference_for_word("bank", True)
    assert total == 2  # not "river-bank", not "banker" (elmo_core.data.wordforms)
    assert hits == [("The", "bank", "'s", "vault", "."), ("Banks", "lend", ".")]
    assert resources.reference_for_word("  ", True) == ([], 0)


def test_startup_model_follows_load_embedder(monkeypatch):
    from app.serving import resources
    assert resources.startup_model().key.startswith("startup:")  # app_env: the fixture biLM's files
    resources.startup_model.clear()
    monkeypatch.delenv("ELMO_EXPLORER_WEIGHTS")
    with pytest.raises(ValueError, match="both the options and the weights"):  # not a silent default model
        resources.startup_model()


# ---- hostile input (issue 26): each case a one-line message, nothing loaded, nothing reserved ------------------
FIXTURE_OPTIONS = (FIXTURE / "options.json").read_bytes()
KEEP = "refused (a weights file must hold complete, plain float arrays of its own)"


def _upload_message(options: bytes, weights: bytes, weights_name: str = "w.hdf5",
                    options_name: str = "options.json") -> str:
    from app.serving import resources
    with pytest.raises(ValueError) as info:
        resources.load_uploaded_model(options, weights, weights_name, session="hostile", options_name=options_name)
    assert resources.model_registry().used_bytes == 0 and resources.current_model(session="hostile")[0].key == \
        resources.startup_model().key  # nothing loaded or reserved, the session keeps its model
    return str(info.value)


def test_a_misspelt_options_key_is_refused_with_the_key_it_meant(tmp_path):
    from tests.conftest import crafted_weights, misspelt_options
    weights = crafted_weights(tmp_path, "marked")
    assert _upload_message(misspelt_options(), weights, options_name="my options.json") == (
        "my options.json: unknown key 'lstm.use_skip_connection'; did you mean 'lstm.use_skip_connections'?")


@pytest.mark.parametrize("how, says", [
    ("unwritten", f"'CNN_proj/W_proj' is declared but its data were never written (it would read as zeros); {KEEP}"),
    ("chunk bomb", f"'char_embed' is stored in chunks of (4096, 4096), larger than its shape (261, 4); {KEEP}"),
])
def test_weights_that_would_read_as_zeros_or_inflate_are_refused(tmp_path, how, says):
    from tests.conftest import crafted_weights
    assert _upload_message(FIXTURE_OPTIONS, crafted_weights(tmp_path, how), "crafted.hdf5") == (
        f"crafted.hdf5 (with options.json): {says}")


def test_the_wide_model_is_refused_for_its_working_memory_and_loads_where_the_operator_allows_it(
        monkeypatch, wide_model_files):
    from app.serving import memory, resources
    options, weights = wide_model_files
    assert _upload_message(options, weights, "wide.hdf5") == (
        "this model needs about 2,655 MB of working memory for one biLM call of the page (32 sentences of 100 "
        "tokens, 833 KB a token position), more than this server allows (1,024 MB, "
        "ELMO_EXPLORER_WORK_MB)")
    monkeypatch.setenv("ELMO_EXPLORER_WORK_MB", "2700")
    resources.working_memory.clear()
    model = resources.load_uploaded_model(options, weights, "wide.hdf5", session="operator")
    assert model.embedder.num_parameters == 5_194_788
    reserved = memory.config_model_bytes(model.embedder.bilm.config)  # what was reserved is what it holds
    assert resources.model_registry().used_bytes == resources.model_bytes(model.embedder.bilm) == reserved == 21_172_384
    held = []
    real = memory.WorkingMemory.use

    def spy(self, nbytes):
        held.append(nbytes)
        return real(self, nbytes)
    monkeypatch.setattr(memory.WorkingMemory, "use", spy)
    acts, computed = resources.embed(model, [["The", "bank", "."], ["A", "river", "bank", "."]])
    assert computed == 2 and acts[1].shape == (2, 4, 32)
    assert held == [model.embedder.bilm.config.inference_bytes(2 * 6)]  # one call: 2 sentences of 4 (+2) positions


def test_eight_uploads_at_once_never_hold_more_than_the_limit(monkeypatch, tmp_path):
    """The review's case: 8 sessions press Load at once with ELMO_EXPLORER_MODEL_MB=1, which fits 2 copies of the
    fixture biLM (0.4 MB each): 2 load, 6 are refused in one line, and the bytes held (in memory and being read)
    never exceed 1 MB, also while they are read. A failed load gives its bytes back."""
    import elmo_core.model.weights

    from app.serving import resources
    from tests.conftest import crafted_weights
    monkeypatch.setenv("ELMO_EXPLORER_MODEL_MB", "1")
    resources.model_registry.clear()
    registry = resources.model_registry()
    uploads = [crafted_weights(tmp_path, "marked", mark=i + 1) for i in range(8)]  # 8 different models
    real, reading, most, lock = elmo_core.model.weights.load_bilm_from_bytes, [], [], threading.Lock()

    def slow_read(*args, **kwargs):  # long enough for every press to arrive while the first ones read
        with lock:
            reading.append(1)
            most.append((len(reading), registry.used_bytes))
        time.sleep(0.3)
        try:
            return real(*args, **kwargs)
        finally:
            with lock:
                reading.pop()
    monkeypatch.setattr(elmo_core.model.weights, "load_bilm_from_bytes", slow_read)
    results: dict[int, object] = {}

    def press(i: int) -> None:
        try:
            results[i] = resources.load_uploaded_model(FIXTURE_OPTIONS, uploads[i], f"w{i}.hdf5", session=f"s{i}")
        except ValueError as err:
            results[i] = str(err)
    threads = [threading.Thread(target=press, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    loaded = [r for r in results.values() if not isinstance(r, str)]
    refused = [r for r in results.values() if isinstance(r, str)]
    one = resources.model_bytes(loaded[0].embedder.bilm)
    assert one == 423_536 and len(loaded) == 2 and len(refused) == 6
    assert set(refused) == {"the server's memory for loaded models is in use by other sessions (0.8 of 1 MB, counting "
                            "models being loaded; this model needs 0.4 MB). Try again later, or use a smaller model."}
    assert max(n for n, _ in most) <= 2 and max(b for _, b in most) <= 2**20  # while reading, too
    assert registry.used_bytes == 2 * one <= 2**20 and registry.reserved_bytes == 0
    # a load that fails gives its reservation back: the room it took is there for the next one
    for i in range(8):
        resources.release_model(f"s{i}")
    with pytest.raises(ValueError, match=r"^bad.hdf5 \(with options.json\): 'CNN_proj/W_proj' is declared"):
        resources.load_uploaded_model(FIXTURE_OPTIONS, crafted_weights(tmp_path, "unwritten"), "bad.hdf5", session="s0")
    assert registry.used_bytes == 0

"""app/serving/uploads.py: a user's own model from uploaded bytes (never written to disk), its errors in one line
naming the user's file, the per-uploader limits, and hostile files refused before anything is loaded or reserved."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ALLENNLP as FIXTURE
from tests.conftest import ROOT

pytestmark = pytest.mark.usefixtures("app_env", "fresh_caches")


def test_uploaded_model_bad_file_raises_and_good_file_loads():
    from app.serving import models, uploads

    with pytest.raises(ValueError):
        uploads.load_uploaded_model(b'{"lstm": {}}', b"\x00garbage", "weights.hdf5")
    options = (FIXTURE / "options.json").read_bytes()
    with pytest.raises(ValueError):
        uploads.load_uploaded_model(options, b"not an hdf5 file", "weights.hdf5")
    model = uploads.load_uploaded_model(options, (FIXTURE / "lm_weights.hdf5").read_bytes(), "lm_weights.hdf5")
    assert model.key.startswith("upload:") and model.embedder.dim == 32
    again = models.current_model()[0]
    assert again.key == model.key and again.embedder is model.embedder and again.display_name == "lm_weights.hdf5"


def test_uploaded_model_error_names_the_users_file():
    from safetensors.numpy import save

    from app.serving import uploads

    options = (ROOT / "assets" / "default" / "options.json").read_bytes()
    with pytest.raises(ValueError) as info:
        uploads.load_uploaded_model(options, save({"x": np.zeros(2, dtype=np.float32)}), "my.safetensors")
    message = str(info.value)
    assert message.startswith("my.safetensors") and "is missing" in message
    assert "elmo-explorer-uploads" not in message and "upload:" not in message


def test_uploaded_model_error_names_the_users_options_file():
    from app.serving import uploads

    with pytest.raises(ValueError) as info:
        uploads.load_uploaded_model(b'{"lstm": {}}', b"\x00garbage", "garbage.hdf5", options_name="garbage.json")
    assert str(info.value) == "garbage.json: missing key 'char_cnn'"  # the options file's fault, under its name


def test_uploads_never_touch_the_disk(monkeypatch):
    import tempfile

    from app.serving import uploads

    def no_disk(*a, **k):
        raise AssertionError("an upload was written to disk")

    monkeypatch.setattr(Path, "write_bytes", no_disk)
    monkeypatch.setattr(tempfile, "mkdtemp", no_disk)
    options = (FIXTURE / "options.json").read_bytes()
    with pytest.raises(ValueError, match="not a readable HDF5"):
        uploads.load_uploaded_model(options, b"not an hdf5 file", "weights.hdf5", session="s1")
    model = uploads.load_uploaded_model(options, (FIXTURE / "lm_weights.hdf5").read_bytes(), "w.hdf5", session="s1")
    assert model.embedder.dim == 32


def test_each_uploader_has_its_own_limit():
    from app.serving import uploads

    uploads.check_upload_size("weights", 60 * 2**20, "w.hdf5")  # fine for weights
    with pytest.raises(ValueError, match=r"big.txt is 60.0 MB; the limit for this upload is 2 MB"):
        uploads.check_upload_size("sentences", 60 * 2**20, "big.txt")
    with pytest.raises(ValueError, match="limit for this upload is 1 MB"):
        uploads.load_uploaded_model(b" " * (2 * 2**20), b"", "w.hdf5", session="s1")


# ---- hostile input: each case a one-line message, nothing loaded, nothing reserved ------------------
FIXTURE_OPTIONS = (FIXTURE / "options.json").read_bytes()


KEEP = "refused (a weights file must hold complete, plain float arrays of its own)"


def _upload_message(
    options: bytes, weights: bytes, weights_name: str = "w.hdf5", options_name: str = "options.json"
) -> str:
    from app.serving import limits, models, startup, uploads

    with pytest.raises(ValueError) as info:
        uploads.load_uploaded_model(options, weights, weights_name, session="hostile", options_name=options_name)
    assert (
        limits.model_registry().used_bytes == 0
        and models.current_model(session="hostile")[0].key == startup.startup_model().key
    )  # nothing loaded or reserved, the session keeps its model
    return str(info.value)


def test_a_misspelt_options_key_is_refused_with_the_key_it_meant(tmp_path):
    from tests.conftest import crafted_weights, misspelt_options

    weights = crafted_weights(tmp_path, "marked")
    assert _upload_message(misspelt_options(), weights, options_name="my options.json") == (
        "my options.json: unknown key 'lstm.use_skip_connection'; did you mean 'lstm.use_skip_connections'?"
    )


@pytest.mark.parametrize(
    "how, says",
    [
        (
            "unwritten",
            f"'CNN_proj/W_proj' is declared but its data were never written (it would read as zeros); {KEEP}",
        ),
        ("chunk bomb", f"'char_embed' is stored in chunks of (4096, 4096), larger than its shape (261, 4); {KEEP}"),
    ],
)
def test_weights_that_would_read_as_zeros_or_inflate_are_refused(tmp_path, how, says):
    from tests.conftest import crafted_weights

    assert _upload_message(FIXTURE_OPTIONS, crafted_weights(tmp_path, how), "crafted.hdf5") == (
        f"crafted.hdf5 (with options.json): {says}"
    )


def test_the_wide_model_is_refused_for_its_working_memory_and_loads_where_the_operator_allows_it(
    monkeypatch, wide_model_files
):
    from app.serving import caches, limits, memory, uploads

    options, weights = wide_model_files
    assert _upload_message(options, weights, "wide.hdf5") == (
        "this model needs about 2,655 MB of working memory for one biLM call of the page (32 sentences of 100 "
        "tokens, 833 KB a token position), more than this server allows (1,024 MB, "
        "ELMO_EXPLORER_WORK_MB)"
    )
    monkeypatch.setenv("ELMO_EXPLORER_WORK_MB", "2700")
    limits.working_memory.clear()
    model = uploads.load_uploaded_model(options, weights, "wide.hdf5", session="operator")
    assert model.embedder.num_parameters == 5_194_788
    reserved = memory.config_model_bytes(model.embedder.bilm.config)  # what was reserved is what it holds
    assert limits.model_registry().used_bytes == memory.model_bytes(model.embedder.bilm) == reserved == 21_172_384
    held = []
    real = memory.WorkingMemory.use

    def spy(self, nbytes):
        held.append(nbytes)
        return real(self, nbytes)

    monkeypatch.setattr(memory.WorkingMemory, "use", spy)
    acts, computed = caches.embed(model, [["The", "bank", "."], ["A", "river", "bank", "."]])
    assert computed == 2 and acts[1].shape == (2, 4, 32)
    assert held == [model.embedder.bilm.config.inference_bytes(2 * 6)]  # one call: 2 sentences of 4 (+2) positions


def test_eight_uploads_at_once_never_hold_more_than_the_limit(monkeypatch, tmp_path):
    """8 sessions press Load at once with ELMO_EXPLORER_MODEL_MB=1, which fits 2 copies of the
    fixture biLM (0.4 MB each): 2 load, 6 are refused in one line, and the bytes held (in memory and being read)
    never exceed 1 MB, also while they are read. A failed load gives its bytes back."""
    from app.serving import limits, memory, models, uploads
    from tests.conftest import crafted_weights

    monkeypatch.setenv("ELMO_EXPLORER_MODEL_MB", "1")
    limits.model_registry.clear()
    registry = limits.model_registry()
    files = [crafted_weights(tmp_path, "marked", mark=i + 1) for i in range(8)]  # 8 different models
    real, reading, most, lock = uploads.load_bilm_from_bytes, [], [], threading.Lock()

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

    monkeypatch.setattr(uploads, "load_bilm_from_bytes", slow_read)
    results: dict[int, object] = {}

    def press(i: int) -> None:
        try:
            results[i] = uploads.load_uploaded_model(FIXTURE_OPTIONS, files[i], f"w{i}.hdf5", session=f"s{i}")
        except ValueError as err:
            results[i] = str(err)

    threads = [threading.Thread(target=press, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    loaded = [r for r in results.values() if not isinstance(r, str)]
    refused = [r for r in results.values() if isinstance(r, str)]
    one = memory.model_bytes(loaded[0].embedder.bilm)
    assert one == 423_536 and len(loaded) == 2 and len(refused) == 6
    assert set(refused) == {
        "the server's memory for loaded models is in use by other sessions (0.8 of 1 MB, counting "
        "models being loaded; this model needs 0.4 MB). Try again later, or use a smaller model."
    }
    assert max(n for n, _ in most) <= 2 and max(b for _, b in most) <= 2**20  # while reading, too
    assert registry.used_bytes == 2 * one <= 2**20 and registry.reserved_bytes == 0
    # a load that fails gives its reservation back: the room it took is there for the next one
    for i in range(8):
        models.release_model(f"s{i}")
    with pytest.raises(ValueError, match=r"^bad.hdf5 \(with options.json\): 'CNN_proj/W_proj' is declared"):
        uploads.load_uploaded_model(FIXTURE_OPTIONS, crafted_weights(tmp_path, "unwritten"), "bad.hdf5", session="s0")
    assert registry.used_bytes == 0


def test_an_uploaded_options_file_with_a_key_twice_is_refused_naming_it():
    """The reported case in the app: the model loaded ("Loaded") with the residual connection off."""
    from app.serving import uploads

    text = (FIXTURE / "options.json").read_text()
    twice = text.replace(
        '"use_skip_connections": true,', '"use_skip_connections": true, "use_skip_connections": false,'
    )
    weights = (FIXTURE / "lm_weights.hdf5").read_bytes()
    with pytest.raises(ValueError) as info:
        uploads.load_uploaded_model(twice.encode(), weights, "lm_weights.hdf5", options_name="my_options.json")
    assert str(info.value) == (
        "my_options.json: the key 'use_skip_connections' appears twice in one object; give it once"
    )

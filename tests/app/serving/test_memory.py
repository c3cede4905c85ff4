"""app/serving/memory.py: the registry of user-loaded models (bytes reserved before a load, released when it fails, never
over the limit with loads running at once) and the working memory of the biLM calls (the model check, calls bounded
and shared across threads)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from app.serving import memory
from app.serving.memory import CALL_POSITIONS, ModelBudgetError, ModelRegistry, WorkingMemory
from elmo_core.model.config import BiLMConfig
from tests.conftest import WIDE_OPTIONS as WIDE

MB = 2**20
FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]


def published_config(dim: int, projection: int, highway: int) -> BiLMConfig:
    """The architecture of a published model (elmo_core.model.published_table: cell / projection, highway layers)."""
    return BiLMConfig.from_dict(
        {
            "lstm": {
                "use_skip_connections": True,
                "projection_dim": projection,
                "cell_clip": 3,
                "proj_clip": 3,
                "dim": dim,
                "n_layers": 2,
            },
            "char_cnn": {
                "activation": "relu",
                "filters": FILTERS,
                "n_highway": highway,
                "embedding": {"dim": 16},
                "n_characters": 262,
                "max_characters_per_token": 50,
            },
        }
    )


@dataclass
class _Model:
    """A stand-in for ``app.serving.startup.LoadedModel``."""

    key: str
    embedder: object
    source: str = ""
    name: str = ""


def model(key: str, mb: float) -> _Model:
    """A model of ``mb`` MB of float32 parameters."""
    return _Model(key, SimpleNamespace(bilm=torch.nn.Linear(int(mb * 2**18), 1, bias=False)))


# ---- loaded models ------------------------------------------------------------------------------------------
def test_eight_loads_at_once_never_hold_more_than_the_limit():
    """8 sessions press Load within the same moment against a limit that fits 2 models: 2 load, 6 are told why
    in one line; the bytes held (models in memory and being read) never exceed the limit. (Before reservations the
    room was checked before the read and the model recorded after it: 8 of 8 got in.)"""
    registry = ModelRegistry(max_bytes=20 * MB)
    gate, entered, held = threading.Event(), [], []
    results: dict[int, object] = {}

    def build(i: int):
        entered.append(i)
        held.append(registry.used_bytes)  # every build that is running has its bytes reserved
        assert gate.wait(30)
        return model(f"m{i}", 8)

    def press(i: int) -> None:
        try:
            results[i] = registry.load(f"s{i}", f"m{i}", 8 * MB, lambda: build(i), f"w{i}.hdf5", "uploaded")
        except ModelBudgetError as err:
            results[i] = str(err)

    threads = [threading.Thread(target=press, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while len(results) + len(entered) < 8 and time.monotonic() < deadline:  # refused ones answered, others reading
        time.sleep(0.01)
    assert len(entered) == 2 and registry.used_bytes == 16 * MB  # reserved while they read
    gate.set()
    for t in threads:
        t.join(30)
    refused = [r for r in results.values() if isinstance(r, str)]
    assert len(refused) == 6 and sorted(i for i, r in results.items() if not isinstance(r, str)) == sorted(entered)
    assert set(refused) == {
        "the server's memory for loaded models is in use by other sessions (16 of 20 MB, counting "
        "models being loaded; this model needs 8 MB). Try again later, or use a smaller model."
    }
    assert max(held) <= 20 * MB and registry.used_bytes == 16 * MB and registry.reserved_bytes == 0


def test_a_failed_load_gives_its_reservation_back():
    registry = ModelRegistry(max_bytes=20 * MB)
    gate = threading.Event()
    started = threading.Event()
    outcome: dict[str, object] = {}

    def bad_file():
        started.set()
        assert gate.wait(30)
        raise ValueError("w.hdf5: 'CNN_proj/W_proj' is declared but its data were never written")

    def press() -> None:
        try:
            registry.load("bad", "m-bad", 12 * MB, bad_file, "w.hdf5", "uploaded")
        except ValueError as err:
            outcome["bad"] = str(err)

    thread = threading.Thread(target=press)
    thread.start()
    assert started.wait(30)
    with pytest.raises(ModelBudgetError, match=r"in use by other sessions \(12 of 20 MB"):  # 12 MB reserved
        registry.load("other", "m-ok", 12 * MB, lambda: model("m-ok", 12), "ok.hdf5", "uploaded")
    gate.set()
    thread.join(30)
    assert outcome["bad"] == "w.hdf5: 'CNN_proj/W_proj' is declared but its data were never written"
    assert registry.used_bytes == 0 and registry.for_session("bad") == (None, "")  # released, nothing kept
    registry.load("other", "m-ok", 12 * MB, lambda: model("m-ok", 12), "ok.hdf5", "uploaded")  # room again
    assert registry.used_bytes == 12 * MB


def test_a_session_keeps_its_model_counted_until_the_new_one_is_in():
    registry = ModelRegistry(max_bytes=20 * MB)
    registry.load("a", "m1", 12 * MB, lambda: model("m1", 12), "one.hdf5", "uploaded")
    with pytest.raises(ModelBudgetError) as info:  # both would be in memory while the second is read
        registry.load("a", "m2", 12 * MB, lambda: model("m2", 12), "two.hdf5", "uploaded")
    assert str(info.value) == (
        "this model needs 12 MB and your current model holds 12 of this server's 20 MB for "
        "loaded models until the new one is in; press “Back to the startup model” first, "
        "then load this one."
    )
    assert registry.for_session("a")[0].name == "one.hdf5"  # kept
    registry.release("a")
    registry.load("a", "m2", 12 * MB, lambda: model("m2", 12), "two.hdf5", "uploaded")
    registry.load("a", "m3", 6 * MB, lambda: model("m3", 6), "three.hdf5", "uploaded")  # fits beside: replaces it
    assert registry.for_session("a")[0].name == "three.hdf5" and registry.used_bytes == 6 * MB


def test_the_same_model_loaded_by_two_sessions_at_once_is_read_once():
    registry = ModelRegistry(max_bytes=20 * MB)
    gate, builds = threading.Event(), []

    def build():
        builds.append(1)
        assert gate.wait(30)
        return model("same", 12)

    loaded = {}
    threads = [
        threading.Thread(
            target=lambda s=s: loaded.__setitem__(s, registry.load(s, "same", 12 * MB, build, f"{s}.hdf5", "uploaded"))
        )
        for s in ("alice", "bob")
    ]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join(30)
    assert builds == [1] and loaded["alice"].embedder is loaded["bob"].embedder  # the second waited, then shared
    assert (loaded["alice"].name, loaded["bob"].name) == ("alice.hdf5", "bob.hdf5")
    assert registry.used_bytes == 12 * MB


def test_a_model_larger_than_its_reservation_is_refused_when_it_no_longer_fits():
    registry = ModelRegistry(max_bytes=20 * MB)
    registry.load("a", "m1", 10 * MB, lambda: model("m1", 10), "a.hdf5", "uploaded")
    with pytest.raises(
        ModelBudgetError,
        match=r"this model needs 12 MB and the server's memory for loaded models has "
        r"10 MB free",
    ):
        registry.load("b", "m2", 4 * MB, lambda: model("m2", 12), "b.hdf5", "uploaded")  # estimated too small
    assert registry.used_bytes == 10 * MB and registry.for_session("b") == (None, "")


def test_megabytes_are_readable_for_small_models():
    assert [memory.megabytes(n) for n in (0.42 * MB, 8 * MB, 16.5 * MB, 1024 * MB)] == ["0.4", "8", "16", "1,024"]


# ---- working memory ---------------------------------------------------------------------------------------
def test_the_shipped_and_published_models_pass_the_default_and_the_wide_one_does_not(allennlp_files):
    from elmo_core.paths import BUNDLED_MODELS

    work = WorkingMemory(1024 * MB)  # ELMO_EXPLORER_WORK_MB's default
    shipped = [BiLMConfig.from_options_json(folder / "options.json") for folder in BUNDLED_MODELS.values()]
    published = {
        "small": published_config(1024, 128, 1),
        "medium": published_config(2048, 256, 1),
        "original": published_config(4096, 512, 2),
    }
    from elmo_core.model.published_table import PUBLISHED

    for name, config in published.items():  # the table's architectures, checked by their parameter counts
        assert config.num_parameters() == PUBLISHED[name].parameters
    for config in [*shipped, *published.values()]:
        assert work.work_problem(config) == "" and work.positions(config) == CALL_POSITIONS == 3264
    assert work.call_bytes(published["original"]) == 3264 * 215_440  # 671 MB: the largest that passes
    wide = BiLMConfig.from_dict(WIDE)
    assert wide.num_parameters() == 5_194_788
    assert work.work_problem(wide) == (
        "this model needs about 2,655 MB of working memory for one biLM call of the page (32 sentences of 100 tokens, "
        "833 KB a token position), more than this server allows (1,024 MB, "
        "ELMO_EXPLORER_WORK_MB)"
    )
    assert WorkingMemory(2700 * MB).work_problem(wide) == ""
    assert work.positions(wide) == 1024 * MB // wide.inference_bytes(1) == 1258  # a startup model: smaller calls


def test_calls_are_bounded_by_positions_and_hold_their_estimate(tiny_embedder):
    config = tiny_embedder.bilm.config
    per_position = config.inference_bytes(1)
    work = WorkingMemory(250 * per_position)  # a call of 250 positions at most
    calls, held = [], []
    real = tiny_embedder.embed_batch

    def spy(sentences, batch_size=64):
        calls.append(batch_size)
        held.append(work.used_bytes)
        return real(sentences, batch_size)

    tiny_embedder.embed_batch = spy
    sentences = [["w"] * 100] * 5 + [["a", "b"]]
    out = work.embed_batch(tiny_embedder, sentences)
    assert calls == [2] and held == [config.inference_bytes(2 * 102)]  # 2 sentences of 100 tokens (+2) a call
    assert [a.shape[1] for a in out] == [100] * 5 + [2] and work.used_bytes == 0
    work.embed_batch(tiny_embedder, [["a", "b"]] * 100, most=64)  # short sentences: as many as fit, at most 64
    assert calls[-1] == 62  # 250 // 4


def test_the_vocabulary_pass_takes_at_most_the_limit_with_its_margin(tiny_embedder):
    """Its real peak measured up to 1.5x its estimate (benchmarks/app_memory.py): its calls are sized to half of
    what they hold."""
    per_word = tiny_embedder.bilm.config.inference_bytes(3)
    work = WorkingMemory(20 * per_word)
    real, calls, held = tiny_embedder.bilm.forward, [], []
    tiny_embedder.bilm.forward = lambda ids, **kw: (
        (calls.append(ids.shape[0]), held.append(work.used_bytes)) and real(ids, **kw)
    )
    vectors = work.type_vectors(tiny_embedder, [f"w{i}" for i in range(25)])
    assert calls == [10, 10, 5] and vectors.shape == (25, 32)
    assert held == [20 * per_word] * 3 and work.used_bytes == 0
    np.testing.assert_allclose(vectors[7], tiny_embedder.type_vectors(["w7"])[0], rtol=1e-5, atol=1e-6)


def test_calls_from_several_threads_share_the_limit():
    work = WorkingMemory(100)
    inside, most = [], []
    lock = threading.Lock()

    def call() -> None:
        with work.use(60):
            with lock:
                inside.append(1)
                most.append(len(inside))
            time.sleep(0.05)
            with lock:
                inside.pop()

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert max(most) == 1 and work.used_bytes == 0  # 60 + 60 > 100: one at a time
    with work.use(500):  # larger than the limit (a startup model): runs when nothing else does
        assert work.used_bytes == 500


def test_the_wide_models_options_as_written(tmp_path):
    """With a highway of 16,384 x 16,384 and two LSTM layers the same options describe 547M parameters: the
    parameter cap refuses them first."""
    options = json.loads(json.dumps(WIDE))
    options["char_cnn"]["n_highway"], options["lstm"]["n_layers"] = 1, 2
    config = BiLMConfig.from_dict(options)
    assert config.num_parameters() == 546_948_132
    with pytest.raises(
        ValueError,
        match=r"546,948,132 parameters \(2.0 GiB in float32\), over this server's budget "
        r"of 200,000,000 parameters",
    ):
        config.check_budget(200_000_000)


# ---- the registry with the app's LoadedModel and a clock of the test's own ---------------------------------------
class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _model(key: str, mb: int):
    import torch

    from app.serving.startup import LoadedModel

    class _E:
        name = key
        bilm = torch.nn.Linear(mb * 2**18, 1, bias=False)  # mb MB of float32

    return LoadedModel(key, _E(), "uploaded")


def _load(reg, session: str, key: str, mb: int, name: str):
    """``session`` loads a model of ``mb`` MB into ``reg`` (reserved, built, claimed)."""
    return reg.load(session, key, mb * 2**20, lambda: _model(key, mb), name, "uploaded")


def test_registry_never_evicts_a_model_in_use_and_tells_idle_owners():
    from app.serving.memory import ModelBudgetError, ModelRegistry

    clock, active = _Clock(), {"a", "b", "c"}
    reg = ModelRegistry(max_bytes=20 * 2**20, idle_seconds=600, clock=clock, is_active=lambda s: s in active)
    for session, key in (("a", "m1"), ("b", "m2")):
        _load(reg, session, key, 8, f"{session}.hdf5")
    clock.now = 300
    with pytest.raises(
        ModelBudgetError,
        match=r"in use by other sessions \(16 of 20 MB, counting models being "
        r"loaded; this model needs 8 MB\)",
    ):
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

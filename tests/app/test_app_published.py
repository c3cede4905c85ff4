"""The published ELMo models in the explorer (AppTest): the model panel's list, a cached one opened by the radio or
by a link (model=small), the Download button with downloads allowed and refused, the startup model named by
ELMO_EXPLORER_MODEL, the server's limits, and ``make app MODEL=...``.

The "published" models here are the reference test model served in the published layout by a local mirror
(tests/mirror.py, on 127.0.0.1): ``ELMO_CORE_BASE_URL`` points at it and ``ELMO_CORE_CACHE`` at the test's own
folder, so nothing leaves the machine and the user's cache is never seen. Small and medium are used because the
table knows no exact size for them (Original's weights must be 374,434,792 bytes, which the test model is not).
"""

from __future__ import annotations

import os
import subprocess
import threading

import numpy as np
import pytest

from app.explore import inputs, mixing
from app.render.safe import shown
from app.serving import downloads as downloads_module
from app.serving import limits, memory, models, published, settings
from app.session import keys
from elmo_core.model import published as store
from elmo_core.model import published_table as table
from elmo_core.model.download import Policy
from tests.conftest import ALLENNLP, ROOT, frame_of, no_errors, start_app
from tests.mirror import Mirror

pytestmark = pytest.mark.download_server

QUICK = Policy(connect_timeout=2, read_timeout=5, retries=2, backoff=0.01)


@pytest.fixture(scope="module")
def mirror():
    """The reference test model under small's and medium's published paths."""
    files = {}
    for name in ("small", "medium"):
        paths = table.PUBLISHED[name].paths()
        files[paths["options.json"]] = (ALLENNLP / "options.json").read_bytes()
        files[paths["weights.hdf5"]] = (ALLENNLP / "lm_weights.hdf5").read_bytes()
    with Mirror(files) as m:
        yield m


@pytest.fixture
def env(app_env, monkeypatch, tmp_path, mirror, fresh_caches):
    """The app on the shipped default (so that the panel offers named models), the mirror as the published
    models' server, an empty cache of this test's own."""
    monkeypatch.delenv("ELMO_EXPLORER_OPTIONS")
    monkeypatch.delenv("ELMO_EXPLORER_WEIGHTS")
    monkeypatch.setenv("ELMO_CORE_BASE_URL", mirror.url)
    monkeypatch.setenv("ELMO_CORE_CACHE", str(tmp_path / "cache"))
    return mirror


def cache(name: str) -> None:
    store.download(name, policy=QUICK)


def requests_for(mirror: Mirror, name: str) -> list[str]:
    paths = set(table.PUBLISHED[name].paths().values())
    return [r.path for r in mirror.requests if r.path in paths]


def sidebar_text(at) -> str:
    parts = [
        shown(e.value)
        for kind in ("markdown", "caption", "warning", "info", "error", "success")
        for e in getattr(at.sidebar, kind)
    ]
    return "\n".join(parts)


def visitor_command(name: str) -> str:
    """The command that downloads ``name`` as the page shows it to a visitor (the server's folder and mirror named
    in words)."""
    return settings.for_visitor(store.download_command(name))


def start(**query):
    return start_app(ex="bank", word="bank", **query)


def test_the_panel_lists_the_published_models_and_downloads_are_off_by_default(env):
    cache("small")
    before = len(env.requests)
    at = start()
    no_errors(at)
    assert list(at.radio(key="bundled_model").options) == ["default", "lm-only", "small"]
    assert at.radio(key="bundled_model").value == "default" and frame_of(at).model_key == "default"
    text = sidebar_text(at)
    for line in (
        "**Small** · 13.6M parameters · about 54 MB",
        "**Medium** · 28.0M parameters · about 112 MB",
        "**Original** · 93.6M parameters · 374 MB",
        "**Original (5.5B)** · 93.6M parameters · about 374 MB",
    ):
        assert line in text
    assert "Downloaded: pick “small” under Model above." in text
    # the uncached ones show the command, as code
    captions = [str(c.value) for c in at.sidebar.caption]
    for name in ("medium", "original", "original-5.5b"):
        assert any(
            shown(c).startswith("Not downloaded on this server. The operator can run")
            and c.endswith(f"`{visitor_command(name)}`")
            for c in captions
        ), name
    # the command names this server's cache and mirror, so that it fills the cache the server reads
    assert store.download_command("medium").endswith(
        f"--cache-dir {store.resolve_cache_dir()} --base-url {table.resolve_base_url()}"
    )  # the page says which without naming the server's folder or mirror (tests/app/test_server_paths.py)
    assert visitor_command("medium").endswith("--cache-dir the server's model cache --base-url the server's mirror")
    assert "Downloading from this page is off on this server" in text
    assert not [b for b in at.sidebar.button if (b.key or "").startswith("download_")]
    with pytest.raises(PermissionError, match="ELMO_EXPLORER_ALLOW_DOWNLOADS=1"):
        published.start_download("medium")  # no button, and no way around it
    assert len(env.requests) == before  # nothing fetched by the page


def test_the_download_button_runs_in_the_background_once_for_every_session(env, monkeypatch):
    """Two sessions press Download; one download runs, in a background thread, while both pages keep working and
    show its progress; when it ends the model is in the radio of both."""
    monkeypatch.setenv("ELMO_EXPLORER_ALLOW_DOWNLOADS", "1")
    gate = threading.Event()
    real = downloads_module._library_fetch

    def held(name, **callbacks):  # the real download, held back until both sessions have looked
        assert gate.wait(60)
        return real(name, **callbacks)

    monkeypatch.setattr(downloads_module, "_library_fetch", held)
    alice, bob = start(), start()
    assert alice.button(key="download_medium").label == "Download (about 112 MB)"
    alice.button(key="download_medium").click().run()
    no_errors(alice)
    assert published.downloads().running() == ["medium"]
    assert shown(alice.sidebar.progress[0].text) == "medium: starting the download"
    bob.button(key="download_medium").click().run()  # drawn before alice pressed: bob's press joins hers
    no_errors(bob)
    assert shown(bob.sidebar.progress[0].text) == "medium: starting the download"
    bob.slider(key="explorer_w_2").set_value(1.0).run()  # the page stays usable meanwhile
    no_errors(bob)
    assert frame_of(bob).s[2] > frame_of(bob).s[0]
    gate.set()
    assert published.downloads().wait("medium", 60).finished
    for at in (alice.run(), bob.run()):
        no_errors(at)
        assert list(at.radio(key="bundled_model").options) == ["default", "lm-only", "medium"]
        assert "Downloaded: pick “medium” under Model above." in sidebar_text(at)
        assert not at.sidebar.progress
    assert sorted(requests_for(env, "medium")) == sorted(table.PUBLISHED["medium"].paths().values())  # once each
    assert store.cache_entry("medium").state == "cached"


def test_a_failed_download_says_why_in_one_line(env, monkeypatch):
    from tests.mirror import Fault

    monkeypatch.setenv("ELMO_EXPLORER_ALLOW_DOWNLOADS", "1")
    env.add_fault(table.PUBLISHED["medium"].paths()["options.json"], Fault("status", status=404))
    at = start()
    at.button(key="download_medium").click().run()
    assert published.downloads().wait("medium", 60).error
    at.run()
    no_errors_but_the_download(at)
    error = shown(at.sidebar.error[0].value)
    assert error == "medium: download failed: the server answered 404 Not Found (the server's mirror)"  # URL: log
    assert "\n" not in error and "Traceback" not in error
    assert at.button(key="download_medium")  # it can be tried again
    assert store.cache_entry("medium").state == "missing"


def no_errors_but_the_download(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == len(at.sidebar.error) == 1  # the one error box is the download's, in the sidebar


def test_a_cached_model_opens_from_the_radio_and_from_a_link_with_one_copy_in_memory(env, embedder):
    cache("small")
    at = start()
    at.radio(key="bundled_model").set_value("small").run()
    no_errors(at)
    frame = frame_of(at)
    assert frame.model_key == "published:small" and frame.vectors.shape[1] == 32
    # the fixture biLM's own vectors of the first occurrence, equal layer weights
    lines = inputs.parse_input(at.session_state[keys.SENTENCES]).lines
    first = inputs.find_occurrences(lines, "bank")[0]
    acts = embedder.embed_sentence(list(lines[first.line].tokens))
    np.testing.assert_allclose(
        frame.vectors[0], mixing.scalar_mix(acts[:, first.position], [0, 0, 0], 1.0), rtol=1e-5, atol=1e-6
    )
    assert at.query_params["model"] == "small"
    text = sidebar_text(at)
    assert "**small**  \npublished ELMo Small (AllenNLP), from this server's cache" in text
    assert "the cached options.json describes a model of 105,120 parameters" in text  # said, not hidden
    assert limits.model_registry().used_bytes >= 105_120 * 4  # counted in the server's memory for loaded models
    other = start(model="small", tab="compare")  # the link, in a new AppTest (same session id: AppTest has one)
    no_errors(other)
    assert other.radio(key="bundled_model").value == "small" and frame_of(other).model_key == "published:small"
    sides = other.session_state[keys.private("compare_sides")]
    assert [s.key for s in sides] == ["published:small", "default"]  # the Compare tab offers it, beside the default
    at.radio(key="bundled_model").set_value("default").run()
    assert frame_of(at).model_key == "default" and "model" not in at.query_params
    assert limits.model_registry().used_bytes == 0  # released: nobody uses it


def _count_calls(monkeypatch, module, name: str, calls: dict) -> None:
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


def test_a_link_to_a_published_model_resolves_it_once_per_run_and_reads_it_once(env, monkeypatch):
    from app.serving import startup

    cache("small")
    calls: dict[str, int] = {}
    _count_calls(monkeypatch, models, "_resolve", calls)  # the session's model, from the registry or the choice
    _count_calls(monkeypatch, models, "load_published_model", calls)
    _count_calls(monkeypatch, startup, "load_bilm_from_elmo_files", calls)  # elmo_core: the weights read
    at = start(model="small")
    no_errors(at)
    assert frame_of(at).model_key == "published:small"
    assert calls["_resolve"] == 1 and calls["load_published_model"] == 1  # the panel's; the page took that model
    assert calls["load_bilm_from_elmo_files"] == 1
    at.run()  # a rerun: resolved once more, found in the registry as this session's model, nothing read
    assert calls["_resolve"] == 2 and calls["load_published_model"] == 1 and calls["load_bilm_from_elmo_files"] == 1


def test_a_published_model_unloaded_to_make_room_puts_the_radio_back(env, monkeypatch):
    """The registry's rule for loaded models holds for published ones: idle, it may make room for another
    session's model; its session is told, and its radio goes back to the startup model (not a silent reload)."""
    cache("small")
    monkeypatch.setenv("ELMO_EXPLORER_MODEL_MB", "1")
    monkeypatch.setenv("ELMO_EXPLORER_MODEL_IDLE_MIN", "0")
    at = start()
    at.radio(key="bundled_model").set_value("small").run()
    assert frame_of(at).model_key == "published:small"
    at.switch_page("views/layers.py").run()  # the other page runs on it too
    no_errors(at)
    at.switch_page("views/explorer.py").run()
    registry = limits.model_registry()
    registry.cancel(registry.reserve("someone else", "upload:x", 800_000))  # small (0.4 MB) idle: it goes
    at.run()
    no_errors(at)
    assert at.radio(key="bundled_model").value == "default" and frame_of(at).model_key == "default"
    assert "Your model “small” was unloaded to make room for another user's model" in sidebar_text(at)
    at.run()
    assert frame_of(at).model_key == "default" and limits.model_registry().used_bytes == 0  # not reloaded


def test_sessions_share_one_copy_of_a_published_model(env):
    cache("small")
    alice = published.load_published_model("small", session="alice")
    bob = published.load_published_model("small", session="bob")
    assert alice.embedder is bob.embedder and alice.key == bob.key == "published:small"
    one_copy = memory.model_bytes(alice.embedder.bilm)
    assert limits.model_registry().used_bytes == one_copy
    models.release_model("alice")
    assert limits.model_registry().used_bytes == one_copy  # bob still holds it
    assert models.current_model(session="bob")[0].embedder is alice.embedder
    models.release_model("bob")
    assert limits.model_registry().used_bytes == 0


def test_a_link_to_a_model_not_downloaded_keeps_the_default_and_says_so(env):
    at = start(model="small")
    no_errors(at)
    assert frame_of(at).model_key == "default" and at.radio(key="bundled_model").value == "default"
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert (
        "The link asks for the model 'small', which is not downloaded on this server (the operator can run: "
        f"{visitor_command('small')}). Using default."
    ) in warnings
    hostile = start(model="../../etc/passwd")
    no_errors(hostile)
    assert frame_of(hostile).model_key == "default"
    assert "unknown model '../../etc/passwd'" in " ".join(shown(w.value) for w in hostile.warning)


def test_a_damaged_cached_model_is_not_offered_and_says_how_to_mend_it(env):
    cache("small")
    weights = store.cache_entry("small").weights
    weights.write_bytes(weights.read_bytes()[:1000])  # cut: the size no longer matches the manifest
    at = start(model="small")
    no_errors(at)
    assert list(at.radio(key="bundled_model").options) == ["default", "lm-only"] and frame_of(at).model_key == "default"
    assert (
        "The link asks for the model 'small', which is damaged in this server's cache (the operator can run: "
        f"{visitor_command('small')} --force). Using default."
    ) in " ".join(shown(w.value) for w in at.warning)
    caption = next(str(c.value) for c in at.sidebar.caption if "Damaged" in shown(c.value))
    assert shown(caption).startswith("Damaged in this server's cache (weights.hdf5 has 1,000 bytes, but ")
    assert caption.endswith(f"`{visitor_command('small')} --force`")


def test_a_model_over_the_servers_limits_is_refused_with_a_message(env, monkeypatch):
    cache("small")
    monkeypatch.setenv("ELMO_EXPLORER_MAX_PARAMETERS", "100000")
    monkeypatch.setenv("ELMO_EXPLORER_MODEL_MB", "100")
    monkeypatch.setenv("ELMO_EXPLORER_ALLOW_DOWNLOADS", "1")
    at = start()
    at.radio(key="bundled_model").set_value("small").run()
    assert not at.exception
    assert shown(at.sidebar.error[0].value) == (
        "Could not load small: options.json describes a model of 105,120 parameters (0.0 GiB in float32), over "
        "this server's budget of 100,000 parameters  \nStill using **default**."
    )
    assert at.radio(key="bundled_model").value == "default" and frame_of(at).model_key == "default"
    assert limits.model_registry().used_bytes == 0
    text = sidebar_text(at)
    assert (
        "Larger than this server allows for a loaded model (93,600,848 parameters; the limit is 100,000, "
        "ELMO_EXPLORER_MAX_PARAMETERS)."
    ) in text
    buttons = [b.key for b in at.sidebar.button if (b.key or "").startswith("download_")]
    assert buttons == []  # the table's Medium (28M parameters) is over 100,000 too: no button that can only fail


NOT_CACHED = (
    "ELMO_EXPLORER_MODEL=original: the published model “original” is not downloaded on this server, so the "
    "server started on the default model. The operator can run: {command} (or "
    "make app MODEL=original), then restart it."
)
NOT_A_NAME = (
    "ELMO_EXPLORER_MODEL=orignal is not a model name (bundled: default, lm-only; published: small, medium, "
    "original, original-5.5b); the server started on the default model."
)


@pytest.mark.parametrize(
    "name, cached, key, said",
    [
        ("small", True, "published:small", ""),
        ("lm-only", False, "bundled:lm-only", ""),
        ("original", False, "default", NOT_CACHED),
        ("orignal", False, "default", NOT_A_NAME),
    ],
)
def test_the_startup_model_named_by_the_environment(env, monkeypatch, caplog, name, cached, key, said):
    if cached:
        cache(name)
    monkeypatch.setenv("ELMO_EXPLORER_MODEL", name)
    with caplog.at_level("WARNING", logger="app.serving.startup"):
        at = start()
    no_errors(at)
    assert frame_of(at).model_key == key and at.radio(key="bundled_model").value == key.rpartition(":")[2]
    if said:  # never downloaded by the app: the default, and why, in the log and on the page
        logged = said.replace("{command}", store.download_command("original"))  # the operator's: with the folders
        assert logged in [r.getMessage() for r in caplog.records]
        said = said.replace("{command}", visitor_command("original"))
        assert said in " ".join(shown(w.value) for w in at.sidebar.warning)
        assert "model" not in at.query_params
        return
    assert at.query_params["model"] == name  # the link names the model, for a server that starts on another
    at.radio(key="bundled_model").set_value("default").run()
    no_errors(at)
    assert frame_of(at).model_key == "bundled:default" and at.query_params["model"] == "default"


def test_make_app_with_a_model_downloads_it_first_and_without_one_is_unchanged():
    def dry(*args: str) -> str:
        # run from `make test` too: a nested make would print "Entering directory" lines around the recipe
        env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
        return subprocess.run(
            ["make", "--no-print-directory", "-n", "-o", ".venv/.installed", "app", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout

    plain = dry()
    assert "elmo_core download" not in plain and "ELMO_EXPLORER_MODEL" not in plain
    assert plain.strip().startswith(".venv/bin/python -m app.launch --server.port 8501")
    named = dry("MODEL=original")
    assert '.venv/bin/python -m elmo_core download "original"' in named
    assert 'ELMO_EXPLORER_MODEL="original" .venv/bin/python -m app.launch' in named

"""The published models' cache, download command and ``Embedder.published``, against a local mirror
that serves the reference test model in the published layout. Nothing here leaves 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from elmo_core import Embedder
from elmo_core.model import published as store
from elmo_core.model import published_table as table
from elmo_core.model.download import DownloadError, Policy
from tests.conftest import FIXTURES
from tests.mirror import Fault, Mirror

pytestmark = pytest.mark.download_server

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = FIXTURES / "allennlp-elmo" / "options.json"
WEIGHTS = FIXTURES / "allennlp-elmo" / "lm_weights.hdf5"
QUICK = Policy(connect_timeout=2, read_timeout=2, retries=3, backoff=0.01)


def layout(name: str, options: bytes | None = None, weights: bytes | None = None) -> dict[str, bytes]:
    """The reference test model's files under ``name``'s published paths."""
    paths = table.PUBLISHED[name].paths()
    return {
        paths["options.json"]: OPTIONS.read_bytes() if options is None else options,
        paths["weights.hdf5"]: WEIGHTS.read_bytes() if weights is None else weights,
    }


def weights_path(name: str) -> str:
    return table.PUBLISHED[name].paths()["weights.hdf5"]


def cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "elmo_core", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


# ---- the cache folder ----------------------------------------------------------------------------------
def test_the_cache_folder_is_the_argument_then_the_variable_then_the_user_cache(monkeypatch, tmp_path):
    import platformdirs

    monkeypatch.delenv("ELMO_CORE_CACHE", raising=False)
    assert store.resolve_cache_dir() == Path(platformdirs.user_cache_dir("elmo-core", appauthor=False))
    monkeypatch.setenv("ELMO_CORE_CACHE", str(tmp_path / "env"))
    assert store.resolve_cache_dir() == tmp_path / "env"
    assert store.resolve_cache_dir(tmp_path / "arg") == tmp_path / "arg"


# ---- download into the cache, and loading from it -----------------------------------------------------------
def test_download_then_published_embeds_exactly_like_the_files(tmp_path, fixture_sentences):
    with Mirror(layout("small")) as mirror:
        entry = store.download("small", tmp_path, mirror.url, policy=QUICK)
    assert entry.state == "cached"
    assert entry.weights.read_bytes() == WEIGHTS.read_bytes()
    assert entry.options.read_bytes() == OPTIONS.read_bytes()
    manifest = entry.manifest()
    assert manifest["files"]["weights.hdf5"]["sha256"] == store.sha256_of(WEIGHTS)
    assert manifest["files"]["weights.hdf5"]["bytes"] == WEIGHTS.stat().st_size
    assert manifest["parameters"] == 105_120
    assert sorted(p.name for p in entry.folder.iterdir()) == [".lock", "manifest.json", "options.json", "weights.hdf5"]
    assert store.mismatch_note(entry) == (
        "note: the cached options.json describes a model of 105,120 parameters, "
        "not the 13,593,296 of the published Small; it is used as it is"
    )
    ours = Embedder.published("small", cache_dir=tmp_path, device="cpu")
    reference = Embedder.from_elmo_files(OPTIONS, WEIGHTS, device="cpu")
    assert ours.name == "small"
    sentences = fixture_sentences[:6]
    for a, b in zip(ours.embed_batch(sentences), reference.embed_batch(sentences)):
        assert a.shape == b.shape and np.array_equal(a, b)


def test_published_never_touches_the_network_without_download(tmp_path, monkeypatch):
    with Mirror(layout("small")) as mirror:
        monkeypatch.setenv("ELMO_CORE_BASE_URL", mirror.url)
        with pytest.raises(FileNotFoundError, match="python -m elmo_core download small"):
            Embedder.published("small", cache_dir=tmp_path)
        assert mirror.requests == []
        embedder = Embedder.published("small", cache_dir=tmp_path, download=True, device="cpu")
        assert len(mirror.requests) == 2 and embedder.num_layers == 3


def test_a_second_download_of_a_cached_model_fetches_nothing(tmp_path):
    with Mirror(layout("small")) as mirror:
        store.download("small", tmp_path, mirror.url, policy=QUICK)
        store.download("small", tmp_path, mirror.url, policy=QUICK)
        assert len(mirror.requests) == 2
        store.download("small", tmp_path, mirror.url, policy=QUICK, force=True)
        assert len(mirror.requests) == 4 and all("Range" not in r.headers for r in mirror.requests)


def test_weights_that_do_not_match_their_options_never_enter_the_cache(tmp_path):
    import h5py

    short = tmp_path / "short.hdf5"
    with h5py.File(WEIGHTS) as src, h5py.File(short, "w") as dst:

        def copy(name, obj):
            if isinstance(obj, h5py.Dataset) and name != "CNN_high_0/W_carry":
                dst.create_dataset(name, data=obj[()])

        src.visititems(copy)
    bad = {
        "not hdf5": (b"\x00" * 1000, "weights.hdf5: not a readable HDF5 weights file"),
        "a dataset missing": (short.read_bytes(), "weights.hdf5: dataset 'CNN_high_0/W_carry' is missing"),
    }
    for label, (body, message) in bad.items():
        folder = tmp_path / label
        with Mirror(layout("medium", weights=body)) as mirror:
            with pytest.raises(DownloadError, match="refused: " + message):
                store.download("medium", folder, mirror.url, policy=QUICK)
        assert store.cache_entry("medium", folder).state == "missing"
        assert sorted(p.name for p in (folder / "medium").iterdir()) == [".lock", "options.json"]


def test_a_nan_in_the_weights_is_refused(tmp_path):
    import h5py

    broken = tmp_path / "broken.hdf5"
    broken.write_bytes(WEIGHTS.read_bytes())
    with h5py.File(broken, "r+") as f:
        f["CNN_proj/W_proj"][0, 0] = np.nan
    with Mirror(layout("small", weights=broken.read_bytes())) as mirror:
        with pytest.raises(DownloadError, match="'CNN_proj/W_proj' contains NaN"):
            store.download("small", tmp_path / "cache", mirror.url, policy=QUICK)


def test_a_known_size_that_disagrees_refuses_the_file(tmp_path):
    with Mirror(layout("original")) as mirror:
        with pytest.raises(DownloadError, match="known to be 374,434,792: it is not the published file"):
            store.download("original", tmp_path, mirror.url, policy=QUICK)
    assert store.cache_entry("original", tmp_path).state == "missing"


def test_an_interrupted_download_is_resumed_and_ends_with_the_exact_bytes(tmp_path):
    with Mirror(layout("small")) as mirror:
        mirror.add_fault(weights_path("small"), Fault("drop", after=250_000))
        entry = store.download("small", tmp_path, mirror.url, policy=QUICK, sleep=lambda s: None)
    assert entry.weights.read_bytes() == WEIGHTS.read_bytes()
    ranges = [r.headers.get("Range") for r in mirror.requests if r.path == weights_path("small")]
    assert ranges[0] is None and ranges[1].startswith("bytes=") and ranges[1] != "bytes=0-"
    assert not list(entry.folder.glob("*.part*"))


def test_an_html_page_instead_of_a_file_is_named_as_such(tmp_path):
    page = b"<!DOCTYPE html>\n<html><head><title>Sign in - Proxy</title></head><body>...</body></html>\n"
    with Mirror(layout("small", options=page)) as mirror:
        with pytest.raises(DownloadError) as info:
            store.download("small", tmp_path, mirror.url, policy=QUICK)
    message = str(info.value)
    assert message.startswith("the server sent an HTML page titled 'Sign in - Proxy' (application/octet-stream)")
    assert ".part" not in message and "not valid JSON" not in message
    assert info.value.url == mirror.url + table.PUBLISHED["small"].paths()["options.json"]
    assert sorted(p.name for p in (tmp_path / "small").iterdir()) == [".lock"]


def test_a_damaged_cache_is_detected(tmp_path):
    with Mirror(layout("small")) as mirror:
        entry = store.download("small", tmp_path, mirror.url, policy=QUICK)
        data = bytearray(entry.weights.read_bytes())
        data[-100] ^= 0xFF  # same size: only a rehash sees it
        entry.weights.write_bytes(bytes(data))
        assert store.cache_entry("small", tmp_path).state == "cached"
        [problem] = store.verify("small", tmp_path)
        assert problem.startswith("weights.hdf5: sha256 ")
        entry.weights.write_bytes(bytes(data[:-1]))  # a byte short: loading sees it
        assert store.cache_entry("small", tmp_path).detail == (
            f"weights.hdf5 has {len(data) - 1:,} bytes, but {len(data):,} were verified"
        )
        with pytest.raises(ValueError, match="is damaged: weights.hdf5 has .* --force"):
            Embedder.published("small", cache_dir=tmp_path)
        entry = store.download("small", tmp_path, mirror.url, policy=QUICK)  # a damaged copy is fetched again
        assert entry.weights.read_bytes() == WEIGHTS.read_bytes() and store.verify("small", tmp_path) == []


def test_a_read_only_cache_folder_gives_one_clear_error(tmp_path, monkeypatch):
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root ignores the mode bits: make the folder's creation fail instead

            def refuse(self, *args, **kwargs):
                raise PermissionError(13, "Permission denied", str(self))

            monkeypatch.setattr(Path, "mkdir", refuse)
        with Mirror(layout("small")) as mirror:
            with pytest.raises(
                DownloadError,
                match=r"cannot write to the cache folder .*ro/small \(Permission "
                r"denied\); choose a writable one with --cache-dir",
            ):
                store.download("small", locked, mirror.url, policy=QUICK)
        assert mirror.requests == []
    finally:
        locked.chmod(0o700)


def test_a_dangling_link_as_the_cache_folder_is_named_as_such(tmp_path):
    cache = tmp_path / "cache"
    cache.symlink_to(tmp_path / "gone")
    with Mirror(layout("small")) as mirror:
        with pytest.raises(DownloadError) as info:
            store.download("small", cache, mirror.url, policy=QUICK)
    assert str(info.value) == (
        f"the cache folder {cache} is a symbolic link to {tmp_path / 'gone'}, which does not exist; create that "
        "folder, or choose another one with --cache-dir or ELMO_CORE_CACHE"
    )
    assert info.value.url is None and mirror.requests == []


def test_a_missing_model_names_the_download_command_for_the_cache_and_mirror_asked_for(tmp_path, monkeypatch):
    monkeypatch.delenv("ELMO_CORE_CACHE", raising=False)
    monkeypatch.delenv("ELMO_CORE_BASE_URL", raising=False)
    with pytest.raises(FileNotFoundError) as info:
        Embedder.published("small", cache_dir=tmp_path / "my cache", base_url="http://127.0.0.1:8765/m")
    assert str(info.value).endswith(
        f"download it with: python -m elmo_core download small --cache-dir '{tmp_path}/my cache' "
        "--base-url http://127.0.0.1:8765/m/"
    )


# ---- the command line ----------------------------------------------------------------------------------------
def test_the_command_downloads_through_a_dropped_connection(tmp_path):
    with Mirror(layout("small")) as mirror:
        mirror.add_fault(weights_path("small"), Fault("drop", after=250_000))
        run = cli("download", "small", "--base-url", mirror.url, env={"ELMO_CORE_CACHE": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert f"small: verified and cached at {tmp_path / 'small'} (450.9 kB)" in run.stdout
    assert "Connection broken" in run.stderr and "retrying in 1 s (attempt 2 of 4)" in run.stderr
    assert (tmp_path / "small" / "weights.hdf5").read_bytes() == WEIGHTS.read_bytes()
    assert not list((tmp_path / "small").glob("*.part*"))
    listing = cli("download", "--list", "--cache-dir", str(tmp_path))
    assert listing.returncode == 0
    rows = {line.split()[0]: line for line in listing.stdout.splitlines()[1:5]}
    assert rows["small"].endswith(f"yes: {tmp_path / 'small'}") and rows["medium"].endswith(" no")
    assert "374.4 MB" in rows["original"] and "~112.1 MB" in rows["medium"]
    assert " 450.9 kB  yes" in rows["small"]  # a cached model: its real size
    verify = cli("download", "small", "--verify", "--cache-dir", str(tmp_path))
    assert verify.returncode == 0 and "small: ok" in verify.stdout
    (tmp_path / "small" / "options.json").write_text(OPTIONS.read_text().replace('"relu"', '"tanh"'))
    verify = cli("download", "small", "--verify", "--cache-dir", str(tmp_path))
    assert verify.returncode == 1 and "small: DAMAGED: options.json: sha256" in verify.stderr


def test_the_command_fails_in_one_line_within_a_minute_when_unreachable(tmp_path):
    with Mirror({}) as mirror:
        url = mirror.url  # closed on leaving: nothing listens there any more
    start = time.monotonic()
    run = cli("download", "small", "--base-url", url, "--cache-dir", str(tmp_path))
    took = time.monotonic() - start
    assert run.returncode == 1 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr
    assert lines[0].startswith("error: could not download small: gave up after 4 attempts: ")
    assert "Connection refused" in lines[0] and url in lines[0] and "To work offline" in lines[0]
    assert took < 60
    assert store.cache_entry("small", tmp_path).state == "missing"


def test_the_command_refuses_unknown_names_and_bad_urls(tmp_path):
    run = cli("download", "orignal", "--cache-dir", str(tmp_path))
    assert run.returncode == 2 and "did you mean 'original'" in run.stderr and "Traceback" not in run.stderr
    run = cli("download", "small", "--base-url", "ftp://x/", "--cache-dir", str(tmp_path))
    assert run.returncode == 2 and "http:// or https://" in run.stderr and "Traceback" not in run.stderr
    run = cli("download", "small", "--base-url", "http://", "--cache-dir", str(tmp_path))
    assert run.returncode == 2 and run.stderr.strip() == (
        "error: the base URL 'http://' names no host; give one such as https://mirror.example.org/elmo/"
    )
    assert not (tmp_path / "small").exists()


@pytest.mark.multiprocess
def test_two_processes_downloading_end_with_one_good_copy(tmp_path):
    with Mirror(layout("small")) as mirror:
        mirror.add_fault(weights_path("small"), Fault("drop", after=100_000))  # the first one takes a while
        env = {**os.environ, "ELMO_CORE_CACHE": str(tmp_path)}
        args = [sys.executable, "-m", "elmo_core", "download", "small", "--base-url", mirror.url]
        procs = [
            subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert (tmp_path / "small" / "weights.hdf5").read_bytes() == WEIGHTS.read_bytes()
    weight_requests = [r for r in mirror.requests if r.path == weights_path("small")]
    assert len(weight_requests) == 2  # one process fetched (once dropped, once resumed); the other waited
    assert sum("already in the cache" in out or "another process is downloading" in err for out, err in outputs) == 1


def test_embed_takes_a_cached_published_model(tmp_path):
    with Mirror(layout("small")) as mirror:
        store.download("small", tmp_path / "cache", mirror.url, policy=QUICK)
    (tmp_path / "in.txt").write_text("The bank of the river .\n")
    run = cli(
        "embed",
        str(tmp_path / "in.txt"),
        str(tmp_path / "out.hdf5"),
        "--model",
        "small",
        "--device",
        "cpu",
        "--quiet",
        env={"ELMO_CORE_CACHE": str(tmp_path / "cache")},
    )
    assert run.returncode == 0, run.stderr
    import h5py

    with h5py.File(tmp_path / "out.hdf5") as f:
        ours = f["0"][()]
    expected = Embedder.from_elmo_files(OPTIONS, WEIGHTS, device="cpu").embed_sentence(
        ["The", "bank", "of", "the", "river", "."]
    )
    np.testing.assert_allclose(ours, expected, atol=1e-6)
    run = cli(
        "embed",
        str(tmp_path / "in.txt"),
        str(tmp_path / "o2.hdf5"),
        "--model",
        "medium",
        env={"ELMO_CORE_CACHE": str(tmp_path / "cache")},
    )
    assert run.returncode == 2 and "python -m elmo_core download medium" in run.stderr
    assert not (tmp_path / "o2.hdf5").exists()
    json.loads(json.dumps(run.stderr))  # one plain line, nothing else


def test_the_download_command_names_a_cache_and_mirror_that_are_not_the_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("ELMO_CORE_CACHE", raising=False)
    monkeypatch.delenv("ELMO_CORE_BASE_URL", raising=False)
    assert store.download_command("Small") == "python -m elmo_core download small"
    monkeypatch.setenv("ELMO_CORE_CACHE", str(tmp_path / "my cache"))
    monkeypatch.setenv("ELMO_CORE_BASE_URL", "http://127.0.0.1:8765")
    assert store.download_command("small") == (
        f"python -m elmo_core download small --cache-dir '{tmp_path}/my cache' --base-url http://127.0.0.1:8765/"
    )


def test_files_left_without_a_manifest_are_fetched_again_from_the_mirror_now_used(tmp_path):
    """An interrupted run left a whole options.json from mirror A; mirror B serves other options: B's are kept,
    never a splice of the two."""
    other = OPTIONS.read_text().replace('"relu"', '"tanh"').encode()
    with Mirror(layout("small", options=other)) as a:
        a.add_fault(weights_path("small"), Fault("drop", times=None, after=200_000))
        with pytest.raises(DownloadError):
            store.download("small", tmp_path, a.url, policy=Policy(retries=0))
    entry = store.cache_entry("small", tmp_path)
    assert entry.state == "missing" and (entry.folder / "options.json").read_bytes() == other
    assert entry.detail.endswith("bytes of weights.hdf5 downloaded; the next download resumes them")
    listing = cli("download", "--list", "small", "--cache-dir", str(tmp_path))
    assert "downloaded; the next download resumes them" in listing.stdout and "medium" not in listing.stdout
    with Mirror(layout("small")) as b:
        entry = store.download("small", tmp_path, b.url, policy=QUICK)
    assert entry.options.read_bytes() == OPTIONS.read_bytes() and entry.weights.read_bytes() == WEIGHTS.read_bytes()
    assert "Range" not in [r for r in b.requests if r.path == weights_path("small")][0].headers  # another server


def test_an_unwritable_cache_is_one_line_without_network_advice(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    run = cli("download", "small", "--cache-dir", str(tmp_path / "file"), "--base-url", "http://127.0.0.1:9/")
    assert run.returncode == 1
    assert run.stderr.strip() == (
        f"error: could not download small: cannot write to the cache folder "
        f"{tmp_path / 'file' / 'small'} (Not a directory); choose a writable one with "
        "--cache-dir or ELMO_CORE_CACHE"
    )


def test_ctrl_c_keeps_what_arrived_and_says_so(tmp_path, monkeypatch, capsys):
    from elmo_core.cli import main

    def interrupted(name, cache_dir, *args, **kwargs):
        folder = store.resolve_cache_dir(cache_dir) / name
        folder.mkdir(parents=True)
        (folder / "weights.hdf5.part").write_bytes(b"x" * 1234)
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "download", interrupted)
    assert main(["download", "small", "--cache-dir", str(tmp_path)]) == 130
    assert capsys.readouterr().err.strip() == (
        "interrupted: small is not in the cache; the 1,234 bytes received are kept and the next download resumes them"
    )

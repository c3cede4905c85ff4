"""elmo_core.cli: `python -m elmo_core embed` (one HDF5 dataset per input line, like the old `allennlp elmo`
command) and hostile input to it (issue 10, findings 7 and 8). The other subcommands are tested with the
module they run (test_evaluate, test_probes, test_train, test_teacher)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from elmo_core import Embedder
from elmo_core.cli import main
from elmo_core.model.embed_file import plan_batches

ROOT = Path(__file__).parent.parent


@pytest.fixture
def input_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("The cat sat .\nA bank of the river .\n\nnaïve 😀\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("mode, shape0", [("--all", (3, 4, 32)), ("--top", (4, 32)), ("--average", (4, 32))])
def test_embed_modes(mode, shape0, input_file, tmp_path, allennlp_files):
    out = tmp_path / "out.hdf5"
    rc = main(
        [
            "embed",
            str(input_file),
            str(out),
            "--options",
            str(allennlp_files[0]),
            "--weights",
            str(allennlp_files[1]),
            mode,
            "--batch-size",
            "2",
            "--device",
            "cpu",
            "--quiet",
        ]
    )
    assert rc == 0
    expected_all = Embedder.from_elmo_files(*allennlp_files, device="cpu").embed_sentence("The cat sat .".split())
    with h5py.File(out) as f:
        assert sorted(k for k in f if k != "sentence_to_index") == ["0", "1", "2", "3"]
        assert f["0"].shape == shape0
        assert f["2"].shape[-2] == 0  # the empty line gives an empty array, and keys still follow lines
        reference = {"--all": expected_all, "--top": expected_all[-1], "--average": expected_all.mean(0)}[mode]
        np.testing.assert_allclose(f["0"][()], reference, atol=1e-6)
        index = json.loads(f["sentence_to_index"][()])
        assert index["A bank of the river ."] == "1"


@pytest.mark.slow
def test_embed_errors_are_messages_not_tracebacks(tmp_path, allennlp_files):
    binary = tmp_path / "bin.txt"
    binary.write_bytes(bytes(range(256)))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "elmo_core",
            "embed",
            str(binary),
            str(tmp_path / "o.hdf5"),
            "--options",
            str(allennlp_files[0]),
            "--weights",
            str(allennlp_files[1]),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode != 0 and "not UTF-8" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o.hdf5").exists()
    proc = subprocess.run(
        [sys.executable, "-m", "elmo_core", "embed", str(tmp_path / "missing.txt"), str(tmp_path / "o.hdf5")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode != 0 and "not found" in proc.stderr and "Traceback" not in proc.stderr
    junk = tmp_path / "junk.hdf5"
    junk.write_bytes(b"junk" * 10)
    (tmp_path / "in.txt").write_text("a b\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "elmo_core",
            "embed",
            str(tmp_path / "in.txt"),
            str(tmp_path / "o.hdf5"),
            "--options",
            str(allennlp_files[0]),
            "--weights",
            str(junk),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2 and "not a readable HDF5" in proc.stderr and "Traceback" not in proc.stderr


# ---- hostile input (issue 10, findings 7 and 8) ----------------------------------------------------------------


@pytest.fixture
def model_args(allennlp_files):
    return ["--options", str(allennlp_files[0]), "--weights", str(allennlp_files[1]), "--device", "cpu", "--quiet"]


def _embed(tmp_path, model_args, data: bytes, *extra) -> tuple[int, Path]:
    src = tmp_path / "in.txt"
    src.write_bytes(data)
    out = tmp_path / "out.hdf5"
    return main(["embed", str(src), str(out), *model_args, *extra]), out


def _keys(path: Path) -> list[str]:
    with h5py.File(path) as f:
        return sorted((k for k in f if k != "sentence_to_index"), key=int)


def test_line_separators_other_than_newline_do_not_make_datasets(tmp_path, model_args):
    data = "one\x0ctwo three\nfour\x85five\nsix\u2028seven\n".encode()
    rc, out = _embed(tmp_path, model_args, data)
    assert rc == 0
    assert _keys(out) == ["0", "1", "2"]  # 3 lines, 3 datasets (main: 5)
    with h5py.File(out) as f:
        assert f["0"].shape[1] == 3 and f["1"].shape[1] == 2 and f["2"].shape[1] == 2


def test_bom_and_zero_width_characters_do_not_change_vectors(tmp_path, model_args, allennlp_files):
    rc, out = _embed(tmp_path, model_args, "\ufeffThe ba\u200bnk \u200b .\r\n".encode())
    assert rc == 0
    expected = Embedder.from_elmo_files(*allennlp_files, device="cpu").embed_sentence(["The", "bank", "."])
    with h5py.File(out) as f:
        np.testing.assert_allclose(f["0"][()], expected, atol=1e-6)


@pytest.mark.parametrize(
    "value, message", [("-1", "between 1 and 4,096, got -1"), ("0", "got 0"), ("x", "whole number")]
)
def test_batch_size_is_validated(value, message, tmp_path, model_args, capsys):
    with pytest.raises(SystemExit) as info:
        _embed(tmp_path, model_args, b"a b\n", "--batch-size", value)
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out.hdf5").exists()


def _run(args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "elmo_core", "embed", *args], capture_output=True, text=True, cwd=cwd)


def _refused(args) -> str:
    """The one line ``main`` prints for a refused command, after checking its exit status 2 (usage and path
    errors, as main's docstring says)."""
    proc = _run(args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


@pytest.mark.slow
def test_bad_output_paths_are_messages(tmp_path, model_args):
    src = tmp_path / "in.txt"
    src.write_text("a b\n")
    assert "is a directory" in _refused([str(src), str(tmp_path), *model_args])
    assert "does not exist" in _refused([str(src), str(tmp_path / "no" / "out.hdf5"), *model_args])
    assert "is the input file" in _refused([str(src), str(src), *model_args])
    assert src.read_text() == "a b\n"
    os.link(src, tmp_path / "hard.txt")  # another name for the same file
    assert "is the input file" in _refused([str(src), str(tmp_path / "hard.txt"), *model_args])
    assert src.read_text() == "a b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.txt", "in.txt"]  # no partial file


@pytest.mark.slow
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_leaves_the_previous_output_and_no_partial_file(tmp_path, model_args, sig, code):
    src = tmp_path / "in.txt"
    src.write_text("the bank of the river .\n" * 200_000)
    out = tmp_path / "out.hdf5"
    out.write_bytes(b"previous output")
    proc = subprocess.Popen(
        [sys.executable, "-m", "elmo_core", "embed", str(src), str(out), *model_args, "--batch-size", "8"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not any(p.name.endswith(".partial") for p in tmp_path.iterdir()):
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)  # one signal is enough: it is taken at the next batch boundary
    assert proc.returncode == code, err
    assert "interrupted" in err and "Traceback" not in err and "Exception ignored" not in err
    assert out.read_bytes() == b"previous output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.hdf5"]


@pytest.mark.slow
def test_output_that_is_a_link_or_a_device_is_refused(tmp_path, model_args):
    src = tmp_path / "in.txt"
    src.write_text("the bank .\n")
    target = tmp_path / "target.hdf5"
    target.write_bytes(b"kept")
    link = tmp_path / "link.hdf5"
    link.symlink_to(target)
    assert "symbolic link" in _refused([str(src), str(link), *model_args])
    assert "not a regular file" in _refused([str(src), "/dev/null", *model_args])
    assert link.is_symlink() and target.read_bytes() == b"kept"
    assert Path("/dev/null").is_char_device()


def test_long_sentences_are_embedded_within_the_token_budget(tmp_path, model_args, allennlp_files, monkeypatch):
    calls = []
    real = Embedder.embed_batch

    def spy(self, sentences, batch_size=64):
        calls.append((len(sentences), max((len(s) for s in sentences), default=0)))
        return real(self, sentences, batch_size)

    monkeypatch.setattr(Embedder, "embed_batch", spy)
    words = ["the", "bank", "of", "a", "river"]
    lines = [" ".join(words[(i + k) % 5] for k in range(n)) for i, n in enumerate([30, 5, 95, 0, 7])]
    rc, out = _embed(tmp_path, model_args, ("\n".join(lines) + "\n").encode(), "--max-tokens", "40")
    assert rc == 0
    assert all(b * t <= 40 for b, t in calls), calls
    assert _keys(out) == ["0", "1", "2", "3", "4"]
    monkeypatch.undo()
    e = Embedder.from_elmo_files(*allennlp_files, device="cpu")
    with h5py.File(out) as f:
        assert f["2"].shape == (3, 95, 32)
        np.testing.assert_allclose(f["0"][()], e.embed_sentence(lines[0].split()), atol=1e-6)
        np.testing.assert_allclose(f["2"][:, :40], e.embed_sentence(lines[2].split()[:40]), atol=1e-6)
        np.testing.assert_allclose(f["2"][:, 80:], e.embed_sentence(lines[2].split()[80:]), atol=1e-6)


def test_plan_batches_bounds_every_call():
    calls = plan_batches([900] * 64, 64, 1024)
    assert len(calls) == 64 and all(len(c) == 1 for c in calls)  # one 900-token line per call, not 64 at once
    calls = plan_batches([10] * 300 + [2500], 64, 1024)
    assert all(len(c) * max(b - a for _, a, b in c) <= 1024 for c in calls)
    assert [p for c in calls for p in c if p[0] == 300] == [(300, 0, 1024), (300, 1024, 2048), (300, 2048, 2500)]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--device", "foo"], "error: unknown device 'foo'; use cpu, cuda or cuda:N"),
        (["--device", "meta"], "error: device 'meta' cannot run the biLM; use cpu, cuda or cuda:N"),
        (
            ["--checkpoint", str(ROOT / "assets" / "default")],
            "error: give one model: --model, --options with --weights, or --checkpoint",
        ),
        (
            ["--model", "orignal"],
            "error: no model 'orignal': the bundled ones are default, lm-only, the published ones",
        ),
    ],
)
@pytest.mark.slow
def test_bad_options_are_one_line_and_exit_2(extra, message, tmp_path, model_args):
    src = tmp_path / "in.txt"
    src.write_text("a b\n")
    files = [] if "--model" in extra else model_args
    assert _refused([str(src), str(tmp_path / "o.hdf5"), *files, *extra]).startswith(message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


@pytest.mark.slow
def test_a_long_output_name_and_standard_input(tmp_path, model_args):
    out = tmp_path / ("v" * 250 + ".hdf5")  # 255 bytes: the longest name a Linux file system takes
    proc = subprocess.run(
        [sys.executable, "-m", "elmo_core", "embed", "-", str(out), *model_args, "--quiet"],
        input="The bank .\rA river bank .\r",
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    with h5py.File(out) as f:  # CR-only line ends are line breaks: two sentences, not one
        assert json.loads(f["sentence_to_index"][()]) == {"The bank .": "0", "A river bank .": "1"}
    assert "cannot be '-' (standard output)" in _refused([str(out), "-", *model_args])


def test_the_output_mode_follows_the_umask_or_the_existing_file(tmp_path, model_args):
    src = tmp_path / "in.txt"
    src.write_text("a b\n")
    old = os.umask(0o027)
    try:
        assert _embed(tmp_path, model_args, b"a b\n")[0] == 0
        assert (tmp_path / "out.hdf5").stat().st_mode & 0o777 == 0o640
        (tmp_path / "out.hdf5").chmod(0o604)
        assert _embed(tmp_path, model_args, b"a b c\n")[0] == 0
        assert (tmp_path / "out.hdf5").stat().st_mode & 0o777 == 0o604  # replaced, mode kept
    finally:
        os.umask(old)


def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, model_args, monkeypatch, capsys):
    def full(self, *args, **kwargs):
        raise OSError(
            "Can't write data (file write failed: time = Thu Dec  3 04:00:00 2026, filename = 'x', "
            "file descriptor = 5, errno = 28, error message = 'No space left on device')"
        )

    monkeypatch.setattr(h5py.Group, "create_dataset", full)
    (tmp_path / "out.hdf5").write_bytes(b"previous")
    rc, out = _embed(tmp_path, model_args, b"a b\n", "--quiet")
    [line] = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and line.startswith(f"error: no space left on the device for {out} (nothing was written")
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.hdf5"]


def test_an_unwritable_output_folder_names_the_output_and_exits_2(tmp_path, model_args, monkeypatch, capsys):
    src = tmp_path / "in.txt"
    src.write_text("a b\n")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):  # root ignores the mode bits: make the temporary file's creation fail

            def refuse(*args, dir=None, **kwargs):
                raise PermissionError(13, "Permission denied", os.path.join(dir, ".elmo-x1y2.partial"))

            monkeypatch.setattr("tempfile.mkstemp", refuse)
        out = folder / "out.hdf5"
        assert main(["embed", str(src), str(out), *model_args]) == 2
    finally:
        folder.chmod(0o700)
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: cannot write the output {out} (permission denied): ")
    assert ".elmo-" not in line and line.endswith(f"its folder {folder} must be writable; choose another output")
    assert list(folder.iterdir()) == []


def test_an_output_under_a_file_says_the_folder_is_a_file(tmp_path, model_args, capsys):
    src = tmp_path / "in.txt"
    src.write_text("a b\n")
    out = src / "out.hdf5"  # the "folder" is the input file
    assert main(["embed", str(src), str(out), *model_args]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == f"error: the output's folder {src} is a file, not a folder"

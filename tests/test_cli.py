"""`python -m elmo_core embed`: one HDF5 dataset per input line, like the old `allennlp elmo` command."""
import json
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from elmo_core import Embedder
from elmo_core.cli import main

ROOT = Path(__file__).parent.parent


@pytest.fixture
def input_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("The cat sat .\nA bank of the river .\n\nnaïve 😀\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("mode, shape0", [("--all", (3, 4, 32)), ("--top", (4, 32)), ("--average", (4, 32))])
def test_embed_modes(mode, shape0, input_file, tmp_path, allennlp_files):
    out = tmp_path / "out.hdf5"
    rc = main(["embed", str(input_file), str(out), "--options", str(allennlp_files[0]),
               "--weights", str(allennlp_files[1]), mode, "--batch-size", "2", "--device", "cpu", "--quiet"])
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


def test_embed_errors_are_messages_not_tracebacks(tmp_path, allennlp_files):
    binary = tmp_path / "bin.txt"
    binary.write_bytes(bytes(range(256)))
    proc = subprocess.run([sys.executable, "-m", "elmo_core", "embed", str(binary), str(tmp_path / "o.hdf5"),
                           "--options", str(allennlp_files[0]), "--weights", str(allennlp_files[1])],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 0 and "not UTF-8" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o.hdf5").exists()
    proc = subprocess.run([sys.executable, "-m", "elmo_core", "embed", str(tmp_path / "missing.txt"), str(tmp_path / "o.hdf5")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 0 and "not found" in proc.stderr and "Traceback" not in proc.stderr
    junk = tmp_path / "junk.hdf5"
    junk.write_bytes(b"junk" * 10)
    (tmp_path / "in.txt").write_text("a b\n")
    proc = subprocess.run([sys.executable, "-m", "elmo_core", "embed", str(tmp_path / "in.txt"), str(tmp_path / "o.hdf5"),
                           "--options", str(allennlp_files[0]), "--weights", str(junk)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "not a readable HDF5" in proc.stderr and "Traceback" not in proc.stderr

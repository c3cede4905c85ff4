"""elmo_core.model.embed_file: the batch plan, its units, and embedding a file across torchrun ranks (2 CPU processes
here) with the same keys and vectors as one process, also after a rank is killed half way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from elmo_core import Embedder
from elmo_core.model.embed_file import (
    Ranks,
    embed_file,
    embed_file_sharded,
    parts_folder,
    plan_batches,
    plan_units,
    run_calls,
)
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = FIXTURES / "allennlp-elmo" / "options.json"
WEIGHTS = FIXTURES / "allennlp-elmo" / "lm_weights.hdf5"
TORCHRUN = Path(sys.executable).parent / "torchrun"


def corpus(lines: int) -> list[list[str]]:
    """Fixture sentences in a fixed order; every 97th line eight times as long (cut into windows)."""
    base = json.loads((FIXTURES / "allennlp-elmo" / "sentences.json").read_text())
    return [base[(i * 7) % len(base)] * (8 if i % 97 == 5 else 1) for i in range(lines)]


def read(path: Path) -> dict[str, np.ndarray | bytes]:
    with h5py.File(path) as f:
        return {k: f[k][()] for k in f}


def same(a: dict, b: dict) -> None:
    assert sorted(a) == sorted(b)
    assert a["sentence_to_index"] == b["sentence_to_index"]
    for key in a:
        if key != "sentence_to_index":
            assert a[key].dtype == np.float32 and np.array_equal(a[key], b[key]), key


def test_units_keep_a_long_lines_windows_together():
    lengths = [3, 50, 4, 4, 120, 2]
    calls = plan_batches(lengths, batch_size=2, max_tokens=40)
    units = plan_units(calls, lengths)
    assert [call for unit in units for call in unit] == calls  # the same calls, in order
    for unit in units:
        sentences = {i for call in unit for i, _, _ in call}
        for other in units:
            if other is not unit:
                assert sentences.isdisjoint({i for call in other for i, _, _ in call})
    windows_of_4 = [(i, a, b) for unit in units for call in unit for i, a, b in call if i == 4]
    assert windows_of_4 == [(4, 0, 40), (4, 40, 80), (4, 80, 120)]


def test_ranks_from_the_environment(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert Ranks.from_environment() == Ranks(0, 1, 0)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "5")
    with pytest.raises(ValueError, match="RANK 5 of WORLD_SIZE 4"):
        Ranks.from_environment()


@pytest.mark.slow
def test_two_ranks_in_threads_resume_after_a_crash_and_merge_like_one_process(tmp_path):
    """In one process (no torchrun): rank 1 'crashes' with a half-written record, is run again, and the merge
    equals a one-process file bitwise (both ranks run the very batches one process runs)."""
    embedder = Embedder.from_elmo_files(OPTIONS, WEIGHTS, device="cpu")
    sentences = corpus(120)
    calls = plan_batches([len(s) for s in sentences], 8, 40)
    embed_file(embedder.embed_batch, sentences, tmp_path / "one.hdf5", "all", calls)
    out, identity = tmp_path / "two.hdf5", {"test": 1}
    assert embed_file_sharded(embedder.embed_batch, sentences, out, "all", calls, Ranks(1, 2, 1), identity) is False
    folder = parts_folder(out, identity)
    journal = folder / "rank-1.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    # a crash mid-unit: the last unit's 'done' line and half of its last record gone, stray bytes in the data
    journal.write_bytes(b"".join(lines[:-2]) + lines[-2][:7])
    with open(folder / "rank-1.f32", "ab") as f:
        f.write(b"\x00" * 123)
    said = []
    embed_file_sharded(
        embedder.embed_batch, sentences, out, "all", calls, Ranks(1, 2, 1), identity, progress=said.append
    )
    units = len(plan_units(calls, [len(s) for s in sentences]))
    assert said[0] == f"rank 1: {units // 2} units of {units}, {units // 2 - 1} already done"
    assert embed_file_sharded(embedder.embed_batch, sentences, out, "all", calls, Ranks(0, 2, 0), identity) is True
    same(read(out), read(tmp_path / "one.hdf5"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.hdf5", "two.hdf5"]  # the parts folder is gone


def test_rank_0_waits_for_the_others_and_a_stale_run_is_cleared(tmp_path):
    embedder = Embedder.from_elmo_files(OPTIONS, WEIGHTS, device="cpu")
    sentences = corpus(40)
    calls = plan_batches([len(s) for s in sentences], 8, 1024)
    out = tmp_path / "out.hdf5"
    stale = parts_folder(out, {"settings": "old"})
    stale.mkdir()
    (stale / "rank-0.jsonl").write_text("junk")
    done = {}
    first = threading.Thread(
        target=lambda: done.update(
            r0=embed_file_sharded(
                embedder.embed_batch,
                sentences,
                out,
                "top",
                calls,
                Ranks(0, 2, 0),
                {"settings": "new"},
                poll_seconds=0.05,
            )
        )
    )
    first.start()
    time.sleep(0.5)
    assert first.is_alive() and not out.exists()  # rank 0 finished its half and waits for rank 1
    embed_file_sharded(embedder.embed_batch, sentences, out, "top", calls, Ranks(1, 2, 1), {"settings": "new"})
    first.join(30)
    assert done == {"r0": True} and not stale.exists()
    data = read(out)
    expected = dict(run_calls(embedder.embed_batch, sentences, calls, "top"))
    assert all(np.array_equal(data[str(i)], expected[i]) for i in range(40))
    assert data["0"].shape == (len(sentences[0]), 32)


def _torchrun(src: Path, out: Path, *extra: str, env: dict | None = None) -> subprocess.Popen:
    args = [
        str(TORCHRUN),
        "--standalone",
        "--nproc_per_node",
        "2",
        *extra,
        "-m",
        "elmo_core",
        "embed",
        str(src),
        str(out),
        "--options",
        str(OPTIONS),
        "--weights",
        str(WEIGHTS),
        "--batch-size",
        "8",
        "--max-tokens",
        "40",
        "--device",
        "cpu",
    ]
    return subprocess.Popen(
        args,
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _one_process(src: Path, out: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "elmo_core",
            "embed",
            str(src),
            str(out),
            "--options",
            str(OPTIONS),
            "--weights",
            str(WEIGHTS),
            "--batch-size",
            "8",
            "--max-tokens",
            "40",
            "--device",
            "cpu",
            "--quiet",
        ],
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=True,
    )


def _pids_with(variables: dict[str, str]) -> list[int]:
    """Processes whose starting environment holds all of ``variables`` (Linux /proc)."""
    wanted = {f"{k}={v}".encode() for k, v in variables.items()}
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                env = set((entry / "environ").read_bytes().split(b"\0"))
            except OSError:
                continue
            if wanted <= env:
                found.append(int(entry.name))
    return found


@pytest.mark.multiprocess
@pytest.mark.skipif(
    not TORCHRUN.exists() or not Path("/proc/self/environ").exists(),
    reason="needs torchrun beside this Python and Linux /proc",
)
def test_torchrun_two_processes_equal_one_also_after_a_rank_is_killed(tmp_path):
    sentences = corpus(600)
    src = tmp_path / "in.txt"
    src.write_text("\n".join(" ".join(s) for s in sentences) + "\n")
    _one_process(src, tmp_path / "one.hdf5")
    one = read(tmp_path / "one.hdf5")

    proc = _torchrun(src, tmp_path / "two.hdf5")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    same(read(tmp_path / "two.hdf5"), one)
    assert "rank 0: merged" in err and "rank 1: " in err

    tag = f"elmo-test-{os.getpid()}-{time.monotonic_ns()}"
    out = tmp_path / "killed.hdf5"
    proc = _torchrun(src, out, "--max-restarts", "1", env={"ELMO_TEST_TAG": tag})
    journal = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # kill rank 1 once it has finished some units but not all
        journal = next(tmp_path.glob(".elmo-parts-*/rank-1.jsonl"), None)
        if journal is not None and journal.read_text().count('"done"') >= 10:
            break
        time.sleep(0.05)
    victims = _pids_with({"ELMO_TEST_TAG": tag, "RANK": "1"})
    assert journal is not None and victims, "rank 1 never got going"
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    restarted = [line for line in err.splitlines() if line.startswith("rank 1: ") and "already done" in line]
    assert len(restarted) == 2 and restarted[0].endswith(", 0 already done")
    assert int(restarted[1].split(", ")[1].split()[0]) >= 10  # the restarted rank 1 skipped what it had done
    same(read(out), one)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "killed.hdf5", "one.hdf5", "two.hdf5"]


def test_a_late_rank_with_nothing_to_do_leaves_no_parts_folder(tmp_path):
    """Two ranks, one unit (rank 0's): rank 0 merges and clears the parts folder; rank 1, started after that,
    must not create the folder again."""
    embedder = Embedder.from_elmo_files(OPTIONS, WEIGHTS, device="cpu")
    sentences = corpus(4)
    calls = plan_batches([len(s) for s in sentences], 8, 1024)
    assert len(plan_units(calls, [len(s) for s in sentences])) == 1
    out = tmp_path / "out.hdf5"
    assert embed_file_sharded(embedder.embed_batch, sentences, out, "top", calls, Ranks(0, 2, 0), {"r": 1}) is True
    said = []
    late = embed_file_sharded(
        embedder.embed_batch, sentences, out, "top", calls, Ranks(1, 2, 1), {"r": 1}, progress=said.append
    )
    assert late is False and said == ["rank 1: 0 units of 1, 0 already done"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.hdf5"]


MERGE_KILLED = """
import sys, time
from pathlib import Path
import h5py
from elmo_core import Embedder
from elmo_core.model.embed_file import Ranks, embed_file_sharded, plan_batches
from tests.model.test_embed_file import OPTIONS, WEIGHTS, corpus

create = h5py.Group.create_dataset
h5py.Group.create_dataset = lambda self, *a, **k: (time.sleep(0.05), create(self, *a, **k))[1]  # a slow merge
sentences = corpus(60)
calls = plan_batches([len(s) for s in sentences], 8, 40)
embedder = Embedder.from_elmo_files(OPTIONS, WEIGHTS, device="cpu")
embed_file_sharded(embedder.embed_batch, sentences, Path(sys.argv[1]), "all", calls, Ranks(0, 2, 0), {"m": 1})
"""


@pytest.mark.multiprocess
def test_rank_0_killed_during_the_merge_leaves_no_partial_file_after_the_restart(tmp_path):
    embedder = Embedder.from_elmo_files(OPTIONS, WEIGHTS, device="cpu")
    sentences = corpus(60)
    calls = plan_batches([len(s) for s in sentences], 8, 40)
    out = tmp_path / "out.hdf5"
    embed_file_sharded(embedder.embed_batch, sentences, out, "all", calls, Ranks(1, 2, 1), {"m": 1})
    proc = subprocess.Popen([sys.executable, "-c", MERGE_KILLED, str(out)], cwd=ROOT, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(tmp_path.rglob("*.partial")) and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.kill()  # SIGKILL: no clean-up runs
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err.decode()
    assert list(tmp_path.rglob("*.partial")) and not out.exists()  # killed half way through the merge
    assert embed_file_sharded(embedder.embed_batch, sentences, out, "all", calls, Ranks(0, 2, 0), {"m": 1})
    embed_file(embedder.embed_batch, sentences, tmp_path / "one.hdf5", "all", calls)
    same(read(out), read(tmp_path / "one.hdf5"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.hdf5", "out.hdf5"]

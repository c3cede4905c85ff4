"""``atlas build`` under torchrun (2 CPU ranks) gives the same atlas as one process, bit for bit (vectors and
occurrence index), also after rank 1 is killed half way and torchrun restarts the group; and the command's
one-line errors (exit status 2)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elmo_core.cli import main
from tests.atlas.test_atlas import small_corpus
from tests.model.test_embed_file import TORCHRUN, _pids_with

ROOT = Path(__file__).resolve().parents[2]
COMPARED = ("vectors.npy", "occurrences.npy", "word_offsets.npy", "words.npy", "sentences.txt", "sentence_offsets.npy")
OPTIONS = ["--batch-size", "8", "--max-tokens", "200", "--device", "cpu", "--quiet"]


def _build(src: Path, out: Path, *torchrun: str, env: dict | None = None) -> subprocess.Popen:
    head = [str(TORCHRUN), "--standalone", "--nproc_per_node", "2", *torchrun] if torchrun else [sys.executable]
    return subprocess.Popen(
        [*head, "-m", "elmo_core", "atlas", "build", str(src), "--out", str(out), *OPTIONS],
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _same(a: Path, b: Path) -> None:
    for name in COMPARED:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.skipif(
    not TORCHRUN.exists() or not Path("/proc/self/environ").exists(),
    reason="needs torchrun beside this Python and Linux /proc",
)
def test_torchrun_two_ranks_equal_one_process_also_after_a_rank_is_killed(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(small_corpus(120, 900)) + "\n", encoding="utf-8")
    proc = _build(src, tmp_path / "one")
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    proc = _build(src, tmp_path / "two", "--max-restarts", "0")
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    _same(tmp_path / "one", tmp_path / "two")

    tag = f"elmo-atlas-test-{os.getpid()}-{time.monotonic_ns()}"
    out = tmp_path / "killed"
    proc = _build(src, out, "--max-restarts", "1", env={"ELMO_TEST_TAG": tag})
    journal = None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # kill rank 1 once it has finished some units but not all
        journal = next(tmp_path.glob(".elmo-parts-*/rank-1.jsonl"), None)
        if journal is not None and journal.read_text().count('"done"') >= 5:
            break
        time.sleep(0.05)
    victims = _pids_with({"ELMO_TEST_TAG": tag, "RANK": "1"})
    assert journal is not None and victims, "rank 1 never got going"
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    _same(tmp_path / "one", out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "killed", "one", "two"]


def test_the_command_says_what_is_wrong_in_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "other.txt").write_text("x")
    cases = [
        (["atlas", "build", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "a")], "corpus file not found"),
        (["atlas", "build", str(tmp_path / "file"), "--out", str(tmp_path / "file")], "is a file or a link"),
        (["atlas", "build", str(tmp_path / "file"), "--out", str(tmp_path / "full")], "holds files but no atlas"),
        (["atlas", "build", str(tmp_path / "file"), "--out", str(tmp_path / "no" / "a")], "does not exist"),
        (["atlas", "info", str(tmp_path / "nothing")], "does not exist"),
        (["atlas", "info", str(tmp_path / "full")], "not an atlas"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and message in err and "\n" not in err, (argv, err)


def test_a_built_atlas_from_the_command_line(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(small_corpus(20, 60)) + "\n", encoding="utf-8")
    assert main(["atlas", "build", str(src), "--out", str(tmp_path / "a"), *OPTIONS]) == 0
    assert "wrote the atlas" in capsys.readouterr().err
    assert main(["atlas", "info", str(tmp_path / "a"), "bank", "--limit", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and all("[" in line and "]" in line for line in out)
    assert main(["atlas", "info", str(tmp_path / "a"), "the"]) == 2
    assert "not in this atlas" in capsys.readouterr().err
    assert main(["atlas", "build", str(src), "--out", str(tmp_path / "a"), *OPTIONS]) == 0  # an atlas is replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "in.txt"]

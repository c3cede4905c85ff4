"""Shared test fixtures: the two reference test sets (tiny weights + outputs from the original TF code)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
ALLENNLP = FIXTURES / "allennlp-elmo"
BILM_TF = FIXTURES / "bilm-tf" / "model"


@pytest.fixture(scope="session")
def allennlp_files():
    return ALLENNLP / "options.json", ALLENNLP / "lm_weights.hdf5"


@pytest.fixture(scope="session")
def bilm_tf_files():
    return BILM_TF / "options.json", BILM_TF / "lm_weights.hdf5"


@pytest.fixture(scope="session")
def fixture_sentences():
    return json.loads((ALLENNLP / "sentences.json").read_text())


@pytest.fixture
def tiny_embedder(allennlp_files):
    from elmo_core import Embedder

    return Embedder.from_elmo_files(*allennlp_files, device="cpu")


def frame_of(at):
    """The ``app.frame.Frame`` the explorer page drew in its last run (an AppTest of the app)."""
    return at.session_state["explorer_frame"]


PROBE_DATA = FIXTURES / "probes"  # tiny WordNet-format files and two Brown documents


def check_task_result(result, num_layers: int, task: str) -> None:
    """What every probe result must hold (elmo_core.probes.TaskResult), and that it survives JSON."""
    from elmo_core import probes

    assert result.task == task and isinstance(result, probes.TASKS[task].result_type)
    assert len(result.layers) == num_layers and len(result.s) == num_layers
    values = [*result.layers, result.mix_learned, *result.baselines.values()]
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in values)
    assert abs(sum(result.s) - 1.0) < 1e-6 and all(0 < v < 1 for v in result.s)
    assert result.paper.layer_1 and result.paper.layer_2
    assert result.data.n_train > 0 and result.data.n_test > 0
    assert type(result).from_json(json.loads(json.dumps(result.to_json()))) == result  # JSON round trip

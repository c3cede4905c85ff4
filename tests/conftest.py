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

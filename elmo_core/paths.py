"""Where the project's files are: the shipped assets and the prepared data. The only module that knows.

Assets (read-only, shipped): in a checkout they are ``assets/`` beside the package; an installed wheel
carries the same tree inside the package (``pyproject.toml`` maps ``assets/`` to ``elmo_core/assets``), so
both layouts resolve here and nothing else builds a path from ``__file__``.

Data (prepared on this machine: the training corpus, the probe data): ``$ELMO_DATA_DIR``, else ``data/`` of
the checkout, else ``data/`` in the working directory (an installed package has no checkout).
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
# None when the package is installed rather than run from a checkout.
REPO_ROOT: Path | None = _PACKAGE.parent if (_PACKAGE.parent / "pyproject.toml").is_file() else None

ASSETS = _PACKAGE / "assets" if (_PACKAGE / "assets").is_dir() else _PACKAGE.parent / "assets"
DEFAULT_MODEL_DIR = ASSETS / "default"
# The biLMs shipped in assets/, by name: the default (LM objective + teachers) and one trained with the
# paper's objective alone, for showing what the biLM objective learns from 8M tokens (MODEL_CARD.md of each).
BUNDLED_MODELS = {"default": DEFAULT_MODEL_DIR, "lm-only": ASSETS / "lm-only"}
STOP_WORDS = ASSETS / "stop_words.txt"  # the corpus atlas's stop words (elmo_core.atlas.words)
REFERENCE_CORPUS = ASSETS / "reference"  # the explorer's reference corpus (elmo_core.data.reference reads it)
PROBE_ASSETS = ASSETS / "probes"
OWN_SENTENCES = PROBE_ASSETS / "sense_sentences.tsv"
SENSE_PROBE = PROBE_ASSETS / "sense_probe.tsv"  # the fresh 34-word probe (SENSE_PROBE.md)
DEFAULT_PROBE_RESULTS = PROBE_ASSETS / "default_probes.json"


def data_dir() -> Path:
    """The folder of prepared data (read at call time, so tests and users can set ``$ELMO_DATA_DIR``)."""
    if os.environ.get("ELMO_DATA_DIR"):
        return Path(os.environ["ELMO_DATA_DIR"])
    return (REPO_ROOT if REPO_ROOT is not None else Path.cwd()) / "data"


def probe_data_dir() -> Path:
    """Where ``probe --prepare`` puts the probe data (WordNet, Brown) it fetches."""
    return data_dir() / "probes"


def corpus_dir() -> Path:
    """The built training corpus (``train.txt``, ``dev.txt``, ``test.txt``)."""
    return data_dir() / "corpus"

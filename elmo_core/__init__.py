"""elmo_core: the ELMo biLM (Peters et al., 2018) in PyTorch, exact to the reference implementations.

The names below are the library's public API (``__all__``); the Explorer app imports only these. The model
group is imported with the package (it needs torch anyway); the tokenizer (sacremoses), the probes, the
evaluation helpers and the corpus atlas are imported on first use (``__getattr__``), so ``import elmo_core`` does not pay for them.
"""

from __future__ import annotations

import importlib

# text: lines, word forms, the reference corpus
from elmo_core.data.reference import INDEX_FILE, REFERENCE_DIR, ReferenceCorpus
from elmo_core.data.text import clean_line, split_lines
from elmo_core.data.wordforms import is_form, same_case, word_forms

# nearest-neighbour scores
from elmo_core.metrics import chance_random_neighbour, nn_scores_from_same, nn_scores_from_similarity, same_label

# the biLM, its input and its outputs
from elmo_core.model.bilm import BiLM, BiLMOutput
from elmo_core.model.chars import batch_to_ids

# running a model: the embedder and where its models come from
from elmo_core.model.chunked import Progress, embed_in_chunks
from elmo_core.model.config import DEFAULT_MAX_PARAMETERS, BiLMConfig

# weights: our checkpoints, published ELMo files, bytes held in memory
from elmo_core.model.elmo_hdf5 import export_elmo_hdf5
from elmo_core.model.embedder import TYPE_VECTOR_MEMORY, Embedder
from elmo_core.model.loading import load_embedder
from elmo_core.model.mix import Elmo, ScalarMix

# the published AllenNLP models: the table, the local cache, the download
from elmo_core.model.published import (
    CacheEntry,
    cache_entry,
    cached_files,
    download,
    download_command,
    mismatch_note,
)
from elmo_core.model.published_table import PUBLISHED, PublishedModel, published_model
from elmo_core.model.weights import (
    CHECKPOINT_OPTIONS,
    load_bilm_from_bytes,
    load_bilm_from_elmo_files,
    load_checkpoint,
    save_checkpoint,
)
from elmo_core.paths import BUNDLED_MODELS, DEFAULT_PROBE_RESULTS

# imported on first use: {name: the module that holds it}
_LAZY = {
    "tokenize": "elmo_core.data.tokenize",  # sacremoses: about half a second
    "probes": None,  # the subpackage itself
    "ProbeReport": "elmo_core.probes",
    "TaskResult": "elmo_core.probes",
    "model_fingerprint": "elmo_core.training.evaluate",
    "Atlas": "elmo_core.atlas.store",  # the corpus atlas (docs/ATLAS.md): faiss on first search
    "Neighbours": "elmo_core.atlas.store",
    "build_atlas": "elmo_core.atlas.build",
    "read_stop_words": "elmo_core.atlas.words",  # the atlas's stop words (the explorer's Corpus page too)
}

__all__ = [
    "BiLM",
    "BiLMOutput",
    "BiLMConfig",
    "DEFAULT_MAX_PARAMETERS",
    "Elmo",
    "ScalarMix",
    "batch_to_ids",
    "Embedder",
    "Progress",
    "TYPE_VECTOR_MEMORY",
    "embed_in_chunks",
    "load_embedder",
    "BUNDLED_MODELS",
    "DEFAULT_PROBE_RESULTS",
    "CHECKPOINT_OPTIONS",
    "export_elmo_hdf5",
    "load_bilm_from_bytes",
    "load_bilm_from_elmo_files",
    "load_checkpoint",
    "save_checkpoint",
    "PUBLISHED",
    "CacheEntry",
    "PublishedModel",
    "cache_entry",
    "cached_files",
    "download",
    "download_command",
    "mismatch_note",
    "published_model",
    "INDEX_FILE",
    "REFERENCE_DIR",
    "ReferenceCorpus",
    "clean_line",
    "split_lines",
    "is_form",
    "same_case",
    "word_forms",
    "chance_random_neighbour",
    "nn_scores_from_same",
    "nn_scores_from_similarity",
    "same_label",
    *_LAZY,
]


def __getattr__(name: str):
    """The lazy names of ``_LAZY``, imported on first access. Raises: AttributeError for any other name."""
    if name not in _LAZY:
        raise AttributeError(f"module 'elmo_core' has no attribute {name!r}")
    module = _LAZY[name]
    value = (
        importlib.import_module(f"elmo_core.{name}")
        if module is None
        else getattr(importlib.import_module(module), name)
    )
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

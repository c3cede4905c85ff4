"""elmo_core: the ELMo biLM (Peters et al., 2018) in PyTorch, exact to the reference implementations."""
from elmo_core.model.bilm import BiLM, BiLMOutput
from elmo_core.model.chars import batch_to_ids
from elmo_core.model.config import BiLMConfig
from elmo_core.model.embedder import Embedder
from elmo_core.model.mix import Elmo, ScalarMix
from elmo_core.data.tokenize import tokenize
from elmo_core.model.weights import export_elmo_hdf5, load_checkpoint, save_checkpoint

__all__ = ["BiLM", "BiLMOutput", "BiLMConfig", "Elmo", "Embedder", "ScalarMix", "batch_to_ids",
           "export_elmo_hdf5", "load_checkpoint", "save_checkpoint", "tokenize"]

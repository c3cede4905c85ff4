"""elmo_core: the ELMo biLM (Peters et al., 2018) in PyTorch, exact to the reference implementations."""
from .bilm import BiLM, BiLMOutput
from .chars import batch_to_ids
from .config import BiLMConfig
from .embedder import Embedder
from .mix import Elmo, ScalarMix
from .tokenize import tokenize
from .weights import export_elmo_hdf5, load_checkpoint, save_checkpoint

__all__ = ["BiLM", "BiLMOutput", "BiLMConfig", "Elmo", "Embedder", "ScalarMix", "batch_to_ids",
           "export_elmo_hdf5", "load_checkpoint", "save_checkpoint", "tokenize"]

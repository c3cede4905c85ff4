"""A set's biLM layers, kept per sentence and per model so that a slider move never reruns the biLM (no Streamlit here)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from app.explore.inputs import Line, Occurrence
from app.explore.mixing import scalar_mix, sentence_layer_norm
from elmo_core import Progress, embed_in_chunks

# ---- activations --------------------------------------------------------------------------------------
PROGRESS_FROM = 33  # sentences to embed: fewer finish before a progress bar would tell the user anything


class ActivationCache:
    """Thread-safe LRU of biLM activations keyed by (model id, tokens), bounded in bytes.

    Only the sentences not cached yet go through the biLM, in one ``embed_batch`` call per chunk.
    Stored arrays are read-only: callers that need to change them must copy.
    """

    def __init__(self, max_bytes: int = 512 * 2**20):
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, tuple[str, ...]], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get_many(
        self,
        model_id: str,
        embed_batch: Callable[[list[list[str]]], list[np.ndarray]],
        token_lists: Sequence[Sequence[str]],
        chunk_size: int = 32,
        progress: Progress | None = None,
        progress_from: int = 1,
    ) -> tuple[list[np.ndarray], int]:
        """Activations (L + 1, n_i, D) for each sentence, and how many had to be computed.

        Args:
            progress: ``elmo_core.model.chunked.Progress``, called after each computed chunk (its counts are of the
                sentences that run the biLM), and only when at least ``progress_from`` sentences do.
        """
        keys = [(model_id, tuple(tokens)) for tokens in token_lists]
        found: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}
        with self._lock:
            for key in keys:
                if key in self._items:
                    self._items.move_to_end(key)
                    found[key] = self._items[key]
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        start = 0
        report = progress if len(missing) >= progress_from else None
        for done, arrays in embed_in_chunks(embed_batch, [k[1] for k in missing], chunk_size, report):
            for key, array in zip(missing[start:done], arrays):
                array = np.ascontiguousarray(array, dtype=np.float32)
                array.setflags(write=False)
                found[key] = array
                self._put(key, array)  # chunk by chunk, so a rerun that stops this one keeps what is done
            start = done
        return [found[k] for k in keys], len(missing)

    def _put(self, key, array: np.ndarray) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = array
            self._bytes += array.nbytes
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, old = self._items.popitem(last=False)
                self._bytes -= old.nbytes


class TokenTable:
    """All tokens of a sentence set with their biLM activations stacked: ``acts`` (L + 1, N, D).

    ``offsets[i]`` is the row of line i's first token, so token j of line i is row ``offsets[i] + j``.
    """

    def __init__(self, lines: Sequence[Line], activations: Sequence[np.ndarray]):
        if len(lines) != len(activations):
            raise ValueError(f"{len(lines)} lines but {len(activations)} activation arrays")
        for line, a in zip(lines, activations):
            if a.ndim != 3 or a.shape[1] != len(line.tokens):
                raise ValueError(f"activations {a.shape} do not match {len(line.tokens)} tokens")
        self.lines = list(lines)
        lengths = [len(line.tokens) for line in lines]
        self.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        if activations:
            self.acts = np.concatenate(activations, axis=1)  # (L+1, N, D)
        else:
            self.acts = np.zeros((0, 0, 0), np.float32)
        self.line_of_row = np.repeat(np.arange(len(lines)), lengths)
        self._tokens = [t for line in self.lines for t in line.tokens]  # row -> token
        self._normed: np.ndarray | None = None

    @classmethod
    def of_tokenized(cls, sentences: Sequence[Sequence[str]], activations: Sequence[np.ndarray]) -> TokenTable:
        """A table of already tokenized sentences without labels (the reference corpus's hits)."""
        return cls([Line(" ".join(t), None, tuple(t)) for t in sentences], activations)

    @property
    def num_layers(self) -> int:
        return self.acts.shape[0]

    @property
    def num_tokens(self) -> int:
        return self.acts.shape[1]

    def row(self, line: int, position: int) -> int:
        return int(self.offsets[line] + position)

    def rows(self, occurrences: Sequence[Occurrence]) -> np.ndarray:
        return np.array([self.row(o.line, o.position) for o in occurrences], dtype=np.int64)

    def token(self, row: int) -> str:
        return self._tokens[int(row)]

    def layers(self, layer_norm: bool = False) -> np.ndarray:
        """(L + 1, N, D) raw activations, or each layer normalised per sentence (see ``sentence_layer_norm``)."""
        if not layer_norm:
            return self.acts
        if self._normed is None:
            self._normed = sentence_layer_norm(self.acts, self.offsets)
        return self._normed

    def mix(self, w: Sequence[float], gamma: float, layer_norm: bool = False) -> np.ndarray:
        """(N, D) ELMo vectors gamma * sum_j softmax(w)_j h_j for every token."""
        return scalar_mix(self.layers(layer_norm), w, gamma)

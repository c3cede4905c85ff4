"""Layer-0 vectors of a real vocabulary, for the explorer's context-free "nearest word types": computed once
per model in a background thread, then searched by cosine. No Streamlit here (``app.serving.jobs`` keeps one
``TypeVectorStore`` per server process).

Layer 0 is context-free (the character CNN, highway and projection of the word alone), so a word type has
one layer-0 vector and its nearest types over the corpus's 50,000 most frequent words are the GloVe-like
column of the ELMo paper's Table 4. Dims: V vocabulary words, D = 2P.
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable, Sequence

import numpy as np

from app.explore.neighbours import cosine_neighbours
from app.render.safe import md
from app.serving import background

BACKGROUND_NICE = 10  # added to the server's nice value for the vocabulary's thread
CHUNK = 2048  # words per biLM call: progress moves often, and a chunk never holds the CPU for long


def _lower_priority() -> None:
    # On Linux a thread has its own nice value, and the worker threads torch starts for it inherit it: the
    # vocabulary then yields the CPU to the sessions' own biLM runs instead of slowing every page down.
    # Relative to the server's own nice value: a fixed 10 would *raise* the thread above a server started with
    # `nice -n 15` by root (who may lower a nice value), and the background work would then starve the pages.
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICE, 19))
    except (AttributeError, OSError):  # not Linux, or not allowed: run at the normal priority
        pass


class TypeVectors(background.Job):
    """The layer-0 vectors of ``words`` for one model. state: "waiting", "running", "ready", "failed" or
    "stopped" (the process began to exit: ``app.serving.background``); progress in [0, 1]; seconds: the time the
    computation took (when ready); error: why it failed. In the background it stops between chunks (``CHUNK``
    words) and runs at a lower priority than the pages.

    Args:
        words: the vocabulary (V distinct word types).
        compute: words -> float32 (len(words), D) layer-0 vectors (``Embedder.type_vectors``).
    """

    NAME = "layer0-type-vectors"

    def __init__(self, words: Sequence[str], compute: Callable[[list[str]], np.ndarray]):
        super().__init__()
        self.words = list(words)
        self._compute = compute
        self.progress = 0.0
        self._vectors: np.ndarray | None = None  # (V, D) float32, rows scaled to unit length
        self._index = {w: i for i, w in enumerate(self.words)}
        self._memo: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def work(self, in_background: bool) -> None:
        if in_background:
            _lower_priority()
        # One (V, D) array, filled and scaled in place: chunks, their concatenation and a scaled copy were three
        # (615 MB at once for the 50,000 words of a model of Original's size, whose vectors are 1,024 wide).
        vectors = np.zeros((0, 0), np.float32)
        for first in range(0, len(self.words), CHUNK):
            background.check()
            part = np.asarray(self._compute(self.words[first : first + CHUNK]), dtype=np.float32)
            if first == 0:
                vectors = np.empty((len(self.words), part.shape[1]), np.float32)
            vectors[first : first + len(part)] = part
            self.progress = min(1.0, (first + CHUNK) / max(len(self.words), 1))
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))[:, None]  # no (V, D) temporary, as norm() makes
        np.divide(vectors, np.where(norms > 0, norms, 1.0), out=vectors)
        self._vectors = vectors

    def neighbours(self, word: str, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k vocabulary words nearest to ``query`` (D,), the layer-0 vector of ``word``, by cosine; the
        word's own spelling left out. Memoised per (word, k): layer 0 does not depend on the sentence.

        Returns: [(word type, cosine)], best first, ties in frequency order.
        Raises: RuntimeError when the vectors are not ready; ValueError when ``query`` has the wrong size.
        """
        if self._vectors is None:
            raise RuntimeError(f"the type vectors are {self.state}")
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        if query.shape[0] != self._vectors.shape[1]:
            raise ValueError(f"query has {query.shape[0]} dimensions, the type vectors {self._vectors.shape[1]}")
        key = (word, int(k))
        with self._lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
        own = [self._index[word]] if word in self._index else []
        found = [
            (self.words[nb.index], round(nb.similarity, 6))
            for nb in cosine_neighbours(query, self._vectors, int(k), own)
        ]
        with self._lock:
            self._memo[key] = found
            while len(self._memo) > 256:
                self._memo.popitem(last=False)
        return found

    def status(self) -> str:
        """One line for the page: what the layer-0 column is searched in right now."""
        n = f"{len(self.words):,}"
        if self.state == "ready":
            return f"Searched among the corpus's {n} most frequent word types."
        if self.state == "failed":
            return (
                f"The vocabulary's layer-0 vectors failed ({md(self.error)}); searched among the words of your "
                "sentences and of the reference sentences shown."
            )
        return (
            f"The corpus's {n} most frequent words are being embedded in the background ({self.progress:.0%}); "
            "until then, searched among the words of your sentences and of the reference sentences shown. "
            "Interact again to refresh."
        )


class TypeVectorStore:
    """``TypeVectors`` per model key, the ``max_models`` most recently used kept (each holds V x D floats:
    50,000 x 256 float32 is 51 MB)."""

    def __init__(self, max_models: int = 3):
        self.max_models = max_models
        self._items: collections.OrderedDict[str, TypeVectors] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(
        self, model_key: str, words: Sequence[str], compute: Callable[[list[str]], np.ndarray], start: bool = True
    ) -> TypeVectors:
        """This model's vectors (started in the background on first use)."""
        with self._lock:
            item = self._items.get(model_key)
            if item is None:
                item = self._items[model_key] = TypeVectors(words, compute)
                while len(self._items) > self.max_models:
                    self._items.popitem(last=False)
            self._items.move_to_end(model_key)
        return item.start() if start else item

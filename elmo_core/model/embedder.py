"""The user-facing API: text in, ELMo layers out, in the style of the old AllenNLP ``ElmoEmbedder``.

Dims: L + 1 layers, n tokens of one sentence, D = 2P.

Stateless (default) vs stateful
-------------------------------
The reference implementations (bilm-tf, AllenNLP) are *stateful*: after each batch the LSTM keeps,
for every batch row, the state it reached, and the next batch's row k starts from it. So the same
sentence gets slightly different vectors depending on what was embedded before it in that row, and
the first batches after loading are "cold". ``stateful=True`` reproduces that exactly (it is how
the reference test outputs were made). ``stateful=False`` starts every sentence from a zero state:
a sentence's vectors depend only on the sentence, never on its batch, the batch size or earlier
calls. The app and our own training use the stateless mode.
Source: ELMO_SPEC.md section 9.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import torch

from elmo_core.model.bilm import BiLM
from elmo_core.model.chars import batch_to_ids, check_sentences
from elmo_core.model.lstm import LSTMState
from elmo_core.model.weights import load_bilm_from_elmo_files, load_checkpoint
from elmo_core.paths import BUNDLED_MODELS


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """``None`` or "auto" -> CUDA when available, else CPU; else "cpu", "cuda" or "cuda:N".
    Raises ValueError for a name torch does not know, a device kind that cannot run the biLM (meta, ...),
    or CUDA where there is none."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"unknown device {str(device)[:40]!r}; use cpu, cuda or cuda:N") from None
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"device {str(device)[:40]!r} cannot run the biLM; use cpu, cuda or cuda:N")
    if device.type == "cuda" and device.index is not None and device.index >= max(torch.cuda.device_count(), 1):
        raise ValueError(
            f"device {str(device)!r} does not exist: this machine has {torch.cuda.device_count()} CUDA GPU(s)"
        )
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but no CUDA GPU is available; use 'cpu' or None")
    return device


def cpu_has_fast_bfloat16() -> bool:
    """True when this CPU runs bfloat16 matrix products natively (AVX512-BF16 or AMX, as oneDNN
    detects them). Without them PyTorch falls back to a scalar bfloat16 GEMM that is about 50-100x
    slower than float32 (measured on an AVX2-only EPYC: docs/performance.md)."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def fast_dtypes(device: str | torch.device) -> tuple[str, ...]:
    """The dtypes worth offering on ``device``: float32 always; bfloat16 and float16 on CUDA;
    bfloat16 on a CPU only where ``cpu_has_fast_bfloat16()`` (it is slower everywhere else)."""
    device = torch.device(device)
    if device.type == "cuda":
        return ("float32", "bfloat16", "float16")
    return ("float32", "bfloat16") if cpu_has_fast_bfloat16() else ("float32",)


def _slow_reason(dtype: str, device: torch.device) -> str:
    if dtype == "bfloat16":
        return (
            "this CPU has no native bfloat16 (AVX512-BF16/AMX), and the fallback is about 50-100x slower than float32"
        )
    return "float16 matrix products have no fast CPU kernel"


# Working memory the layer-0 vocabulary pass may take per biLM call, whatever the model's width.
TYPE_VECTOR_MEMORY = 256 * 2**20


class Embedder:
    """Embed tokenized sentences with a biLM.

    Args:
        bilm: a loaded BiLM.
        device: None (CUDA if present, else CPU), "cpu", "cuda", "cuda:1", ...
        stateful: carry LSTM state per batch row across calls, as the reference does (see module doc).
        dtype: "float32" (exact; TF32 is switched off), or a faster reduced precision where this device
            has native support for it (see ``fast_dtypes``): "bfloat16" on a GPU or on a CPU with
            AVX512-BF16/AMX, "float16" on a GPU. Deviation from float32 per layer: docs/performance.md.
        name: a label for UIs and logs.
        compile: ``torch.compile`` the LSTM time step (used by clipped models such as the published
            ones; 2-3x faster step loop after a one-off compile of tens of seconds).
    """

    def __init__(
        self,
        bilm: BiLM,
        device: str | torch.device | None = None,
        stateful: bool = False,
        dtype: str = "float32",
        name: str = "biLM",
        compile: bool = False,
    ):
        self.device = pick_device(device)
        if dtype not in ("float32", "bfloat16", "float16"):
            raise ValueError(f"dtype must be float32, bfloat16 or float16, got {dtype!r}")
        if dtype not in fast_dtypes(self.device):
            raise ValueError(
                f"dtype {dtype} is not offered on {self.device}: {_slow_reason(dtype, self.device)}; "
                f"use one of {', '.join(fast_dtypes(self.device))}"
            )
        if dtype == "float32" and self.device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = False  # exactness: TF32 changes results at 1e-3
            torch.backends.cudnn.allow_tf32 = False
        self.dtype = getattr(torch, dtype)
        self.bilm = bilm.to(self.device, self.dtype).eval()
        for p in self.bilm.parameters():
            p.requires_grad_(False)
        if compile:
            for layer in self.bilm.lstm.layers:
                layer.compile_step()
        self.stateful = stateful
        self.name = name
        self.last_run_seconds = 0.0
        self._state: LSTMState | None = None

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def from_elmo_files(
        cls,
        options_file: str | Path,
        weights_file: str | Path,
        device=None,
        stateful: bool = False,
        dtype: str = "float32",
    ) -> Embedder:
        """Load published ELMo files (options.json + weights.hdf5). Errors: see ``load_elmo_hdf5``."""
        bilm = load_bilm_from_elmo_files(options_file, weights_file)
        return cls(bilm, device, stateful, dtype, name=Path(weights_file).name)

    @classmethod
    def published(
        cls,
        name: str,
        cache_dir: str | Path | None = None,
        download: bool = False,
        device=None,
        stateful: bool = False,
        dtype: str = "float32",
        base_url: str | None = None,
        progress=None,
    ) -> Embedder:
        """A published ELMo model (``elmo_core.model.published_table.PUBLISHED``: "small", "medium", "original",
        "original-5.5b") from the local cache, without touching the network unless ``download=True``.

        Args:
            cache_dir: the cache folder (default ``$ELMO_CORE_CACHE``, else the user cache folder).
            download: fetch the model into the cache first when it is not there (``published.download``:
                timeouts, retries, resume, every file checked before it is kept).
            base_url, progress: for that download (``progress(file name, bytes done, bytes total)``).
            device, stateful, dtype: as the constructor.
        Returns: an Embedder named after the model ("original").
        Raises:
            KeyError: an unknown name (the message lists the published ones).
            FileNotFoundError: not cached and ``download`` is False (the message gives the command, with
                ``--cache-dir`` and ``--base-url`` when they are not the defaults).
            ValueError: the cached copy is damaged (a size differs from the manifest), or the files fail
                ``load_bilm_from_elmo_files``'s checks.
            elmo_core.model.download.DownloadError: ``download=True`` and the download failed.
        """
        from elmo_core.model import published as store
        from elmo_core.model import published_table as table

        if download:
            store.download(name, cache_dir, base_url, progress=progress)
        options_file, weights_file = store.cached_files(name, cache_dir, base_url)
        embedder = cls.from_elmo_files(options_file, weights_file, device, stateful, dtype)
        embedder.name = table.published_model(name).name
        return embedder

    @classmethod
    def from_checkpoint(
        cls, directory: str | Path, device=None, stateful: bool = False, dtype: str = "float32"
    ) -> Embedder:
        """Load our checkpoint format (options.json + model.safetensors)."""
        return cls(load_checkpoint(directory), device, stateful, dtype, name=Path(directory).name)

    @classmethod
    def default(cls, device=None, stateful: bool = False, dtype: str = "float32") -> Embedder:
        """The biLM shipped in ``assets/default`` (offline, no download).

        Raises:
            FileNotFoundError: the assets are missing (a broken checkout).
        """
        return cls.bundled("default", device, stateful, dtype)

    @classmethod
    def bundled(cls, name: str, device=None, stateful: bool = False, dtype: str = "float32") -> Embedder:
        """One of the biLMs shipped in ``assets/`` (``BUNDLED_MODELS``: "default", "lm-only"), offline.

        Weights stored as float16 are widened to float32 on load (or to ``dtype``).
        Raises:
            KeyError: an unknown name (the message lists the known ones).
            FileNotFoundError: the assets are missing (a broken checkout).
        """
        if name not in BUNDLED_MODELS:
            raise KeyError(f"no bundled model {name!r}; the bundled models are {', '.join(BUNDLED_MODELS)}")
        directory = BUNDLED_MODELS[name]
        if not (directory / "model.safetensors").is_file():
            raise FileNotFoundError(
                f"the bundled model {name!r} is missing from {directory}; "
                f"restore assets/{directory.name} from the repository"
            )
        embedder = cls.from_checkpoint(directory, device, stateful, dtype)
        embedder.name = name
        return embedder

    # ---- facts ----------------------------------------------------------------------------------
    @property
    def num_layers(self) -> int:
        """L + 1."""
        return self.bilm.config.num_layers

    @property
    def dim(self) -> int:
        """2P, the size of each layer's vector."""
        return self.bilm.config.output_dim

    @property
    def num_parameters(self) -> int:
        return self.bilm.num_parameters()

    # ---- embedding ------------------------------------------------------------------------------
    def embed_sentence(self, sentence: Sequence[str]) -> np.ndarray:
        """All layers for one tokenized sentence.

        Args:
            sentence: list of token strings (not a raw string).

        Returns:
            np.ndarray float32 (L + 1, n, 2P), ``<S>``/``</S>`` removed; (L + 1, 0, 2P) when empty.

        Raises:
            TypeError: ``sentence`` is a str rather than a list of tokens.
        """
        return self.embed_batch([sentence])[0]

    def embed_batch(self, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> list[np.ndarray]:
        """All layers for each sentence, in input order.

        Stateless mode sorts sentences by length into batches of ``batch_size`` (less padding);
        stateful mode keeps the given order so that row k keeps its state slot, as the reference.

        Returns:
            list of np.ndarray float32 (L + 1, n_i, 2P); ``[]`` for an empty batch.

        Raises:
            TypeError: a sentence is a str (see ``batch_to_ids``).
        """
        sentences = check_sentences(sentences)  # before any work: a str instead of token lists raises TypeError
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        start = time.perf_counter()
        results: list[np.ndarray | None] = [None] * len(sentences)
        if self.stateful:
            order = list(range(len(sentences)))
        else:
            order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
            empty = np.zeros((self.num_layers, 0, self.dim), dtype=np.float32)
            for i in order:
                if not sentences[i]:
                    results[i] = empty.copy()
            order = [i for i in order if sentences[i]]
        for first in range(0, len(order), batch_size):
            chunk = order[first : first + batch_size]
            arrays = self._run([sentences[i] for i in chunk])
            for i, array in zip(chunk, arrays):
                results[i] = array
        self.last_run_seconds = time.perf_counter() - start
        return results  # type: ignore[return-value]

    def type_vectors(
        self, words: Sequence[str], batch_size: int | None = None, memory_bytes: int = TYPE_VECTOR_MEMORY
    ) -> np.ndarray:
        """Layer 0 of each word: float32 (n, 2P), row i the vector every occurrence of ``words[i]`` gets in
        layer 0 of ``embed_batch`` (layer 0 is context-free: the character CNN, highway and projection of the
        token alone, ELMO_SPEC.md section 3).

        Each word runs as a one-token sentence and its layer-0 row is kept, so the vector is the model's own
        layer 0 by construction, whatever the layer's layout; the LSTM steps over three positions are cheap
        next to the CNN for the models we ship. For a model with wide LSTM cells they are not (their input
        projections are 2 x 4C floats a position), so the batch is as large as ``memory_bytes`` of working
        memory allows (``BiLMConfig.inference_bytes``), at most ``batch_size`` (default 1,024).

        Raises: TypeError when a word is not a str; ValueError for an empty word or a ``batch_size`` < 1.
        """
        if isinstance(words, str):
            raise TypeError("type_vectors() takes a list of words, not one str")
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        batch_size = self.type_vector_batch(batch_size, memory_bytes)
        if any(not isinstance(w, str) for w in words):
            raise TypeError("every word must be a str")
        if any(not w for w in words):
            raise ValueError("an empty word has no layer-0 vector")
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        for first in range(0, len(words), batch_size):
            ids = batch_to_ids([[w] for w in words[first : first + batch_size]]).to(self.device)
            with torch.inference_mode():
                layer0 = self.bilm(ids).activations[0][:, 1]  # position 0 is <S>
            out[first : first + len(ids)] = layer0.float().cpu().numpy()
        return out

    def type_vector_batch(self, batch_size: int | None = None, memory_bytes: int = TYPE_VECTOR_MEMORY) -> int:
        """Words per biLM call in ``type_vectors``: as many as fit ``memory_bytes`` of working memory (a word is
        three positions: <S>, the word, </S>), at least 1, at most ``batch_size`` (default 1,024)."""
        fit = memory_bytes // self.bilm.config.inference_bytes(3)
        return int(max(1, min(batch_size or 1024, fit)))

    def embed_sentences(self, sentences: Iterable[Sequence[str]], batch_size: int = 64) -> Iterator[np.ndarray]:
        """Lazily embed a stream of sentences, ``batch_size`` at a time, in input order."""
        chunk: list[Sequence[str]] = []
        for sentence in sentences:
            chunk.append(sentence)
            if len(chunk) == batch_size:
                yield from self.embed_batch(chunk, batch_size)
                chunk = []
        if chunk:
            yield from self.embed_batch(chunk, batch_size)

    def reset_states(self) -> None:
        """Forget the carried LSTM state (stateful mode): the next batch starts from zeros."""
        self._state = None

    def warm_up(self, sentences: Sequence[Sequence[str]] | None = None, rounds: int = 2) -> None:
        """Run a few batches so that a stateful model's state slots are no longer cold.

        The reference code never does this by itself; AllenNLP's docs only advise it (ELMO_SPEC.md 9).
        """
        sentences = sentences or [["The", "first", "batches", "after", "loading", "are", "cold", "."]] * 64
        for _ in range(rounds):
            self.embed_batch(sentences, batch_size=len(sentences))

    # ---- internals ------------------------------------------------------------------------------
    def _run(self, batch: list[Sequence[str]]) -> list[np.ndarray]:
        ids = batch_to_ids(batch).to(self.device)
        with torch.inference_mode():
            if self.stateful:
                state = self._slots(len(batch))
                out = self.bilm(ids, state=state, return_state=True)
                self._store(out.state)
            else:
                out = self.bilm(ids)
            stacked = torch.stack(out.activations, dim=0).float().cpu().numpy()  # (L+1, B, T+2, D)
        return [np.ascontiguousarray(stacked[:, k, 1 : len(s) + 1]) for k, s in enumerate(batch)]

    def _slots(self, batch: int) -> LSTMState:
        """The carried state for rows 0..batch-1, growing the store with zero rows when needed."""
        if self._state is None:
            self._state = self.bilm.lstm.zero_state(0, self.device, self.dtype)
        have = self._state.h[0].shape[1]
        if batch > have:
            grow = self.bilm.lstm.zero_state(batch - have, self.device, self.dtype)
            self._state = LSTMState(
                [torch.cat([a, b], 1) for a, b in zip(self._state.h, grow.h)],
                [torch.cat([a, b], 1) for a, b in zip(self._state.c, grow.c)],
            )
        return LSTMState([h[:, :batch] for h in self._state.h], [c[:, :batch] for c in self._state.c])

    def _store(self, new: LSTMState) -> None:
        batch = new.h[0].shape[1]
        # Rows beyond this batch keep their old state, as in both reference implementations.
        for l in range(len(new.h)):
            self._state.h[l] = torch.cat([new.h[l], self._state.h[l][:, batch:]], 1)
            self._state.c[l] = torch.cat([new.c[l], self._state.c[l][:, batch:]], 1)

"""The server's memory for biLMs: the models users load, and the working memory of every biLM call. No Streamlit
here (``app.serving.limits`` keeps one ``ModelRegistry`` and one ``WorkingMemory`` per server process and knows the
sessions); docs/INPUT_RULES.md gives the limits and the measured figures.

* **Loaded models** (``ModelRegistry``, ``ELMO_EXPLORER_MODEL_MB``). A model's bytes are reserved *before* it is
  read and released when the read fails, so that loads running at the same time cannot together exceed the limit:
  the registry used to check the room before a load and record the model after it, and 8 sessions loading at once
  all got in against a limit that fitted one. A session's current model stays counted until its new one is in
  (it is still in memory while the new one loads, and stays the session's model when the new one fails).
* **Working memory** (``WorkingMemory``, ``ELMO_EXPLORER_WORK_MB``). A biLM call's memory grows with its token
  positions (``BiLMConfig.inference_bytes``), not with the parameter count: the wide model (5.2M parameters,
  LSTM cells of 16,384) took a server from 1.2 to 3.0 GB (peak 3.5) in its layer-0 pass. The page's largest call is
  ``CALL_SENTENCES`` sentences of ``explore.MAX_TOKENS_PER_LINE`` tokens; a user's model whose call of that size
  would need more than the limit is refused before it is read (``work_problem``). Every call the app makes is
  bounded to that size (fewer sentences per call for long ones; fewer positions for a startup model over the
  limit, which the operator chose and which is not refused), and takes its bytes from the limit shared by all
  sessions and the background vocabulary pass, waiting while other calls hold them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from app.explore.inputs import MAX_TOKENS_PER_LINE
from elmo_core import TYPE_VECTOR_MEMORY

MB = 2**20
# Sentences in one biLM call of the page: the activation cache embeds a chunk of this many at a time.
CALL_SENTENCES = 32
# Token positions of the page's largest call: a chunk of the longest sentences the page keeps, each with <S>, </S>.
CALL_POSITIONS = CALL_SENTENCES * (MAX_TOKENS_PER_LINE + 2)
# The layer-0 vocabulary pass holds this many times its estimate (BiLMConfig.inference_bytes): its real peak measured
# above the estimate, 1.1-1.4x with torch's 2 threads and 1.5x with 8, growing with the threads (benchmarks/
# app_memory.py, docs/INPUT_RULES.md), where page calls stayed 1.3-9x below theirs.
VOCABULARY_MARGIN = 2


def megabytes(nbytes: float) -> str:
    """``nbytes`` in MB for a message: whole MB from 10 MB or for a whole number ("1,024", "8"), else one decimal
    ("0.4"), so that a small test model does not read as needing 0 MB."""
    mb = nbytes / MB
    return f"{mb:,.0f}" if mb >= 10 or mb == int(mb) else f"{mb:,.1f}"


def model_bytes(module) -> int:
    """Bytes held by a torch module's parameters and buffers (a BiLM: its weights in memory)."""
    return sum(t.numel() * t.element_size() for t in list(module.parameters()) + list(module.buffers()))


def config_model_bytes(config) -> int:
    """``model_bytes`` of the float32 BiLM that ``config`` (``elmo_core.BiLMConfig``) describes, computed
    before it exists: the model is built on PyTorch's meta device, which allocates nothing."""
    import torch

    from elmo_core import BiLM

    with torch.device("meta"):
        return model_bytes(BiLM(config))


# ---- loaded models ----------------------------------------------------------------------------------------
class ModelBudgetError(ValueError):
    """No room for another user-loaded model right now (the message says why and what to do)."""


@dataclass(eq=False)
class Reservation:
    """Bytes held for a model that ``session`` is loading (``ModelRegistry.reserve``); identity is the token."""

    session: str
    key: str
    nbytes: int


@dataclass
class _Slot:
    model: object  # app.serving.startup.LoadedModel
    nbytes: int
    owners: dict  # session id -> (shown name, source) of that session's load
    last_used: dict  # session id -> time.monotonic() of that session's last run with the model


class ModelRegistry:
    """User-loaded models, each owned by the sessions that loaded it, bounded by bytes across sessions: the
    models in memory and the reservations of those being loaded together never exceed ``max_bytes``.

    A session holds at most one user model; loading another releases its previous one once the new one is in.
    Two sessions that load the same model (same key) share one copy, and each sees its own file name; a second
    load of a key waits for the first and then shares it. When a new model does not fit, models whose owners are
    all gone (``is_active`` says no) or idle for ``idle_seconds`` are unloaded, least recently used first, and
    their owners are told on their next run; a model in use is never evicted: the new load is refused instead,
    with the figures.
    """

    def __init__(
        self,
        max_bytes: int,
        idle_seconds: float = 20 * 60,
        clock: Callable[[], float] | None = None,
        is_active: Callable[[str], bool] | None = None,
    ):
        self.max_bytes = max_bytes
        self.idle_seconds = idle_seconds
        self._clock = clock or time.monotonic
        self._is_active = is_active or (lambda session: True)
        self._slots: dict[str, _Slot] = {}
        self._by_session: dict[str, str] = {}
        self._notices: dict[str, str] = {}
        self._reserved: list[Reservation] = []
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}  # one load per key at a time: one copy in memory

    @property
    def used_bytes(self) -> int:
        """Bytes of the models in memory plus the reservations of those being loaded."""
        with self._lock:
            return self._used()

    @property
    def reserved_bytes(self) -> int:
        with self._lock:
            return sum(r.nbytes for r in self._reserved)

    def _used(self) -> int:
        return sum(slot.nbytes for slot in self._slots.values()) + sum(r.nbytes for r in self._reserved)

    def for_session(self, session: str) -> tuple[object | None, str]:
        """This session's model (with this session's name), or None and, once, why it went."""
        with self._lock:
            key = self._by_session.get(session)
            slot = self._slots.get(key) if key else None
            if slot is None:
                self._by_session.pop(session, None)
                return None, self._notices.pop(session, "")
            slot.last_used[session] = self._clock()
            name, source = slot.owners[session]
            return dataclasses.replace(slot.model, name=name, source=source), ""

    def holds(self, session: str) -> bool:
        """Whether ``session`` holds a model now (unlike ``for_session``, this leaves its notice to be told)."""
        with self._lock:
            return self._by_session.get(session) in self._slots

    def release(self, session: str) -> None:
        with self._lock:
            self._release(session)

    def _release(self, session: str) -> None:
        key = self._by_session.pop(session, None)
        slot = self._slots.get(key) if key else None
        if slot is not None:
            slot.owners.pop(session, None)
            slot.last_used.pop(session, None)
            if not slot.owners:
                del self._slots[key]

    def _evictable(self, slot: _Slot, now: float) -> bool:
        return all(not self._is_active(s) or now - slot.last_used.get(s, 0.0) > self.idle_seconds for s in slot.owners)

    def reserve(self, session: str, key: str, nbytes: int) -> Reservation:
        """Hold ``nbytes`` for the model ``key`` that ``session`` is about to load, making room first (idle models
        go). Give the reservation to ``claim`` once the model is loaded, or to ``cancel`` when the load fails.

        Raises:
            ModelBudgetError: the model alone is over the limit, or the models in memory and being loaded leave no
                room (the message gives the figures, and says so when the session's own model is what is in the way).
        """
        if nbytes > self.max_bytes:
            raise ModelBudgetError(
                f"this model needs {megabytes(nbytes)} MB, more than this server allows for a "
                f"loaded model ({megabytes(self.max_bytes)} MB, ELMO_EXPLORER_MODEL_MB)"
            )
        with self._lock:
            own = self._slots.get(self._by_session.get(session, ""))
            now = self._clock()
            used = self._used()
            for old, slot in sorted(self._slots.items(), key=lambda kv: max(kv[1].last_used.values(), default=0.0)):
                if used + nbytes <= self.max_bytes:
                    break
                if slot is own or not self._evictable(slot, now):
                    continue
                for owner, (name, _) in slot.owners.items():
                    self._notices[owner] = (
                        f"Your model “{name}” was unloaded to make room for another user's "
                        f"model (you had not used it for {self.idle_seconds / 60:.0f} minutes); "
                        "back to the startup model. Load it again to use it."
                    )
                    self._by_session.pop(owner, None)
                del self._slots[old]
                used -= slot.nbytes
            if used + nbytes > self.max_bytes:
                mine = own.nbytes if own is not None and set(own.owners) == {session} else 0
                if mine and used - mine + nbytes <= self.max_bytes:
                    raise ModelBudgetError(
                        f"this model needs {megabytes(nbytes)} MB and your current model holds {megabytes(mine)} of "
                        f"this server's {megabytes(self.max_bytes)} MB for loaded models until the new one is in; "
                        "press “Back to the startup model” first, then load this one."
                    )
                raise ModelBudgetError(
                    f"the server's memory for loaded models is in use by other sessions ({megabytes(used)} of "
                    f"{megabytes(self.max_bytes)} MB, counting models being loaded; this model needs "
                    f"{megabytes(nbytes)} MB). Try again later, or use a smaller model."
                )
            reservation = Reservation(session, key, nbytes)
            self._reserved.append(reservation)
            return reservation

    def cancel(self, reservation: Reservation) -> None:
        """Give back the bytes of a load that failed (a reservation already claimed or cancelled: nothing)."""
        with self._lock:
            self._drop(reservation)

    def _drop(self, reservation: Reservation | None) -> int:
        for k, held in enumerate(self._reserved):
            if held is reservation:
                del self._reserved[k]
                return held.nbytes
        return 0

    def claim(self, session: str, model, name: str, source: str, reservation: Reservation | None = None) -> object:
        """Make ``model`` (an ``app.serving.startup.LoadedModel``, loaded, or known by its key) this session's model,
        shown as ``name``; its reservation's bytes become the model's. The session's previous model is released.

        Raises:
            ModelBudgetError: a new model larger than its reservation that no longer fits (the reservation is
                given back and the session keeps its model).
        """
        with self._lock:
            reserved = self._drop(reservation)
            slot = self._slots.get(model.key)
            if slot is None:
                nbytes = model_bytes(model.embedder.bilm)
                if nbytes > reserved and self._used() + nbytes > self.max_bytes:
                    raise ModelBudgetError(
                        f"this model needs {megabytes(nbytes)} MB and the server's memory for loaded models has "
                        f"{megabytes(max(self.max_bytes - self._used(), 0))} MB free. Try again later, or use a "
                        "smaller model."
                    )
                slot = _Slot(model, nbytes, {}, {})
            if self._by_session.get(session) != model.key:
                self._release(session)
            self._slots[model.key] = slot
            slot.owners[session] = (name, source)
            slot.last_used[session] = self._clock()
            self._by_session[session] = model.key
            return dataclasses.replace(slot.model, name=name, source=source)

    def claim_known(self, session: str, key: str, name: str, source: str) -> object | None:
        """The model ``key`` as this session's model when it is in memory already (another session's load), else
        None."""
        with self._lock:
            slot = self._slots.get(key)
        return None if slot is None else self.claim(session, slot.model, name, source)

    def load(self, session: str, key: str, nbytes: int, build: Callable[[], object], name: str, source: str) -> object:
        """This session's model ``key``, shown as ``name``: the copy in memory when there is one, else
        ``nbytes`` reserved, ``build()`` run (outside the registry's lock: other keys load meanwhile; a second
        load of this key waits, then shares the copy) and the model claimed. A ``build`` that raises gives the
        reservation back, and the session keeps its model.

        Raises: ``ModelBudgetError`` (``reserve``, ``claim``) and whatever ``build`` raises.
        """
        with self._lock:
            lock = self._key_locks.setdefault(key, threading.Lock())  # one small lock per key ever loaded
        with lock:
            known = self.claim_known(session, key, name, source)
            if known is not None:
                return known
            reservation = self.reserve(session, key, nbytes)
            try:
                model = build()
            except BaseException:  # a bad file, or Streamlit stopping the run: the bytes are free again
                self.cancel(reservation)
                raise
            return self.claim(session, model, name, source, reservation)  # which takes the reservation either way


# ---- working memory ---------------------------------------------------------------------------------------
class WorkingMemory:
    """Working memory of the biLM calls, all sessions together: ``max_bytes`` by ``BiLMConfig.inference_bytes``.

    ``work_problem`` says whether a model's largest page call fits at all; ``embed_batch`` and ``type_vectors`` run
    the app's calls bounded and take their bytes from the shared limit for as long as they run (a call waits while
    others hold the bytes it needs; a call larger than the limit, of a startup model, runs when no other does).
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._used = 0
        self._changed = threading.Condition()

    @property
    def used_bytes(self) -> int:
        with self._changed:
            return self._used

    def call_bytes(self, config) -> int:
        """The estimate of the page's largest biLM call with this model (``CALL_POSITIONS`` positions)."""
        return config.inference_bytes(CALL_POSITIONS)

    def work_problem(self, config) -> str:
        """Why this server cannot run a model of ``config`` for a user (its page call over the limit), or "".

        The layer-0 vocabulary pass needs no check of its own: it holds at most ``vocabulary_budget`` a call
        (``type_vectors``), or one word's 3 positions (twice) when even that is more, and a model that passes here
        fits 3,264 positions."""
        need = self.call_bytes(config)
        if need <= self.max_bytes:
            return ""
        return (
            f"this model needs about {megabytes(need)} MB of working memory for one biLM call of the page "
            f"({CALL_SENTENCES} sentences of {MAX_TOKENS_PER_LINE} tokens, "
            f"{config.inference_bytes(1) / 2**10:,.0f} KB a token position), more than this server allows "
            f"({megabytes(self.max_bytes)} MB, ELMO_EXPLORER_WORK_MB)"
        )

    def positions(self, config) -> int:
        """Token positions one call of this model may hold: ``CALL_POSITIONS``, or as many as fit ``max_bytes``
        when fewer do (a startup model is not refused: its calls get smaller), at least one."""
        return int(max(1, min(CALL_POSITIONS, self.max_bytes // config.inference_bytes(1))))

    @contextlib.contextmanager
    def use(self, nbytes: int) -> Iterator[None]:
        """Hold ``nbytes`` of the limit while the block runs; wait while other calls leave too little."""
        with self._changed:
            self._changed.wait_for(lambda: self._used == 0 or self._used + nbytes <= self.max_bytes)
            self._used += nbytes
        try:
            yield
        finally:
            with self._changed:
                self._used -= nbytes
                self._changed.notify_all()

    def sentences_per_call(self, config, sentences: Sequence[Sequence[str]], most: int | None = None) -> int:
        """Sentences per biLM call so that a call of the longest of ``sentences`` (+ <S>, </S>) stays within
        ``positions``: at least 1, at most ``most``."""
        longest = max((len(s) for s in sentences), default=0) + 2
        return max(1, min(most or len(sentences) or 1, self.positions(config) // longest))

    def embed_batch(self, embedder, sentences: Sequence[Sequence[str]], most: int | None = None) -> list[np.ndarray]:
        """``embedder.embed_batch(sentences)`` in calls of at most ``positions`` token positions (at most ``most``
        sentences each), holding their estimate of the limit meanwhile."""
        config = embedder.bilm.config
        per_call = self.sentences_per_call(config, sentences, most)
        longest = max((len(s) for s in sentences), default=0) + 2
        with self.use(config.inference_bytes(min(per_call, max(len(sentences), 1)) * longest)):
            return embedder.embed_batch(sentences, batch_size=per_call)

    def type_vectors(self, embedder, words: Sequence[str]) -> np.ndarray:
        """``embedder.type_vectors(words)`` (the layer-0 vocabulary pass) in calls of at most ``vocabulary_budget``
        of working memory, holding that much of the limit meanwhile."""
        budget = self.vocabulary_budget()
        batch = embedder.type_vector_batch(memory_bytes=budget // VOCABULARY_MARGIN)
        with self.use(VOCABULARY_MARGIN * embedder.bilm.config.inference_bytes(3 * max(1, min(batch, len(words))))):
            return embedder.type_vectors(words, memory_bytes=budget // VOCABULARY_MARGIN)

    def vocabulary_budget(self) -> int:
        """Working memory one call of the layer-0 vocabulary pass may hold: ``TYPE_VECTOR_MEMORY``, or the whole
        limit when that is smaller. Its batch is sized to 1 / ``VOCABULARY_MARGIN`` of it by the estimate."""
        return min(TYPE_VECTOR_MEMORY, self.max_bytes)


class BoundedEmbedder:
    """An Embedder whose ``embed_batch`` and ``type_vectors`` go through a ``WorkingMemory`` (for code that takes
    an embedder and batches on its own, such as the probes of the Layer probes page); everything else is the
    embedder's."""

    def __init__(self, embedder, memory: WorkingMemory):
        self._embedder = embedder
        self._memory = memory

    def embed_batch(self, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> list[np.ndarray]:
        return self._memory.embed_batch(self._embedder, sentences, batch_size)

    def type_vectors(self, words: Sequence[str]) -> np.ndarray:
        return self._memory.type_vectors(self._embedder, words)

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)

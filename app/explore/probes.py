"""Logic of the Layers page ("what each layer knows"), free of Streamlit: probe results for the current
model (precomputed or computed on demand), the weights a task's learned s gives the explorer's sliders, and the
page's tables (its figures: ``app.render.probe_charts``; the sliders' writer: ``app.session.widgets``).

Results are ``elmo_core.probes.ProbeReport`` objects (files in format "elmo-explorer-probes/1"); the default model's
ships in ``assets/probes/default_probes.json`` (``python -m elmo_core probe --task all --out ...``).
Dims: L + 1 layers.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

from app.explore import mixing
from app.explore.mixing import W_RANGE, W_STEP
from app.explore.text import hide_paths
from elmo_core import DEFAULT_PROBE_RESULTS, ProbeReport, Progress, TaskResult, probes

DEFAULT_RESULTS = DEFAULT_PROBE_RESULTS


def task_label(name: str) -> str:
    """The task's short name for buttons and legends (``probes.TASKS``)."""
    return probes.TASKS[name].label if name in probes.TASKS else name


# Results files name the per-word baseline "mfs" in every task; for tagging it is the word form's most frequent tag.
BASELINE_NAMES = {("pos", "mfs"): "most frequent tag"}


def baseline_name(task: str, key: str) -> str:
    """How a baseline of a results file reads on the page: ``key`` unless ``BASELINE_NAMES`` renames it."""
    return BASELINE_NAMES.get((task, key), key)


def task_colour(name: str) -> str:
    return probes.TASKS[name].colour if name in probes.TASKS else "#444"


EXPLANATION = r"""
**Layer 0** is the word on its own. A character CNN reads the letters of the word and turns them into a vector;
it never sees the sentence, so "bank" gets the same layer-0 vector by a river and in the city. It knows
spelling-level things: word shape, endings like *-ing* or *-ly*, how common-looking a word is.

**Layer 1** is the first biLSTM layer. One LSTM reads the sentence left to right and one right to left, so each
word's vector now depends on its neighbours. In the ELMo paper this layer was the better one for **syntax**
(part of speech: 97.3% vs 96.8% for layer 2).

**Layer 2** is the second biLSTM layer, built on layer 1. In the paper it was the better one for **meaning in
context** (word sense: F1 69.0 vs 67.4 for layer 1).

A task does not have to pick one layer. ELMo gives each task a weighted average of all layers:
"""
FORMULA = r"\mathrm{ELMo} = \gamma \sum_{j=0}^{L} s_j\, h_j, \qquad s = \mathrm{softmax}(w)"
EXPLANATION_AFTER = """
**h_j** is the word's vector in layer j. **s_j** are the layer weights: positive and summing to 1, made from
free numbers **w_j** by a softmax (that is what the explorer's w sliders set). **γ (gamma)** scales the whole
vector; it changes no cosine similarity and no map. A task learns its own s and γ together with the task model;
the paper adds a small penalty λ‖w‖² (λ = 0.001) that pulls s towards equal weights.

Below, a probe asks each layer one question with a simple model on top: word sense by the nearest sense average
(the sense-means probe, paper section 5.3), part of speech by a linear classifier, and word sense again by the
leave-one-out probe (each occurrence of a word takes the sense of its nearest other occurrence; nothing is
trained, so it has no learned s and no paper number). The learned s is what a scalar mix, trained together
with a linear classifier, chose for the task. Our data and model differ from the paper's (see the notes), so
compare the pattern across layers, not the numbers.
"""


# ---- results --------------------------------------------------------------------------------------------------
def results_path() -> Path:
    """$ELMO_EXPLORER_PROBES, else assets/probes/default_probes.json."""
    return Path(os.environ.get("ELMO_EXPLORER_PROBES", DEFAULT_RESULTS))


def load_precomputed(path: str | Path | None = None, show_paths: bool = True) -> tuple[ProbeReport | None, str]:
    """(report, "") or (None, why): a missing file is not an error, a broken one is reported.

    Args:
        show_paths: whether ``why`` may name the file's folder on the server (for a visitor: only where the
            operator allows server paths); without, neither the folder nor the file's name is shown.
    """
    path = Path(path) if path else results_path()
    if not path.is_file():
        return (
            None,
            # a visitor gets no part of the path: an operator's file name can say as much as its folder
            f"No precomputed probe results at {path}."
            if show_paths
            else "No precomputed probe results on this server.",
        )
    try:
        return probes.load_report(path), ""
    except (ValueError, OSError) as err:  # json.JSONDecodeError is a ValueError
        why = str(err) if show_paths else hide_paths(str(err).replace(str(path), "the results file"))
        return None, f"Could not read the precomputed probe results ({why})."


def matching_report(report: ProbeReport | None, fingerprint: str, model_key: str) -> tuple[ProbeReport | None, str]:
    """The precomputed report if it was made for this model (same fingerprint); for the shipped default model
    a mismatch still returns it, with a warning that the numbers belong to another version of the weights."""
    if report is None:
        return None, ""
    if report.model.fingerprint == fingerprint:
        return report, ""
    if model_key == "default":
        return report, (
            "These precomputed results were made for another version of the default model's weights: "
            "recompute them below, or regenerate the file with `python -m elmo_core probe --task all "
            "--out assets/probes/default_probes.json`."
        )
    return None, ""


def data_problems(wordnet_dir=None, brown_dir=None, show_paths: bool = True) -> list[str]:
    """What is missing for computing the probes here (empty list: all there); without ``show_paths`` the folders
    searched on the server are left out (``app.explore.text.hide_paths``), the commands that fix it stay."""
    problems = probes.data_problems(wordnet_dir=wordnet_dir, brown_dir=brown_dir)
    return problems if show_paths else [hide_paths(p) for p in problems]


def compute_report(
    embedder, size: str = "quick", progress: Progress | None = None, wordnet_dir=None, brown_dir=None
) -> ProbeReport:
    """Run every task of ``probes.TASKS`` (their ``size`` subsample) and return a report like the precomputed file.

    Raises: FileNotFoundError when the probe data is missing.
    """
    report = probes.new_report(embedder)
    for k, task in enumerate(probes.TASKS):
        part = None
        if progress:

            def part(f, text, k=k, task=task):
                progress((k + f) / len(probes.TASKS), f"{task_label(task)}: {text}")

        report.tasks[task] = probes.run_probe(
            embedder, task, size, wordnet_dir=wordnet_dir, brown_dir=brown_dir, progress=part
        )
    return report


# ---- pushing s to the explorer ----------------------------------------------------------------------------------
def weights_for_explorer(
    s: Sequence[float], w_range: tuple[float, float] = W_RANGE, step: float = W_STEP
) -> list[float]:
    """Raw slider values w with softmax(w) ~= s: log s, centred, clipped to the slider range, on its step.

    Raises: ValueError if s is empty or has a non-positive entry.
    """
    if not s or min(s) <= 0:
        raise ValueError(f"layer weights must be positive, got {list(s)}")
    logs = [math.log(v) for v in s]
    mean = sum(logs) / len(logs)
    lo, hi = w_range
    return [round(min(max(v - mean, lo), hi) / step) * step for v in logs]


def softmax(w: Sequence[float]) -> list[float]:
    """s = softmax(w) as a list (``app.explore.mixing.softmax``)."""
    return mixing.softmax(w).tolist()


def used_weights_message(task: str, w: Sequence[float]) -> str:
    """What the Explorer says beside its sliders after a task's weights were put there (plain text)."""
    got = softmax(w)
    return (
        f"The sliders hold the {task_label(task)} weights from the Layer probes page: "
        f"w = {', '.join(f'{v:.1f}' for v in w)}, so s = {', '.join(f'{v:.2f}' for v in got)}."
    )


# ---- tables and captions ----------------------------------------------------------------------------------------
NONE = "-"  # a table cell for what a task does not have (no learned mix, no paper number)


def pct(v: float) -> float:
    """A fraction as a percentage with one decimal."""
    return round(100 * v, 1)


def chart_caption(result: TaskResult) -> str:
    """The line under a task's chart: what its "mix" bar is, when it has one, and what the diamonds are, when the
    paper has values for the task (plain text from the results file: the page escapes it)."""
    parts = []
    if result.has_mix:
        parts.append("mix: " + result.mix_learned_how.rstrip(".") + ".")
    elif result.mix_learned_how:
        parts.append(result.mix_learned_how.rstrip(".") + ".")
    if result.paper is not None:
        parts.append("◆: the paper's layer 1 and 2 (other data and model).")
    return " ".join(parts)


def summary_rows(report: ProbeReport) -> list[dict]:
    """One row per task for a table: ours per layer and mix, baselines, the paper, the data used."""
    rows = []
    for result in report.tasks.values():
        row = {"task": result.title}
        row.update({f"layer {j}": pct(v) for j, v in enumerate(result.layers)})
        row["learned mix"] = pct(result.mix_learned) if result.has_mix else NONE
        row["learned s"] = " / ".join(f"{v:.2f}" for v in result.s) if result.has_mix else NONE
        row["baselines"] = ", ".join(f"{baseline_name(result.task, k)} {pct(v)}" for k, v in result.baselines.items())
        paper = result.paper
        row["paper layer 1 / 2"] = f"{pct(paper.layer_1)} / {pct(paper.layer_2)}" if paper is not None else NONE
        row["data used"] = f"{result.data.n_train} train / {result.data.n_test} test"
        rows.append(row)
    return rows


def summary_table(report: ProbeReport) -> dict[str, list[str]]:
    """``summary_rows`` turned on its side for a narrow page: one row per quantity, one column per task
    (all cells text), so it fits at 1,024 px however many layers there are."""
    rows = summary_rows(report)
    keys = list(dict.fromkeys(k for row in rows for k in row if k != "task"))
    table: dict[str, list[str]] = {"": keys}
    for row in rows:
        table[row["task"]] = [_cell(row.get(k, "")) for k in keys]
    return table


def _cell(v) -> str:
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def data_notes(report: ProbeReport) -> list[tuple[str, str]]:
    """(title, note) per task for the page's notes: data, split, subsample, the paper's setting, run time.
    Plain text from the results file: the page escapes it."""

    def paper(r: TaskResult) -> str:
        return f"Paper: {r.paper.data} ({r.paper.metric})." if r.paper is not None else "The paper has no such probe."

    return [
        (r.title, f"{r.data.source}; split {r.data.split}; {r.data.subsample}. {paper(r)} Run time {r.seconds} s.")
        for r in report.tasks.values()
    ]


CHARTS_PER_ROW = 2  # task charts side by side: three are too narrow at 1,024 px (titles and labels cut)


def chart_rows(report: ProbeReport, per_row: int = CHARTS_PER_ROW) -> list[list[tuple[str, TaskResult]]]:
    """The report's (task, result) pairs in rows of at most ``per_row``, for the page's task charts."""
    items = list(report.tasks.items())
    return [items[i : i + per_row] for i in range(0, len(items), per_row)]


def mixing_tasks(report: ProbeReport) -> dict[str, TaskResult]:
    """The tasks of a report that learned a scalar mix (those whose s the explorer can take)."""
    return {name: r for name, r in report.tasks.items() if r.has_mix}

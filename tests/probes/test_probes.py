"""elmo_core.probes: the task table, running a task, the report helpers and the `probe` command, on the tiny
fixture biLM and tiny data. Each task's own module has its own test file (test_probes_<module>.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from elmo_core import probes
from elmo_core.probes.results import DataNote, PaperNumbers, TaskResult
from tests.conftest import PROBE_DATA, check_task_result

WORDNET, BROWN = PROBE_DATA / "wordnet", PROBE_DATA / "brown"


def test_probe_command_and_report(tmp_path, allennlp_files, monkeypatch):
    from elmo_core.cli import main

    options, weights = allennlp_files
    out = tmp_path / "probes.json"
    common = [
        "probe",
        "--options",
        str(options),
        "--weights",
        str(weights),
        "--device",
        "cpu",
        "--threads",
        "1",
        "--wordnet-dir",
        str(WORDNET),
        "--brown-dir",
        str(BROWN),
        "--out",
        str(out),
    ]
    assert main([*common, "--task", "pos"]) == 0
    assert main([*common, "--task", "wsd"]) == 0  # added to the same model's file
    assert main([*common, "--task", "loo_sense"]) == 0
    report = probes.load_report(out)
    assert json.loads(out.read_text())["format"] == probes.FORMAT
    assert set(report.tasks) == {"wsd", "pos", "loo_sense"}
    for task, result in report.tasks.items():
        check_task_result(result, 3, task)
    table = out.with_suffix(".md").read_text()
    assert "97.3" in table and "69.0" in table and "Not comparable" in table
    loo_row = next(line for line in table.splitlines() if line.startswith("| " + probes.TASKS["loo_sense"].title))
    assert loo_row.count("| - |") == 2  # no learned mix (its s too) and no paper numbers: "-", not made up


def test_missing_data_is_a_clear_error(tiny_embedder, tmp_path, monkeypatch):
    monkeypatch.delenv("ELMO_WORDNET_DIR", raising=False)
    monkeypatch.setattr("elmo_core.data.wordnet.wordnet_dirs", list)
    with pytest.raises(FileNotFoundError, match="probe --prepare"):
        probes.run_probe(tiny_embedder, "wsd")
    with pytest.raises(ValueError, match="task must be"):
        probes.run_probe(tiny_embedder, "ner")


def test_every_task_in_the_table_reports_its_data(tmp_path):
    from elmo_core.paths import ASSETS

    prepared = []
    for name, task in probes.TASKS.items():
        assert task.name == name and task.title and task.label and task.colour.startswith("#")
        assert set(task.sizes) == set(probes.SIZES) and issubclass(task.result_type, TaskResult)
        try:  # data that `probe --prepare` fetches, or data that ships in assets/
            found = task.find_data({"wordnet": tmp_path, "brown": tmp_path})
        except FileNotFoundError as err:
            assert "--prepare" in str(err)
            prepared.append(name)
        else:
            assert found.is_file() and ASSETS in found.parents
    assert prepared == ["wsd", "pos"]
    assert len(probes.data_problems(wordnet_dir=tmp_path, brown_dir=tmp_path)) == len(prepared)
    assert probes.data_problems(wordnet_dir=WORDNET, brown_dir=BROWN) == []
    names = [t.name for t in probes.TASKS.values()]
    assert (
        len({t.title for t in probes.TASKS.values()})
        == len({t.label for t in probes.TASKS.values()})
        == len(set(names))
        == len(probes.TASKS)
    )  # distinct probes, distinct names
    assert probes.TASKS["wsd"].label != probes.TASKS["loo_sense"].label


def toy_task(tmp_path: Path, calls: list) -> probes.ProbeTask:
    """A task that is only a table entry: what a new task module would define."""

    def run(embedder, params, max_items, seed, dirs, progress):
        calls.append((params, max_items, seed, dirs["wordnet"]))
        n = embedder.num_layers
        return TaskResult(
            task="toy",
            title="Toy task (counting)",
            metric="accuracy",
            layers=[0.5] * n,
            mix_learned=0.6,
            mix_learned_how="by hand",
            s=[1 / n] * n,
            w=[0.0] * n,
            gamma=1.0,
            layer_scale=[1.0] * n,
            baselines={"chance": 0.25},
            paper=paper,
            data=DataNote("toy", 3, 1, "none"),
            seconds=0.0,
        )

    paper = PaperNumbers(0.7, 0.8, "accuracy", "none")
    return probes.ProbeTask(
        "toy",
        "Toy task (counting)",
        "toy",
        "#123456",
        paper,
        {"full": {"n": 9}, "quick": {"n": 2}},
        TaskResult,
        lambda dirs: tmp_path,
        run,
    )


def test_a_new_task_needs_only_its_entry(tiny_embedder, allennlp_files, tmp_path, monkeypatch):
    from app.explore import probes as lg
    from elmo_core.cli import main

    calls: list = []
    monkeypatch.setattr(probes, "TASKS", {"toy": toy_task(tmp_path, calls)})
    result = probes.run_probe(tiny_embedder, "toy", "quick", seed=3, wordnet_dir=WORDNET)
    assert calls == [({"n": 2}, 0, 3, WORDNET)] and result.title == "Toy task (counting)"
    assert probes.data_problems() == []
    report = lg.compute_report(tiny_embedder)  # the Layers page runs every task of the table
    assert list(report.tasks) == ["toy"] and lg.task_label("toy") == "toy" and lg.task_colour("toy") == "#123456"
    assert "Toy task (counting)" in probes.markdown_table(report)
    assert lg.summary_rows(report)[0]["task"] == "Toy task (counting)"
    options, weights = allennlp_files
    out = tmp_path / "toy.json"
    assert (
        main(
            [
                "probe",
                "--task",
                "toy",
                "--options",
                str(options),
                "--weights",
                str(weights),
                "--device",
                "cpu",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert probes.load_report(out).tasks["toy"] == replace(result, seconds=0.0)

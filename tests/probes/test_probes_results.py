"""elmo_core.probes.results: typed results and the JSON layout elmo-explorer-probes/1 of the shipped files."""

from __future__ import annotations

import copy
import json

import pytest

from elmo_core import probes
from elmo_core.paths import DEFAULT_PROBE_RESULTS
from elmo_core.probes.results import FORMAT, DataNote, ProbeReport


@pytest.fixture(scope="module")
def shipped() -> dict:
    return json.loads(DEFAULT_PROBE_RESULTS.read_text(encoding="utf-8"))


def test_the_shipped_results_load_typed_and_save_unchanged(shipped, tmp_path):
    report = probes.load_report(DEFAULT_PROBE_RESULTS)
    assert set(report.tasks) == set(shipped["tasks"])
    for name, result in report.tasks.items():
        raw = shipped["tasks"][name]
        assert isinstance(result, probes.TASKS[name].result_type)
        assert result.layers == raw["layers"] and result.s == raw["s"] and result.data.n_test == raw["data"]["n_test"]
    assert report.tasks["wsd"].mix_linear == shipped["tasks"]["wsd"]["mix_linear"]
    assert report.tasks["pos"].layers_converged == shipped["tasks"]["pos"]["layers_converged"]
    assert report.model.fingerprint == shipped["model"]["fingerprint"]
    assert report.to_json() == shipped  # the same keys and values: old files stay readable, new ones alike
    report.save(tmp_path / "sub" / "again.json")
    assert json.loads((tmp_path / "sub" / "again.json").read_text()) == shipped


def test_data_note_keeps_the_task_counts_flat():
    note = DataNote.from_json({"source": "s", "n_items": 7, "n_train": 5, "n_test": 2, "split": "x"})
    assert note.counts == {"n_items": 7} and note.subsample == ""
    assert note.to_json() == {"source": "s", "n_items": 7, "n_train": 5, "n_test": 2, "split": "x"}
    assert note.with_subsample("all 7").to_json()["subsample"] == "all 7"


def broken(shipped: dict, change) -> dict:
    data = copy.deepcopy(shipped)
    change(data)
    return data


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("format"), "not a probe results file"),
        (lambda d: d.update(tasks=[]), "not a probe results file"),
        (lambda d: d["tasks"].update(ner=d["tasks"]["pos"]), "unknown probe task 'ner'"),
        (lambda d: d["tasks"]["wsd"].pop("mix_linear"), "task wsd has no 'mix_linear'"),
        (lambda d: d["tasks"]["pos"].update(layers="high"), "task pos.layers must be a non-empty list"),
        (
            lambda d: d["tasks"]["pos"]["layers"].__setitem__(1, 1.5),
            r"task pos.layers\[1\] must be a number in \[0, 1\]",
        ),
        (lambda d: d["tasks"]["pos"].update(s=[0.5, 0.5, 0.5]), "must be 3 weights summing to 1"),
        (lambda d: d["tasks"]["wsd"]["data"].update(n_test="many"), "n_train and n_test must be counts"),
        (lambda d: d["tasks"]["wsd"]["paper"].pop("layer_2"), "paper has no 'layer_2'"),
        (lambda d: d["tasks"]["pos"].update(task="wsd"), "task 'pos' holds the result of 'wsd'"),
        (lambda d: d["model"].update(dim="256"), "must be whole numbers"),
        (lambda d: d["tasks"]["pos"].update(layers_converged=[1, 0, 1]), "list of true/false"),
    ],
)
def test_a_broken_file_is_a_clear_error(shipped, change, message):
    with pytest.raises(ValueError, match=message):
        ProbeReport.from_json(broken(shipped, change), probes.result_types())


def test_load_report_rejects_other_json(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"tasks": {}}')
    with pytest.raises(ValueError, match="not a probe results file"):
        probes.load_report(bad)
    bad.write_text("{broken")
    with pytest.raises(ValueError):
        probes.load_report(bad)
    assert FORMAT == "elmo-explorer-probes/1"

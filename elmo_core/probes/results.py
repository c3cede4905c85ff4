"""Typed probe results and their JSON form (``elmo-explorer-probes/1``, the layout of the shipped results).

A results file is one ``ProbeReport``: the model it was measured on, when, a note, and one ``TaskResult`` per
task (a subclass per task adds that task's own fields). ``to_json``/``from_json`` keep the file's keys as
they were, so files written before these classes existed still load. Reading checks types and ranges and
raises ``ValueError`` naming the task and field, so a broken or foreign file is a clear error, never a
half-read report.

Dims: L + 1 layers. Accuracies are fractions in [0, 1].
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from elmo_core.model.strict_json import loads_strict

FORMAT = "elmo-explorer-probes/1"


def _number(value: Any, where: str, lo: float = -math.inf, hi: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise ValueError(f"{where} must be a number in [{lo}, {hi}], got {value!r}")
    return float(value)


def _numbers(value: Any, where: str, lo: float = -math.inf, hi: float = math.inf) -> list[float]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where} must be a non-empty list of numbers, got {value!r}")
    return [_number(v, f"{where}[{k}]", lo, hi) for k, v in enumerate(value)]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be text, got {value!r}")
    return value


def _get(data: Mapping, key: str, where: str) -> Any:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be a JSON object, got {type(data).__name__}")
    if key not in data:
        raise ValueError(f"{where} has no {key!r}")
    return data[key]


@dataclass(frozen=True)
class PaperNumbers:
    """The paper's numbers for a task (Peters et al. 2018, fractions), what they measure and on what data."""

    layer_1: float
    layer_2: float
    metric: str
    data: str

    @classmethod
    def from_json(cls, data: Mapping, where: str = "paper") -> PaperNumbers:
        return cls(
            _number(_get(data, "layer_1", where), f"{where}.layer_1", 0, 1),
            _number(_get(data, "layer_2", where), f"{where}.layer_2", 0, 1),
            _text(_get(data, "metric", where), f"{where}.metric"),
            _text(_get(data, "data", where), f"{where}.data"),
        )


@dataclass(frozen=True)
class DataNote:
    """What a task ran on: the source, the train/test sizes (items or tokens), the split and subsample in
    words, and the task's other counts (e.g. ``n_lemmas``), stored flat beside them in the JSON."""

    source: str
    n_train: int
    n_test: int
    split: str
    subsample: str = ""
    counts: dict[str, int | str] = field(default_factory=dict)

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "source": self.source,
            **self.counts,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "split": self.split,
        }
        if self.subsample:
            out["subsample"] = self.subsample
        return out

    @classmethod
    def from_json(cls, data: Mapping, where: str = "data") -> DataNote:
        named = ("source", "n_train", "n_test", "split", "subsample")
        n_train, n_test = (_get(data, k, where) for k in ("n_train", "n_test"))
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (n_train, n_test)):
            raise ValueError(f"{where}: n_train and n_test must be counts, got {n_train!r}, {n_test!r}")
        return cls(
            _text(_get(data, "source", where), f"{where}.source"),
            n_train,
            n_test,
            _text(_get(data, "split", where), f"{where}.split"),
            _text(data.get("subsample", ""), f"{where}.subsample"),
            {k: v for k, v in data.items() if k not in named},
        )

    def with_subsample(self, text: str) -> DataNote:
        return dataclasses.replace(self, subsample=text)


@dataclass(frozen=True)
class TaskResult:
    """The fields every probe task reports.

    task: its key in ``TASKS``; title and metric as shown; layers: the metric per layer 0..L; mix_learned:
    the metric of the learned scalar mix, measured as ``mix_learned_how`` says; s (L + 1, sums to 1), w
    (L + 1) and gamma: the learned mix; layer_scale: mean vector length per layer; baselines: {name: value};
    paper: the paper's numbers; data: what it ran on; seconds: run time.

    A task that trains nothing (the leave-one-out sense probe) has no learned mix: mix_learned, s, w and
    gamma are all None (``has_mix`` is False), and ``mix_learned_how`` says why. A task the paper did not run
    has paper None. In the JSON both are null.
    """

    task: str
    title: str
    metric: str
    layers: list[float]
    mix_learned: float | None
    mix_learned_how: str
    s: list[float] | None
    w: list[float] | None
    gamma: float | None
    layer_scale: list[float]
    baselines: dict[str, float]
    paper: PaperNumbers | None
    data: DataNote
    seconds: float

    # field name -> reader of that field's JSON value, for the fields a subclass adds
    EXTRA: ClassVar[dict[str, Callable[[Any, str], Any]]] = {}

    @property
    def has_mix(self) -> bool:
        """Whether the task learned a scalar mix (s, w, gamma and mix_learned are set)."""
        return self.s is not None

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["paper"] = dataclasses.asdict(self.paper) if self.paper is not None else None
        out["data"] = self.data.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping, where: str = "task") -> TaskResult:
        """Raises: ValueError naming the field that is missing or of the wrong type."""

        def get(key: str) -> Any:
            return _get(data, key, where)

        layers = _numbers(get("layers"), f"{where}.layers", 0, 1)
        mix = {name: get(name) for name in ("mix_learned", "s", "w", "gamma")}
        if all(v is None for v in mix.values()):
            s = w = gamma = mix_learned = None
        elif any(v is None for v in mix.values()):
            raise ValueError(f"{where}: mix_learned, s, w and gamma must all be set or all be null (no learned mix)")
        else:
            s = _numbers(mix["s"], f"{where}.s", 0, 1)
            if len(s) != len(layers) or abs(sum(s) - 1) > 1e-3:
                raise ValueError(f"{where}.s must be {len(layers)} weights summing to 1, got {s}")
            w, gamma = _numbers(mix["w"], f"{where}.w"), _number(mix["gamma"], f"{where}.gamma")
            mix_learned = _number(mix["mix_learned"], f"{where}.mix_learned", 0, 1)
        baselines = get("baselines")
        if not isinstance(baselines, Mapping):
            raise ValueError(f"{where}.baselines must be a JSON object")
        paper = get("paper")
        common = dict(
            task=_text(get("task"), f"{where}.task"),
            title=_text(get("title"), f"{where}.title"),
            metric=_text(get("metric"), f"{where}.metric"),
            layers=layers,
            mix_learned=mix_learned,
            mix_learned_how=_text(data.get("mix_learned_how", ""), f"{where}.mix_learned_how"),
            s=s,
            w=w,
            gamma=gamma,
            layer_scale=_numbers(get("layer_scale"), f"{where}.layer_scale", 0),
            baselines={
                _text(k, f"{where}.baselines"): _number(v, f"{where}.baselines.{k}", 0, 1) for k, v in baselines.items()
            },
            paper=PaperNumbers.from_json(paper, f"{where}.paper") if paper is not None else None,
            data=DataNote.from_json(get("data"), f"{where}.data"),
            seconds=_number(get("seconds"), f"{where}.seconds", 0),
        )
        extra = {name: read(get(name), f"{where}.{name}") for name, read in cls.EXTRA.items()}
        return cls(**common, **extra)


@dataclass(frozen=True)
class ModelInfo:
    """The model a report belongs to (``elmo_core.training.evaluate.model_info``); the fingerprint matches a report
    to the weights it was measured on."""

    name: str
    num_parameters: int
    dim: int
    num_layers: int
    fingerprint: str

    @classmethod
    def from_json(cls, data: Mapping, where: str = "model") -> ModelInfo:
        ints = [_get(data, k, where) for k in ("num_parameters", "dim", "num_layers")]
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in ints):
            raise ValueError(f"{where}: num_parameters, dim and num_layers must be whole numbers")
        return cls(
            _text(_get(data, "name", where), f"{where}.name"),
            *ints,
            _text(data.get("fingerprint", ""), f"{where}.fingerprint"),
        )


@dataclass
class ProbeReport:
    """A results file: the model, when it was made, a note on comparability, and the results by task name.

    ``load``/``save`` read and write ``FORMAT``; ``result_types`` maps a task name to its ``TaskResult`` class
    (``elmo_core.probes.result_types()`` for the tasks of the table).
    """

    model: ModelInfo
    created: str
    note: str
    tasks: dict[str, TaskResult] = field(default_factory=dict)

    @classmethod
    def new(cls, model: ModelInfo, note: str) -> ProbeReport:
        return cls(model, datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), note)

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "model": dataclasses.asdict(self.model),
            "created": self.created,
            "note": self.note,
            "tasks": {name: r.to_json() for name, r in self.tasks.items()},
        }

    @classmethod
    def from_json(cls, data: Any, result_types: Mapping[str, type[TaskResult]], where: str = "report") -> ProbeReport:
        """Raises: ValueError when ``data`` is not a report in ``FORMAT`` or a task is unknown or malformed."""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT or not isinstance(data.get("tasks"), Mapping):
            raise ValueError(f"{where} is not a probe results file ({FORMAT})")
        tasks = {}
        for name, result in data["tasks"].items():
            if name not in result_types:
                raise ValueError(f"{where}: unknown probe task {name!r} (known: {', '.join(result_types)})")
            tasks[name] = result_types[name].from_json(result, f"{where}: task {name}")
            if tasks[name].task != name:
                raise ValueError(f"{where}: task {name!r} holds the result of {tasks[name].task!r}")
        return cls(
            ModelInfo.from_json(_get(data, "model", where), f"{where}: model"),
            _text(data.get("created", ""), f"{where}.created"),
            _text(data.get("note", ""), f"{where}.note"),
            tasks,
        )

    def save(self, path: str | Path) -> None:
        """Write the report as indented JSON (parent folders are created)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path, result_types: Mapping[str, type[TaskResult]]) -> ProbeReport:
        """Raises: FileNotFoundError / OSError, or ValueError when the file is not valid JSON in ``FORMAT``."""
        data = loads_strict(Path(path).read_text(encoding="utf-8"), str(path), constants=True)
        return cls.from_json(data, result_types, str(path))

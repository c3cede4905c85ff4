"""benchmarks/load.py: a smoke run with 2 sessions against its own server (the tiny fixture biLM, so it is quick),
and its checks of what a page shows, on made-up pages (a check that passes everything would hide a broken app)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from benchmarks.load import Page, Session, summary, vega_rows
from tests.conftest import ALLENNLP, ROOT


@pytest.mark.multiprocess
def test_two_sessions_open_type_and_slide_without_errors(tmp_path):
    out = tmp_path / "load.json"
    env = dict(
        os.environ,
        ELMO_EXPLORER_OPTIONS=str(ALLENNLP / "options.json"),
        ELMO_EXPLORER_WEIGHTS=str(ALLENNLP / "lm_weights.hdf5"),
        ELMO_EXPLORER_REFERENCE=str(tmp_path / "no-reference"),
        TMPDIR=str(tmp_path),
    )
    for key in ("ELMO_EXPLORER_CHECKPOINT", "ELMO_EXPLORER_MODEL", "ELMO_EXPLORER_SESSION_MB"):
        env.pop(key, None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.load",
            "--sessions",
            "2",
            "--sets",
            "2",
            "--sentences",
            "6",
            "--moves",
            "2",
            "--timeout",
            "120",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    figures = json.loads(out.read_text())
    assert figures["errors"] == [] and figures["sets_done"] == 2
    assert {k: v["n"] for k, v in figures["timings"].items()} == {
        "open": 2,
        "new set": 2,
        "slider move": 4,
        "release to map": 2,
    }
    assert figures["memory"]["peak_sum_mb"] > 100  # a server that loaded torch and the model
    assert "median" in result.stdout and "server RSS" in result.stdout


def _session(query: str, text: str, xs: list[float]) -> Session:
    """A page whose map draws ``xs`` as occurrences, plus the query's ring and a grey other word (not counted)."""
    s = Session("http://127.0.0.1:9", 1)
    s.text = text
    s.page = Page(
        query=query,
        map_rows=[{"role": "occurrence", "series": "river", "x": x, "y": x} for x in xs]
        + [
            {"role": "neighbours query", "series": "neighbours query", "x": 0.0, "y": 0.0},
            {"role": "other words", "series": "other words", "x": 1.0, "y": 1.0},
        ],
    )
    return s


def test_the_checks_read_the_word_from_the_url_and_count_the_maps_points():
    text = "[river] The bank of the river.\n[money] A bank loan.\nThe Bank said no."
    assert _session("word=bank", text, [0.0, 1.0, 2.0]).check_map() == []
    assert "shows 2 points" in _session("word=bank", text, [0.0, 1.0]).check_map()[0]  # one occurrence missing
    assert "occurs 1 times" in _session("word=Bank&case=exact", text, [0.0, 1.0, 2.0]).check_map()[0]  # case
    assert "names no word" in _session("ex=bank", text, [0.0]).check_map()[0]
    # the points as the page sends them: the Vega-Lite chart's Arrow data
    import pandas as pd
    from streamlit import dataframe_util

    table = pd.DataFrame(
        {
            "x": [0.0, 1.0, 2.0, 1.0],
            "y": [0.0, 1.0, 2.0, 1.0],
            "series": ["river"] * 3 + ["neighbours query"],
            "role": ["occurrence"] * 3 + ["neighbours query"],
        }
    )
    chart = SimpleNamespace(
        datasets=[SimpleNamespace(data=SimpleNamespace(data=dataframe_util.convert_anything_to_arrow_bytes(table)))],
        data=SimpleNamespace(data=b""),
    )
    s = _session("word=bank", text, [])
    s.page.map_rows = vega_rows(chart)
    assert s.check_map() == [] and s.page.map_points() == [("river", [0.0, 1.0, 2.0], [0.0, 1.0, 2.0])]
    # no map: right only when the word has too few occurrences for one
    s = _session("word=loan", text, [0.0])
    s.page.map_rows = None
    assert s.check_map() == []
    s = _session("word=bank", text, [0.0])
    s.page.map_rows = None
    assert "drew no map" in s.check_map()[0]
    s.page.errors = ["exception: ValueError: x"]
    assert s.check_map() == ["exception: ValueError: x"]


def test_summary_gives_median_and_p95():
    values = [float(v) for v in range(1, 21)]
    figures = summary(values)
    assert figures["n"] == 20 and figures["median_s"] == 10.5 and 19 <= figures["p95_s"] <= 20
    assert summary([]) == {"n": 0}

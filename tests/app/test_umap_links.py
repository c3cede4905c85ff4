"""UMAP never changes what a link draws (issue 29 item 4): "auto" is a function of the points alone (PCA below
``MIN_POINTS_FOR_UMAP``, else UMAP, always), so a link draws the same map whether the server's UMAP warm-up is
off, running, done or failed; and UMAP's numba code is compiled once, at install (`make app` fills numba's
on-disk cache, ``explore.import_umap`` makes every UMAP function use it), so a fresh process compiles nothing.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from app.explore import projections
from app.serving.warm_up import UmapWarmUp
from tests.conftest import frame_of, no_errors, start_app

ROOT = Path(__file__).resolve().parents[2]
LINK = dict(ex="play", word="play", w="0,1,2", g="1.5", proj="auto")  # 15 occurrences: UMAP; weights moved


def test_auto_depends_on_the_number_of_points_only():
    assert "umap_state" not in inspect.signature(projections.project).parameters  # nothing about the server's state
    rng = np.random.default_rng(0)
    below = projections.project(rng.normal(size=(projections.MIN_POINTS_FOR_UMAP - 1, 8)), "auto")
    assert below.method == "pca" and "too few" in below.note
    pytest.importorskip("umap")
    at = projections.project(rng.normal(size=(projections.MIN_POINTS_FOR_UMAP, 8)), "auto")
    assert at.method == "umap" and at.coords.shape == (projections.MIN_POINTS_FOR_UMAP, 2) and not at.note


def _link_map(monkeypatch, warm: UmapWarmUp):
    from app.serving import jobs

    monkeypatch.setattr(jobs, "umap_warm_up", lambda: warm)
    at = start_app(**LINK)
    no_errors(at)
    frame = frame_of(at)
    return frame.projection.method, frame.coords


@pytest.mark.usefixtures("app_env", "fresh_caches")
def test_a_link_draws_the_same_map_whatever_the_state_of_the_warm_up(monkeypatch):
    pytest.importorskip("umap")
    maps = {}
    for state in ("off", "warming", "failed", "ready"):
        warm = UmapWarmUp()
        warm.state, warm.error = state, ("ImportError: no umap" if state == "failed" else "")
        maps[state] = _link_map(monkeypatch, warm)
    # and a real warm-up, started as the page opens: the page's UMAP fit waits for it (``_UMAP_LOCK``)
    running = UmapWarmUp().start()
    maps["started with the page"] = _link_map(monkeypatch, running)
    assert running.wait(120) and running.state == "ready", running.error
    method, coords = maps["off"]
    assert method == "umap" and coords.shape[0] >= projections.MIN_POINTS_FOR_UMAP
    for state, (other_method, other_coords) in maps.items():
        assert other_method == method, state
        np.testing.assert_array_equal(other_coords, coords, err_msg=state)  # bit for bit: one link, one map


def test_the_spinner_says_a_umap_map_waits_for_the_warm_up(monkeypatch):
    """(The sidebar's line: tests/app/test_app.py::test_umap_status_shows_only_while_it_is_true.)"""
    from app.serving import jobs

    warm = UmapWarmUp()
    warm.state = "warming"
    monkeypatch.setattr(jobs, "umap_warm_up", lambda: warm)
    assert jobs.UMAP_LOADING in jobs.projecting_text(20, "auto")
    assert jobs.UMAP_LOADING in jobs.projecting_text(20, "umap")
    assert jobs.projecting_text(20, "pca") == "Projecting 20 points with PCA…"
    warm.state = "ready"
    assert jobs.projecting_text(20, "auto") == "Projecting 20 points with the automatic projection…"


FIT_IN_A_FRESH_PROCESS = textwrap.dedent("""
    import time
    import numpy as np
    from app.explore import projections
    t = time.perf_counter()
    umap = projections.import_umap()
    x = projections.l2_normalise(np.random.default_rng(1).normal(size=(60, 32)).astype(np.float32))
    first = projections._umap_fit(x, 0, None)
    projections._umap_fit(x, 0, first)
    seconds = time.perf_counter() - t
    import numba
    from numba.core.registry import CPUDispatcher
    hits = misses = 0
    for name, module in list(__import__("sys").modules.items()):
        if name.split(".")[0] != "umap":
            continue
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value._cache is not None and value.signatures:
                stats = value.stats
                hits += sum(stats.cache_hits.values())
                misses += sum(stats.cache_misses.values())
    print(hits, misses, round(seconds, 2))
""")


@pytest.mark.slow
def test_a_fresh_process_reads_umap_from_the_cache_make_app_filled():
    """`make app` (the .installed step) ran ``UmapWarmUp().run_now()`` with NUMBA_CACHE_DIR under the venv:
    a fresh process's UMAP fits then compile none of UMAP's functions (numba counts cache misses)."""
    pytest.importorskip("umap")
    folder = projections.numba_cache_dir()
    if not folder or not any(p.name.startswith("umap_") for p in Path(folder).glob("*")):
        pytest.skip(f"no UMAP code in numba's cache ({folder}): `make setup` fills it")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=folder)
    done = subprocess.run(
        [sys.executable, "-c", FIT_IN_A_FRESH_PROCESS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    hits, misses, seconds = done.stdout.split()[-3:]
    assert int(misses) == 0 and int(hits) >= 10, (hits, misses, seconds)


def test_make_app_fills_the_cache_at_install_and_the_server_reads_the_same_one():
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "NUMBA_CACHE_DIR")}
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "setup"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    assert "UmapWarmUp().run_now()" in dry
    printed = subprocess.run(
        ["make", "--no-print-directory", "-s", "--eval", "print-%: ; @echo $($*)", "print-NUMBA_CACHE_DIR"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.strip()
    assert printed == str(ROOT / ".venv" / projections.NUMBA_CACHE_SUBDIR)
    # a server started without the Makefile (elmo-explorer, streamlit run) in that venv uses the same folder
    if Path(sys.prefix).resolve() == (ROOT / ".venv").resolve() and os.access(sys.prefix, os.W_OK):
        env.pop("NUMBA_CACHE_DIR", None)
        found = subprocess.run(
            [sys.executable, "-c", "from app.explore import projections; print(projections.numba_cache_dir())"],
            cwd=ROOT,
            env=dict(env, PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert found == printed

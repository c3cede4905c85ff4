"""app.serving.warm_start: the launcher starts the warm start in the server's process before the server, and after
it the start-up model and the default example's activations are in the caches every session reads."""

from __future__ import annotations

import sys

import pytest

from app import launch
from app.explore.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS
from app.explore.inputs import parse_input
from app.serving import caches, corpus, startup, warm_start
from elmo_core import REFERENCE_DIR


@pytest.mark.usefixtures("app_env", "fresh_caches")
def test_after_the_warm_start_the_startup_model_and_the_first_embedding_are_cached(monkeypatch):
    monkeypatch.setenv("ELMO_EXPLORER_UMAP_WARMUP", "0")
    monkeypatch.setenv("ELMO_EXPLORER_TYPE_VECTORS", "0")
    monkeypatch.setenv("ELMO_EXPLORER_REFERENCE", str(REFERENCE_DIR))  # the bundled one (the tests' default: none)
    job = warm_start.ServerWarmUp(["app.views.layout"]).run_now()
    assert job.state == "ready", job.error
    calls = []
    monkeypatch.setattr(startup, "load_embedder", lambda *a, **k: calls.append(a))
    model = startup.startup_model()  # from the cache: nothing loaded again
    assert calls == []
    tokens = [line.tokens for line in parse_input(EXAMPLE_SETS[DEFAULT_EXAMPLE].text).lines]
    _, ran = caches.embed(model, tokens)
    assert ran == 0  # every sentence of the first page came from the shared cache
    # the first map's reference neighbours: the default word's reference sentences, embedded once at start
    monkeypatch.setattr(corpus, "embed", lambda *a, **k: pytest.fail("the reference sentences ran again"))
    table, total, note = corpus.reference_table(model, EXAMPLE_SETS[DEFAULT_EXAMPLE].word, False)
    assert note == "" and total > 0 and table is not None and table.num_tokens > 0


def test_the_launcher_starts_the_warm_start_before_the_server(monkeypatch):
    order = []
    monkeypatch.setattr(warm_start, "start", lambda modules: order.append(("warm start", tuple(modules))))
    monkeypatch.setattr("streamlit.web.cli.main", lambda: order.append(("server", ())) or 0)
    monkeypatch.setattr(sys, "argv", ["elmo-explorer"])
    assert launch.main() == 0
    assert [what for what, _ in order] == ["warm start", "server"]
    assert "app.views.layout" in order[0][1]


def test_the_warm_start_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("ELMO_EXPLORER_WARM_START", "0")
    assert warm_start.start() is None

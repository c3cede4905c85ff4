"""The server's warm start: what the first page run of a fresh server process computes and keeps for every
session, done once at server start in a background job, so that the first visitor waits no longer than the
second (``benchmarks/cold_start.py`` measures both)."""

from __future__ import annotations

import importlib
import logging
import sys
import time
from collections.abc import Sequence

from app.explore.activations import TokenTable
from app.explore.controls import Controls
from app.explore.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS
from app.explore.frame import compute_frame
from app.explore.inputs import find_occurrences, parse_input
from app.render import map_chart
from app.serving import background, caches, corpus, jobs
from app.serving.settings import env_flag
from app.serving.startup import startup_model

log = logging.getLogger(__name__)


class ServerWarmUp(background.Job):
    """Loads the start-up model (``startup_model``, the cache every session reads), starts UMAP's warm-up
    (``jobs.umap_warm_up``), runs the model on the default example set into the shared activation cache and on
    its word's reference sentences (the first page's reference neighbours), starts
    the model's layer-0 vocabulary (``jobs.type_vectors``), and imports ``modules`` (the page's own code, named
    by the launcher: importing it is a second or more of the first run). State 'waiting', 'warming', then 'ready',
    'failed' (``error``) or 'stopped'. A visitor who comes meanwhile waits for the same caches, never for a second
    copy of the work."""

    NAME = "server-warm-up"
    IDLE, RUNNING = "waiting", "warming"

    def __init__(self, modules: Sequence[str] = ()):
        super().__init__()
        self.modules = tuple(modules)

    def work(self, in_background: bool) -> None:
        began = time.monotonic()
        umap = jobs.umap_warm_up()  # its own thread: it runs beside the model's load
        for name in self.modules:
            background.check()
            importlib.import_module(name)
        background.check()
        model = startup_model()
        background.check()
        example = EXAMPLE_SETS[DEFAULT_EXAMPLE]
        parsed = parse_input(example.text)
        acts, _ = caches.embed(model, [line.tokens for line in parsed.lines])
        background.check()
        corpus.reference_table(model, example.word, False)  # the first map's reference neighbours (60 sentences)
        background.check()
        first_map(TokenTable(parsed.lines, acts), find_occurrences(parsed.lines, example.word))
        if in_background:  # the line an operator waits for before a class (README)
            print(f"ELMo Explorer: warmed in {time.monotonic() - began:.0f} s, ready for visitors", file=sys.stderr)
        jobs.type_vectors(model)  # started in its own thread; the first map does not wait for it
        if in_background:
            umap.wait()


def first_map(table: TokenTable, occurrences) -> None:
    """Compute the default page's first map and what it reads of it, and throw them away: the first run of a
    process imports the libraries behind them (scikit-learn's clustering and SciPy's statistics, whose import
    parses docstrings: seconds on a busy 2-core machine, measured with cProfile on the page's first run)."""
    frame = compute_frame(table, occurrences, Controls(weights=(0.0,) * table.num_layers), word="warm start")
    frame.offers_clusters()
    map_chart.frame_chart(
        frame, occurrences, table, "label", title="warm start", bind=["#none"] * (table.num_layers + 1)
    )


def start(modules: Sequence[str] = ()) -> ServerWarmUp | None:
    """Start the warm start in the background (``ELMO_EXPLORER_WARM_START=0``: not started; None). Called by the
    launcher before the server starts, in the server's process."""
    if not env_flag("ELMO_EXPLORER_WARM_START", True):
        return None
    return ServerWarmUp(modules).start()

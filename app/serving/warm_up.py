"""UMAP's warm-up: its import and first fits in a fresh process, so that the first UMAP map does not wait for them
(no Streamlit here: ``app.serving.jobs.umap_warm_up`` keeps one per server process)."""

from __future__ import annotations

import numpy as np

from app.explore.projections import l2_normalise, project, tsne_fit
from app.serving import background


class UmapWarmUp(background.Job):
    """UMAP's import and first fits: state 'off', 'warming', 'ready' or 'failed' (``error`` says why).

    Started once per server process in a background thread (``app.serving.jobs.umap_warm_up``), and run once at
    install by `make app` and the Docker build (``run_now``), which fills numba's on-disk cache: the warm-up then
    takes about 3 s instead of about 40 s. The maps never depend on this state ("auto" is UMAP from
    ``MIN_POINTS_FOR_UMAP`` points, always): a UMAP map asked for while it is 'warming' waits for it (the page's
    spinner says so), and 'failed' only says why every UMAP map falls back to PCA.
    """

    NAME = "umap-warm-up"
    IDLE, RUNNING, STOPPED = "off", "warming", "off"

    def work(self, in_background: bool) -> None:
        x = np.random.default_rng(0).normal(size=(40, 16)).astype(np.float32)
        background.check()
        first = project(x, "umap", seed=0)  # raises when umap is missing or broken
        background.check()
        project(x, "umap", first.coords, seed=0)  # the warm-started path as well

    def then(self) -> None:
        try:  # t-SNE's first fit in a process loads and initialises its extension (seconds): do it here too
            tsne_fit(l2_normalise(np.random.default_rng(0).normal(size=(40, 16)).astype(np.float32)), 0)
        except Exception:  # t-SNE then pays it on first use; nothing else depends on it
            pass

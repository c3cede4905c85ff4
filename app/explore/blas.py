"""One BLAS thread for the explorer's small matrix products (no Streamlit here).

Why: many sessions share one server's cores; a product of a few hundred rows gains nothing from a thread pool and
the pools of concurrent sessions would oversubscribe the machine."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_BLAS_CONTROLLER = None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """NumPy/SciPy BLAS calls inside run on one thread (also usable as a decorator).

    The explorer's matrices are small (hundreds to a few thousand rows), so a second BLAS thread gains
    nothing; on a busy 2-core server (other sessions, the biLM, the UMAP warm-up) waiting for it to be
    scheduled made each small product take milliseconds (benchmarks/app_speed.py: slider path 588 -> 354 ms).
    threadpoolctl's limit is process-wide: overlapping sessions may leave it at 1 or restore the default,
    both harmless. torch's own thread pool is not affected.
    """
    global _BLAS_CONTROLLER
    try:
        if _BLAS_CONTROLLER is None:
            from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

            _BLAS_CONTROLLER = ThreadpoolController()
        limit = _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
    except Exception:  # threadpoolctl missing or unable to see the BLAS: run as is
        limit = contextlib.nullcontext()
    with limit:
        yield

"""The contexts map's 2-D projections: PCA, UMAP (compiled once, warm-started) and t-SNE, aligned from move to move
with Procrustes so that the points move instead of jumping (no Streamlit here)."""

from __future__ import annotations

import os
import sys
import threading
import warnings
from dataclasses import dataclass

import numpy as np

from app.explore.blas import one_blas_thread
from app.explore.neighbours import cosine_distances

MAX_CONTEXT_POINTS = 1500  # grey context tokens drawn on the map
MIN_POINTS_FOR_MAP = 3  # a 2-D projection of fewer points means nothing
MIN_POINTS_FOR_UMAP = 15  # below this, PCA is the honest choice (see APP_NOTES.md)


# ---- projection ---------------------------------------------------------------------------------------
# "live": the fixed axes of ``app.explore.live_map``, linear in s and γ, which the browser redraws while a slider
# moves (not a method of ``project``); the others are fitted to each mix and previewed linearly while one moves.
PROJECTIONS = ("live", "auto", "pca", "umap", "tsne")
FITTED = PROJECTIONS[1:]  # what ``project`` takes
PROJECTION_NAMES = {
    "live": "fixed axes (live)",
    "auto": "auto (PCA or UMAP)",
    "pca": "PCA",
    "umap": "UMAP",
    "tsne": "t-SNE",
}
# The maps are seeded so that a link draws the same map anywhere; UMAP then runs on one thread and says so on every
# fit, which fills a teacher's console with a warning about a choice made on purpose.
warnings.filterwarnings(
    "ignore", message=r"n_jobs value .* overridden to 1 by setting random_state", category=UserWarning
)
_UMAP_LOCK = threading.Lock()  # numba's default threading layer breaks when several threads run UMAP at once
_UMAP_IMPORT_LOCK = threading.Lock()
NUMBA_CACHE_SUBDIR = "numba-cache"  # under the virtual environment: where `make app` puts UMAP's compiled code


def numba_cache_dir() -> str | None:
    """Where numba keeps UMAP's compiled code: ``NUMBA_CACHE_DIR`` when set (the Makefile and the Dockerfile set
    it), else ``<virtual environment>/numba-cache`` in a virtual environment whose folder is writable (the one
    `make app` fills, so that a server started without the Makefile, e.g. by ``elmo-explorer``, finds it too),
    else None (numba's own default: beside the package's sources, or the user's cache folder)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    if sys.prefix == sys.base_prefix or not os.access(sys.prefix, os.W_OK):
        return None
    return os.path.join(sys.prefix, NUMBA_CACHE_SUBDIR)


def import_umap():
    """``import umap`` with numba's on-disk cache on for all of UMAP's compiled functions.

    umap-learn marks one of its ~130 numba functions ``cache=True`` (pynndescent most of its own), so numba's
    cache alone kept the first fit in every process at 11-13 s of compiling on 2 idle cores. During this import
    ``numba.njit`` defaults to ``cache=True``: the first fit then reads the compiled code from the cache that
    ``app.serving.warm_up.UmapWarmUp.run_now`` (`make app`, the Docker build) filled: import and first fit 2-3 s
    in a fresh process instead of about 40 s with an empty cache. numba keys the cache by each source file's stamp and the CPU, so an
    upgraded package or another machine compiles again (once). A function numba cannot cache (a closure) is
    compiled as before.
    """
    if "umap" in sys.modules:
        return sys.modules["umap"]
    with _UMAP_IMPORT_LOCK:
        if "umap" in sys.modules:
            return sys.modules["umap"]
        folder = numba_cache_dir()
        if folder and not os.environ.get("NUMBA_CACHE_DIR") and "numba" not in sys.modules:
            os.environ["NUMBA_CACHE_DIR"] = folder  # read when numba is imported
        import numba

        if folder and not numba.config.CACHE_DIR:  # numba was imported before: tell it now
            numba.config.CACHE_DIR = folder
        plain = numba.njit

        def njit(*args, **kwargs):
            if len(args) == 1 and callable(args[0]) and not kwargs:  # @numba.njit without arguments
                return plain(cache=True)(args[0])
            kwargs.setdefault("cache", True)
            return plain(*args, **kwargs)

        numba.njit = njit
        try:
            import umap
        finally:
            numba.njit = plain
        return umap


def _umap_fit(x: np.ndarray, seed: int, init: np.ndarray | None) -> np.ndarray:
    import warnings

    umap = import_umap()
    n = len(x)
    data, metric = x, "cosine"
    if init is not None:
        # A warm-started refit (every slider move) gets the cosine distances precomputed: for fewer than
        # 4096 points UMAP computes all pairs itself, through a Python-level loop over its numba metric
        # (about 45 ms of a 100 ms refit at n = 200). Same distances up to float rounding; the first fit
        # keeps metric="cosine" because its "pca" init needs the vectors, not the distances.
        data, metric = cosine_distances(x), "precomputed"
    with _UMAP_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reducer = umap.UMAP(
            n_components=2,
            n_neighbors=max(2, min(15, n - 1)),
            min_dist=0.1,
            metric=metric,
            random_state=seed,
            init="pca" if init is None else init,
            n_epochs=None if init is None else 60,
        )
        return reducer.fit_transform(data).astype(np.float64)


TSNE_MAX_ITER = 400  # a fit from scratch: scikit-learn's 250 early-exaggeration steps, then 150 more
TSNE_WARM_ITER = 250  # a refit that starts from the previous layout (scikit-learn's minimum)


def tsne_fit(x: np.ndarray, seed: int, init: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """t-SNE (scikit-learn, cosine metric) of the rows of ``x`` (n, D), n >= 5, bounded in time.

    A fit from scratch starts from PCA and stops after ``TSNE_MAX_ITER`` iterations (scikit-learn's default of
    1,000 took 3 s at 200 points on 2 busy cores); a refit from ``init`` (n, 2), the previous layout, runs
    ``TSNE_WARM_ITER`` iterations without early exaggeration, which would blow the settled layout apart.
    The Barnes-Hut gradient runs on one OpenMP thread: on a shared 2-core server its threads waited for each
    other (benchmarks/app_speed.py: 1.6 s on one thread vs 25-35 s on two for 500 iterations at load 6).

    Returns: ((n, 2) float64 coordinates, scikit-learn's ``n_iter_``: the iterations run, at most the cap).
    """
    from sklearn.manifold import TSNE
    from threadpoolctl import threadpool_limits

    n = len(x)
    perplexity = float(min(30.0, max(2.0, (n - 1) / 3)))
    warm = init is not None
    tsne = TSNE(
        n_components=2,
        perplexity=perplexity,
        metric="cosine",
        random_state=seed,
        init=init.astype(np.float32) if warm else "pca",
        early_exaggeration=1.0 if warm else 12.0,
        max_iter=TSNE_WARM_ITER if warm else TSNE_MAX_ITER,
    )
    with threadpool_limits(limits=1):  # OpenMP and BLAS
        coords = tsne.fit_transform(x).astype(np.float64)
    return coords, int(tsne.n_iter_)


@dataclass
class Projection:
    coords: np.ndarray | None  # (n, 2), None when no map can be drawn
    method: str  # "pca", "umap", "tsne" or "none"
    note: str = ""  # what the user should know (fallbacks, too few points)


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero): Euclidean geometry then equals cosine geometry."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


SAME_VECTOR_TOL = 1e-6  # max pairwise cosine distance below which vectors count as one (float noise)


def nearly_identical(x: np.ndarray, tol: float = SAME_VECTOR_TOL) -> bool:
    """True when the rows of ``x`` (n >= 2) all point the same way up to float noise: max pairwise cosine
    distance < ``tol``. E.g. layer 0 (context-free): every occurrence of one spelling gets the same vector, and
    the "layer 0 only" mix (s_0 = 0.99991, not exactly 1) leaves only tiny residues from layers 1 and 2.

    Uses the bound 1 - cos(a, b) = |a - b|^2 / 2 <= 2 max_i |x_i - c|^2 for unit rows and their mean c
    (O(n D) instead of all pairs); it only errs towards "not identical". Zero rows never count as identical.
    """
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        return False
    norms = np.linalg.norm(x, axis=1)
    if not np.all(norms > 0):
        return False
    unit = x / norms[:, None]
    centre = unit.mean(axis=0)
    return float(2.0 * np.max(np.sum((unit - centre) ** 2, axis=1))) < tol


def pca_2d(x: np.ndarray) -> np.ndarray:
    """(n, 2) coordinates on the first two principal components (zeros where the data has no variance).

    Each axis points so that its largest coordinate (in absolute value, the first such point) is positive: the
    signs of singular vectors are arbitrary, and this makes the map a function of the data alone.
    """
    xc = x.astype(np.float64) - x.mean(axis=0, keepdims=True)
    u, s, _ = np.linalg.svd(xc, full_matrices=False)
    coords = np.zeros((len(x), 2))
    k = min(2, len(s))
    coords[:, :k] = u[:, :k] * s[:k]
    if len(coords):
        extreme = coords[np.argmax(np.abs(coords), axis=0), [0, 1]]
        coords *= np.where(extreme < 0, -1.0, 1.0)
    return coords


def procrustes_align(coords: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Rotate/reflect, scale and shift ``coords`` onto ``reference`` (same points, same order), least squares.

    Used so that a re-projection after a slider move does not flip or spin the map.
    """
    mu_c, mu_r = coords.mean(axis=0), reference.mean(axis=0)
    c, r = coords - mu_c, reference - mu_r
    norm = float((c**2).sum())
    if norm == 0.0 or not np.isfinite(norm):
        return coords
    u, s, vt = np.linalg.svd(c.T @ r)
    rotation = u @ vt
    scale = s.sum() / norm
    return scale * c @ rotation + mu_r


@one_blas_thread()
def distinct_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bit-identical rows of x (n, D): (first, inverse) with ``x[first]`` the distinct rows in order of first
    appearance and ``x[first][inverse]`` equal to x. Rows are compared as raw bytes: ``np.unique(x, axis=0)``,
    which sorts them as numbers, took 4.5-5.7 ms for 200 x 768 on every map against 0.2 ms here."""
    x = np.ascontiguousarray(x)
    rows = x.view(np.dtype((np.void, x.dtype.itemsize * x.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]


def project(x: np.ndarray, method: str = "auto", previous: np.ndarray | None = None, seed: int = 0) -> Projection:
    """2-D map of the rows of ``x`` in cosine geometry: a function of its arguments alone, so that a link draws
    the same map whenever and wherever it is opened (never of the server's state, such as UMAP's warm-up: a
    UMAP fit asked for while the warm-up runs waits for it).

    Args:
        x: (n, D) vectors.
        method: "auto" (PCA below ``MIN_POINTS_FOR_UMAP`` points, else UMAP), "pca", "umap" or "tsne".
        previous: (n, 2) layout of the same points from the last call: UMAP and t-SNE start from it and
            every result is Procrustes-aligned to it, so the map stays put while weights change.
        seed: random seed (UMAP, t-SNE).
    Raises: what UMAP or t-SNE raise when they fail (``app.explore.frame`` then shows PCA and says why).
    """
    if method not in FITTED:
        raise ValueError(f"unknown projection {method!r}; choose one of {FITTED}")
    n = len(x)
    if n < MIN_POINTS_FOR_MAP:
        return Projection(None, "none", f"A 2-D map needs at least {MIN_POINTS_FOR_MAP} points; there are {n}.")
    if previous is not None and previous.shape != (n, 2):
        previous = None
    x = l2_normalise(np.asarray(x, dtype=np.float32))
    note = ""
    chosen = method
    if method == "auto":
        chosen = "pca" if n < MIN_POINTS_FOR_UMAP else "umap"
        if chosen == "pca":
            note = f"PCA, because {n} points are too few for UMAP to mean anything (needs {MIN_POINTS_FOR_UMAP})."
    if chosen == "umap" and n < 4:
        chosen, note = "pca", f"UMAP needs at least 4 points; showing PCA for {n}."
    if chosen == "tsne" and n < 5:
        chosen, note = "pca", f"t-SNE needs at least 5 points; showing PCA for {n}."
    if float(np.ptp(x, axis=0).max()) == 0.0:
        return Projection(
            np.zeros((n, 2)),
            "pca",
            "All points have the same vector (e.g. layer 0 alone for one spelling): they sit on one spot.",
        )
    # UMAP and t-SNE would scatter identical vectors (layer 0: every occurrence of a spelling) around their spot;
    # they are fitted on the distinct vectors, and each occurrence takes its vector's place. (PCA keeps every row,
    # so a repeated vector still weighs as often as it occurs.)
    first, inverse = distinct_rows(x)
    distinct = x[first]
    fit_x, fit_previous = x, previous
    if chosen in ("umap", "tsne") and len(distinct) < n:
        if len(distinct) < (4 if chosen == "umap" else 5):
            chosen, note = (
                "pca",
                (
                    f"Only {len(distinct)} distinct vectors among the {n} points (identical ones share "
                    f"a spot): showing PCA."
                ),
            )
        else:
            fit_x, fit_previous = distinct, None if previous is None else previous[first]
    if chosen == "pca":
        coords = pca_2d(x)
    elif chosen == "umap":
        coords = _umap_fit(fit_x, seed, fit_previous)
    else:
        coords, _ = tsne_fit(fit_x, seed, fit_previous)
    # Identical vectors get one spot, bit for bit (PCA's rows can differ in the last bit by their position).
    coords = coords[inverse] if fit_x is not x else coords[first][inverse]
    if previous is not None:
        coords = procrustes_align(coords, previous)
    return Projection(coords, chosen, note)

"""The map the browser redraws while a weight or γ slider is dragged: one fixed linear basis in which each point's
per-layer coordinates are known, so that the map of any mix is the mix of the layers' points (no Streamlit here).

The fixed-axes map ("live", the default) draws what a task model receives in the ELMo paper (Peters et al. 2018,
§3.3): the concatenation [x_k; γ·ELMo_k] of the context-free token vector x_k (layer 0 here) and the scaled mix
ELMo_k = Σ_j s_j h_kj, projected on two fixed axes. With P the basis of the x part and Q that of the ELMo part,

    point_k(s, γ) = (x_k - mean_x) P + γ · Σ_j s_j (h_kj - mean_j) Q = a_k + γ · Σ_j s_j c_kj,

so the page needs only a (n, 2) and c (L + 1, n, 2) to draw the map of every s and γ: γ = 0 puts every occurrence
of a spelling on one spot (x_k), a growing γ lets the contexts take over, and the axes never rescale. Each layer is
centred on its own mean (over the word's occurrences): the layers' means differ far more than the senses do, and
axes fitted around one common mean would show which layer a point leans to, not its sense. The map of a mix is
then the map of [x_k; γ·ELMo_k] moved by a constant, which changes no distance on it.

The other maps (PCA refitted to each mix, UMAP, t-SNE) are not linear in s: while a slider is dragged the page
shows their linear preview, a basis of the layers alone mapped by least squares onto the released map (so the
page moves the released map by the preview's displacement, so a drag starts where that map is), and on release
the exact map replaces it. AlignedUMAP, the alternative of
precomputed aligned frames, took about 9 s for 3 x 300 points (docs/LIVE_MAP.md): too slow for a slider.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.explore.blas import one_blas_thread

FLOOR = 0.05  # the frame's half extent is at least this share of the widest layer's (one spot stays one spot)


@dataclass(frozen=True)
class LiveMap:
    """What the page needs to draw the map of any mix.

    a: float64 (m, 2) each point's fixed part (the x_k part; a preview: one offset for all); c: float64 (L + 1,
    m, 2) each point's coordinates per layer; scales_with_gamma: γ multiplies the layers' part (the fixed-axes
    map) or not (a preview of a map of cosines, which γ does not change); reach: (centre (2,), fixed (2,), per
    layer (L + 1, 2)) the frame of the fixed-axes map, see ``half_extent`` (None: the released map's own extent);
    axes: float64 (2D, 2) the two orthonormal axes
    in the space of [x_k; ELMo_k] (the fixed-axes map; None for a preview). Rows follow the map's points: the
    occurrences, then the other words drawn in grey.
    """

    a: np.ndarray
    c: np.ndarray
    scales_with_gamma: bool
    reach: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    axes: np.ndarray | None = None

    def half_extent(self, s: np.ndarray) -> np.ndarray:
        """(2,) the frame's half width and height for the weights ``s``, whatever γ: fixed + Σ_j s_j per_layer_j,
        a bound on every point's distance from the centre at γ = 1 (each term the largest in its layer), at least
        ``FLOOR`` x the widest layer's. The frame depends on s only, so γ visibly grows and shrinks the cloud, and
        the page computes the same frame from the same numbers while a slider moves (``app.render.map_live``).
        Raises: ValueError without a frame (a preview)."""
        if self.reach is None:
            raise ValueError("a preview has no frame of its own")
        _, fixed, per_layer = self.reach
        return np.maximum(fixed + np.asarray(s, dtype=np.float64) @ per_layer, FLOOR * per_layer.max(axis=0))

    def coords(self, s: np.ndarray, gamma: float) -> np.ndarray:
        """float64 (m, 2): the points of the mix with weights ``s`` (L + 1,) summing to 1 and scale ``gamma``."""
        s = np.asarray(s, dtype=np.float64)
        if s.shape != (self.c.shape[0],):
            raise ValueError(f"{s.shape[0] if s.ndim else 0} weights for {self.c.shape[0]} layers")
        g = float(gamma) if self.scales_with_gamma else 1.0
        return self.a + g * np.tensordot(s, self.c, axes=1)


def _signs(coords: np.ndarray) -> np.ndarray:
    """+1/-1 per axis so that each axis's largest coordinate (first such point) is positive: a singular vector's
    sign is arbitrary, and this makes the map a function of the data alone (as ``projections.pca_2d``)."""
    if not len(coords):
        return np.ones(2)
    extreme = coords[np.argmax(np.abs(coords), axis=0), [0, 1]]
    return np.where(extreme < 0, -1.0, 1.0)


def _top2(z: np.ndarray) -> np.ndarray:
    """(d, 2) the first two principal directions of the rows of centred ``z`` (zero columns where it has none)."""
    _, sv, vt = np.linalg.svd(z, full_matrices=False)
    basis = np.zeros((z.shape[1], 2))
    k = min(2, int(np.sum(sv > sv[0] * 1e-12)) if len(sv) and sv[0] > 0 else 0)
    basis[:, :k] = vt[:k].T
    return basis


@one_blas_thread()
def fixed_axes(layers: np.ndarray, fit_rows: int) -> LiveMap:
    """The fixed-axes map of the points whose per-layer vectors are ``layers``.

    Args:
        layers: float32 (L + 1, m, D) every drawn point's vector in each layer (layer 0 the context-free x_k),
            layer-normed when the mix is.
        fit_rows: the axes are fitted on the first ``fit_rows`` points (the word's occurrences; the grey other
            words are then placed on the same axes).
    Returns: a LiveMap whose ``coords(s, γ)`` is the projection of [x_k; γ Σ_j s_j h_kj] on the two principal
    directions of the stacked rows [x_k; h_kj] (every occurrence k and layer j, each block centred), extent
    covering every mix up to γ = ``GAMMA_REFERENCE``. The rows are centred per block and per layer (see above).
    Raises: ValueError when ``layers`` is not 3-D or ``fit_rows`` < 1.
    """
    if layers.ndim != 3 or fit_rows < 1:
        raise ValueError(f"layers must be (L + 1, m, D) with at least one point to fit; got {layers.shape}")
    h = layers.astype(np.float64)
    x = h[0]
    fit_x, fit_h = x[:fit_rows], h[:, :fit_rows]
    mean_x, mean_h = fit_x.mean(axis=0), fit_h.mean(axis=1, keepdims=True)  # (D,), (L + 1, 1, D)
    num_layers = h.shape[0]
    stacked = np.concatenate([np.tile(fit_x - mean_x, (num_layers, 1)), (fit_h - mean_h).reshape(-1, h.shape[2])], 1)
    basis = _top2(stacked)
    p, q = basis[: h.shape[2]], basis[h.shape[2] :]
    a = (x - mean_x) @ p
    c = np.einsum("jmd,de->jme", h - mean_h, q)
    signs = _signs(np.tile(a[:fit_rows], (num_layers, 1)) + c[:, :fit_rows].reshape(-1, 2))
    a, c = a * signs, c * signs
    return LiveMap(a, c, True, _reach(a, c), basis * signs)


def _reach(a: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The frame's centre (the fixed parts' middle), the fixed parts' largest distance from it and each layer's
    largest coordinate, per axis (every point |a_k + Σ s_j c_kj - centre| <= fixed + Σ s_j per_layer_j)."""
    ok = np.isfinite(a).all(axis=1) & np.isfinite(c).all(axis=(0, 2))
    a, c = (a[ok], c[:, ok]) if ok.any() else (np.zeros((1, 2)), np.zeros((c.shape[0], 1, 2)))
    centre = (a.max(axis=0) + a.min(axis=0)) / 2
    per_layer = np.maximum(np.abs(c).max(axis=1), 1e-12)
    return centre, np.abs(a - centre).max(axis=0), per_layer


@one_blas_thread()
def preview(layers: np.ndarray, fit_rows: int, s: np.ndarray, exact: np.ndarray) -> LiveMap:
    """The linear preview of a map that is not linear in s (PCA refitted per mix, UMAP, t-SNE).

    Args:
        layers: float32 (L + 1, m, D) as ``fixed_axes``; s: (L + 1,) the released mix's weights; exact: (m, 2)
            the released map (the first ``fit_rows`` rows, the occurrences, are matched).
    Returns: a LiveMap (γ left out: those maps are of cosines) on the layers' principal axes, mapped by the affine
    transform that best carries its released-mix points onto ``exact`` (least squares): its displacements from the
    released mix are in the exact map's orientation and scale (the page adds them to the exact map).
    """
    h = layers.astype(np.float64)
    mean_h = h[:, :fit_rows].mean(axis=1, keepdims=True)
    q = _top2((h[:, :fit_rows] - mean_h).reshape(-1, h.shape[2]))
    c = np.einsum("jmd,de->jme", h - mean_h, q)
    released = np.tensordot(np.asarray(s, dtype=np.float64), c, axes=1)[:fit_rows]
    design = np.concatenate([released, np.ones((fit_rows, 1))], axis=1)
    transform, *_ = np.linalg.lstsq(design, np.asarray(exact, dtype=np.float64)[:fit_rows], rcond=None)
    linear, offset = transform[:2], transform[2]
    c = np.einsum("jme,ef->jmf", c, linear)
    a = np.broadcast_to(offset, (h.shape[1], 2)).copy()
    # A least-squares fit onto a map that is not linear can carry points far out of the released map's frame while
    # a slider moves (half the points of "bank" left a UMAP frame): the displacements are shrunk, if need be, so
    # that every mix keeps every point within PREVIEW_ROOM x the released map's half extent around its centre.
    s = np.asarray(s, dtype=np.float64)
    at_release = np.tensordot(s, c, axes=1)
    shrink = _room(np.asarray(exact, dtype=np.float64), c - at_release[None])
    a += (1.0 - shrink) * at_release
    return LiveMap(a, shrink * c, False, None)


PREVIEW_ROOM = 1.25


def _room(exact: np.ndarray, moves: np.ndarray) -> float:
    """The largest f <= 1 such that ``exact`` (m, 2) + f x each corner's displacement ``moves`` (L + 1, m, 2)
    stays inside the box of ``PREVIEW_ROOM`` times the released points' half extent around their centre (the mix
    is linear in s, so its points lie between the corners': the box holds every mix)."""
    finite = np.isfinite(exact).all(axis=1)
    if not finite.any():
        return 1.0
    lo, hi = exact[finite].min(axis=0), exact[finite].max(axis=0)
    centre, half = (lo + hi) / 2, np.maximum((hi - lo) / 2, 1e-12)
    lo, hi = centre - PREVIEW_ROOM * half, centre + PREVIEW_ROOM * half
    with np.errstate(divide="ignore", invalid="ignore"):
        limit = np.where(moves > 0, (hi - exact) / moves, np.where(moves < 0, (lo - exact) / moves, np.inf))
    limit = limit[:, finite]
    return float(np.clip(np.min(limit, initial=1.0), 0.0, 1.0))

"""app.explore.live_map: the fixed-axes map of [x_k; γ·ELMo_k] and the linear preview of the fitted maps."""

from __future__ import annotations

import numpy as np
import pytest

from app.explore import live_map, mixing
from app.explore.controls import Controls
from app.explore.frame import compute_frame


def _concatenated(table, rows, w, gamma):
    """[x_k; γ·ELMo_k] of the rows: layer 0 beside the scalar mix (the paper's task-model input)."""
    return np.concatenate([table.layers(False)[0][rows], table.mix(w, gamma, False)[rows]], axis=1).astype(np.float64)


@pytest.mark.parametrize("w, gamma", [((0.0, 0.0, 0.0), 1.0), ((0.0, 1.0, 2.5), 0.4), ((-2.0, 3.0, 0.0), 2.7)])
def test_the_map_is_the_projection_of_what_a_task_model_receives(bank, w, gamma):
    table, occ = bank
    rows = table.rows(occ)
    live = live_map.fixed_axes(table.layers(False)[:, rows], len(rows))
    coords = live.coords(mixing.softmax(w), gamma)
    z = _concatenated(table, rows, w, gamma) @ live.axes
    # the same picture up to one shift (each layer is centred on its own mean): every distance on the map is the
    # distance between the projected [x_k; γ·ELMo_k]
    np.testing.assert_allclose(coords - coords.mean(axis=0), z - z.mean(axis=0), atol=1e-4 * np.abs(z).max())
    np.testing.assert_allclose(live.axes.T @ live.axes, np.eye(2), atol=1e-9)


def test_gamma_zero_puts_a_spelling_on_one_spot_and_gamma_scales_the_context(bank):
    table, occ = bank
    rows = table.rows(occ)
    live = live_map.fixed_axes(table.layers(False)[:, rows], len(rows))
    s = mixing.softmax([0.0, 0.0, 0.0])
    assert np.ptp(live.coords(s, 0.0), axis=0).max() < 1e-6  # one spelling ("bank"): one x_k
    one, two = live.coords(s, 1.0), live.coords(s, 2.0)
    np.testing.assert_allclose(two - live.a, 2 * (one - live.a))  # γ scales the contextual part, axes fixed
    assert np.ptp(two, axis=0).max() > 1.9 * np.ptp(one, axis=0).max()


def test_the_frame_holds_every_point_of_the_mix_at_gamma_one_and_ignores_gamma(bank):
    table, occ = bank
    rows = table.rows(occ)
    live = live_map.fixed_axes(table.layers(False)[:, rows], len(rows))
    centre = live.reach[0]
    rng = np.random.default_rng(0)
    for _ in range(50):
        s = mixing.softmax(rng.uniform(-5, 5, 3))
        half = live.half_extent(s)
        assert (np.abs(live.coords(s, 1.0) - centre) <= half + 1e-9).all()
        assert (np.abs(live.coords(s, rng.uniform(0, 1)) - centre) <= half + 1e-9).all()  # a smaller γ: inside
    equal = mixing.softmax([0.0, 0.0, 0.0])
    spread = np.abs(live.coords(equal, 1.0) - centre).max(axis=0)
    assert (spread >= 0.5 * live.half_extent(equal)).any()  # the default mix fills its frame, not a corner of it


def test_the_axes_are_a_function_of_the_data_alone(bank):
    table, occ = bank
    rows = table.rows(occ)
    layers = table.layers(False)[:, rows]
    first, again = live_map.fixed_axes(layers, len(rows)), live_map.fixed_axes(layers.copy(), len(rows))
    np.testing.assert_array_equal(first.c, again.c)
    np.testing.assert_array_equal(first.a, again.a)
    with pytest.raises(ValueError, match="at least one point"):
        live_map.fixed_axes(layers, 0)
    with pytest.raises(ValueError, match="3 layers"):
        first.coords(np.array([0.5, 0.5]), 1.0)


def test_a_preview_starts_at_the_exact_map_when_that_map_is_linear(bank):
    table, occ = bank
    rows = table.rows(occ)
    layers = table.layers(False)[:, rows]
    s = mixing.softmax([0.0, 1.0, 0.0])
    axes = live_map.fixed_axes(layers, len(rows))
    rotation = np.array([[0.0, -2.0], [2.0, 0.0]])  # an exact map that is a turned, scaled copy of a linear one
    exact = axes.coords(s, 1.0) @ rotation + 5.0
    found = live_map.preview(layers, len(rows), s, exact)
    assert not found.scales_with_gamma and found.axes is None
    np.testing.assert_allclose(found.coords(s, 1.0), exact, atol=1e-6 * np.abs(exact).max())
    np.testing.assert_allclose(found.coords(s, 3.0), found.coords(s, 1.0))  # γ moves no map of cosines


def test_the_frame_draws_the_fixed_axes_by_default_and_keeps_them_while_sliders_move(bank):
    table, occ = bank
    first = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 0.0)), word="bank")
    assert first.projection.method == "live" and first.live is not None and first.live.scales_with_gamma
    np.testing.assert_allclose(first.coords, first.live.coords(first.s, 1.0))
    moved = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 3.0), gamma=2.0), first, word="bank")
    assert moved.live is first.live  # one fit per set of points: a slider move refits nothing
    np.testing.assert_allclose(moved.coords, first.live.coords(mixing.softmax([0, 0, 3.0]), 2.0))
    fresh = compute_frame(table, occ, Controls(same_word=False, weights=(0.0, 0.0, 3.0), gamma=2.0), word="bank")
    np.testing.assert_array_equal(fresh.coords, moved.coords)  # a link draws the released map exactly
    normed = compute_frame(
        table, occ, Controls(same_word=False, weights=(0.0, 0.0, 3.0), layer_norm=True), moved, word="bank"
    )
    assert normed.live is not first.live  # layer norm: other vectors, other axes
    umap_like = compute_frame(
        table, occ, Controls(same_word=False, projection="pca", weights=(0.0, 1.0, 0.0)), word="bank"
    )
    assert umap_like.live is not None and not umap_like.live.scales_with_gamma
    np.testing.assert_allclose(umap_like.live.c.shape, (3, len(occ), 2))


def test_a_preview_keeps_every_point_of_every_mix_near_the_released_frame(bank):
    table, occ = bank
    rows = table.rows(occ)
    layers = table.layers(False)[:, rows]
    s = mixing.softmax([0.0, 0.0, 0.0])
    exact = np.random.default_rng(3).normal(size=(len(rows), 2)) * 0.01  # a tight UMAP: the raw fit would fly off
    found = live_map.preview(layers, len(rows), s, exact)
    np.testing.assert_allclose(found.coords(s, 1.0), live_map.preview(layers, len(rows), s, exact).coords(s, 1.0))
    centre, half = (exact.max(0) + exact.min(0)) / 2, (exact.max(0) - exact.min(0)) / 2
    moved = [exact + found.coords(np.eye(3)[j], 1.0) - found.coords(s, 1.0) for j in range(3)]
    reach = max(float(np.max(np.abs(m - centre) / half)) for m in moved)
    assert reach <= live_map.PREVIEW_ROOM + 1e-9 and reach > 1.0  # it moves, and stays within the room

"""elmo_core.probes.task: the progress helpers every task uses."""

from __future__ import annotations

from elmo_core.probes.task import sub_progress


def test_sub_progress_maps_into_its_part_and_clamps():
    seen = []
    part = sub_progress(lambda f, text: seen.append((round(f, 6), text)), 0.6, 0.9)
    for f in (0.0, 0.5, 1.0, 1.5, -1.0):
        part(f, "x")
    assert seen == [(0.6, "x"), (0.75, "x"), (0.9, "x"), (0.9, "x"), (0.6, "x")]

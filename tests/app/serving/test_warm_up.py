"""app/serving/warm_up.py: UMAP's warm-up is a background job whose states the sidebar and the map's spinner read
('off', 'warming', 'ready', 'failed'); its real run (numba's compile) is tests/app/explore/test_projections.py's."""

from __future__ import annotations

from app.serving import background, warm_up


def test_the_warm_up_fits_the_first_and_the_warm_started_map_then_t_sne(monkeypatch):
    fits, tsne = [], []

    class _Projection:
        coords = "first layout"

    def project(x, method, previous=None, seed=0):
        fits.append((x.shape, method, previous, seed))
        return _Projection()

    monkeypatch.setattr(warm_up, "project", project)
    monkeypatch.setattr(warm_up, "tsne_fit", lambda x, seed: tsne.append(x.shape))
    warm = warm_up.UmapWarmUp()
    assert warm.state == "off"
    assert warm.run_now().state == "ready" and warm.error == ""
    assert fits == [((40, 16), "umap", None, 0), ((40, 16), "umap", "first layout", 0)]
    assert tsne == [(40, 16)]


def test_a_broken_umap_is_failed_with_why_and_a_stop_is_off(monkeypatch):
    def broken(*args, **kwargs):
        raise ImportError("No module named 'umap'")

    monkeypatch.setattr(warm_up, "project", broken)
    monkeypatch.setattr(warm_up, "tsne_fit", lambda x, seed: None)
    warm = warm_up.UmapWarmUp().run_now()
    assert warm.state == "failed" and warm.error == "ImportError: No module named 'umap'"

    def stopped(*args, **kwargs):
        raise background.Stopped("the process is exiting")

    monkeypatch.setattr(warm_up, "project", stopped)
    assert warm_up.UmapWarmUp().run_now().state == "off"

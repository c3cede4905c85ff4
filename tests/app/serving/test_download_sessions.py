"""A published model's download seen by several sessions at once (AppTest, against the local mirror): each one that
looks at the published models' list while the download runs sees its progress advance and its end, whichever
session pressed Download first, and can then pick the model.

``Visitor`` plays a browser tab as Streamlit's frontend does: a press of a button inside the list's fragment reruns
only that fragment, and the fragment reruns on its own only when the last whole-page run asked for a timer (an
auto-rerun message; a fragment-only run keeps the timers, a whole-page run replaces them).
"""

from __future__ import annotations

import threading
from functools import partial
from unittest import mock

import pytest
import streamlit.testing.v1.local_script_runner as lsr

from app.render.safe import shown
from app.serving import downloads as downloads_module
from app.serving import published
from tests.app.test_app_published import env, mirror, start  # noqa: F401 - fixtures
from tests.conftest import frame_of, no_errors

pytestmark = pytest.mark.download_server

LIST = "published_models.<locals>.rows"  # the published models' list: a fragment


class _LastRun:
    """What the last ``LocalScriptRunner.run`` sent: whether it ended with a whole-page run, and the fragments
    that run asked the browser to rerun on a timer."""

    whole_page = False
    timers: set[str] = set()


def _recording_run(original):
    def run(self, *args, **kwargs):
        tree = original(self, *args, **kwargs)
        starts = [data for event, data in zip(self.events, self.event_data) if event.name == "SCRIPT_STARTED"]
        _LastRun.whole_page = bool(starts) and not starts[-1].get("fragment_ids_this_run")
        _LastRun.timers = {m.auto_rerun.fragment_id for m in self.forward_msgs() if m.HasField("auto_rerun")}
        return tree

    return run


class Visitor:
    """One browser tab on the explorer (an AppTest) and the fragment timers its browser keeps."""

    def __init__(self):
        self.timers: set[str] = set()
        self.list_id = ""
        self.at = self._run(None, first=True)

    def _run(self, fragment: str | None, first: bool = False):
        rerun = partial(lsr.RerunData, fragment_id_queue=[fragment] if fragment else [])
        with (
            mock.patch.object(lsr, "RerunData", rerun),
            mock.patch.object(lsr.LocalScriptRunner, "run", _recording_run(lsr.LocalScriptRunner.run)),
        ):
            at = start() if first else self.at.run()
        if _LastRun.whole_page:
            self.timers = set(_LastRun.timers)
            self.list_id = next(
                fid
                for fid, wrapped in at._fragment_storage._fragments.items()
                if any(getattr(_cell(c), "__qualname__", "") == LIST for c in wrapped.__closure__ or ())
            )
        no_errors(at)
        return at

    def press(self, key: str) -> None:
        """A press of a button in the published models' list: a rerun of the list only."""
        self.at.button(key=key).set_value(True)
        self._run(self.list_id)

    def tick(self) -> None:
        """A second passes: the list reruns when the browser holds a timer for it."""
        if self.list_id in self.timers:
            self._run(self.list_id)

    def progress(self) -> list[str]:
        return [shown(p.text) for p in self.at.sidebar.progress]


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def test_every_session_sees_the_download_advance_and_end_whoever_started_it(env, monkeypatch):
    monkeypatch.setenv("ELMO_EXPLORER_ALLOW_DOWNLOADS", "1")
    steps = [threading.Event() for _ in range(2)]
    reported = threading.Event()
    real = downloads_module._library_fetch

    def stepped(name, progress, **callbacks):  # some progress, then the real download, as the test says
        assert steps[0].wait(60)
        progress("weights.hdf5", 25_000_000, 100_000_000)
        reported.set()
        assert steps[1].wait(60)
        return real(name, progress=progress, **callbacks)

    monkeypatch.setattr(downloads_module, "_library_fetch", stepped)
    visitors = [Visitor() for _ in range(3)]  # every page drawn before any download ran: none polls
    assert all(v.list_id not in v.timers for v in visitors)
    first, *others = visitors
    first.press("download_medium")
    assert published.downloads().running() == ["medium"]
    for v in others:  # their lists still offer the button: pressing it joins the running download
        v.press("download_medium")
    for v in visitors:
        assert v.progress() == ["medium: starting the download"]
    steps[0].set()
    assert reported.wait(30)
    for v in visitors:
        v.tick()
        assert v.progress() == ["medium: weights.hdf5 25 MB of 100 MB"], v.progress()
    steps[1].set()
    assert published.downloads().wait("medium", 60).finished
    for v in visitors:
        v.tick()  # the end: the whole page again, the model in the radio, no more polling
        assert not v.progress() and v.list_id not in v.timers
        assert list(v.at.radio(key="bundled_model").options) == ["default", "lm-only", "medium"]
        v.at.radio(key="bundled_model").set_value("medium").run()
        no_errors(v.at)
        assert frame_of(v.at).model_key == "published:medium"
    assert len([r for r in env.requests if r.path.endswith("weights.hdf5")]) == 1  # one download for all

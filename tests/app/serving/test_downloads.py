"""app/serving/downloads.py: one background download per model per server process, readable by every session; with a
stand-in for ``elmo_core.model.published.download`` (the real one against the local mirror: tests/app/test_app_published.py)."""

from __future__ import annotations

import threading

from app.serving.downloads import Downloads, DownloadState, one_line, size_text
from elmo_core.model.download import DownloadError


class _Fetch:
    """A stand-in download that reports progress, then waits for ``go`` before finishing (or failing)."""

    def __init__(self, fail: Exception | None = None, wait_for_lock: bool = False):
        self.calls: list[str] = []
        self.go = threading.Event()
        self.reported = threading.Event()
        self.fail = fail
        self.wait_for_lock = wait_for_lock

    def __call__(self, name, progress, on_wait, notice):
        self.calls.append(name)
        if self.wait_for_lock:
            on_wait()
        progress("options.json", 400, 400)
        progress("weights.hdf5", 25, 100)
        notice("weights.hdf5: the connection ended after 25 of 100 bytes; retrying in 1 s")
        self.reported.set()
        assert self.go.wait(10)
        if self.fail is not None:
            raise self.fail


def test_a_second_start_joins_the_running_download_and_every_reader_sees_its_progress():
    fetch = _Fetch()
    downloads = Downloads(fetch)
    assert downloads.get("small") is None and downloads.running() == []
    first = downloads.start("small")
    assert first.running and first.text() == "small: starting the download"
    assert fetch.reported.wait(10)
    second = downloads.start("small")  # another session's press: no second download
    seen = downloads.get("small")
    assert second == seen and fetch.calls == ["small"] and downloads.running() == ["small"]
    assert (seen.file, seen.done, seen.total, seen.fraction) == ("weights.hdf5", 25, 100, 0.25)
    assert seen.text() == (
        "small: weights.hdf5 25 B of 100 B (weights.hdf5: the connection ended after 25 of 100 bytes; retrying in 1 s)"
    )
    fetch.go.set()
    done = downloads.wait("small", 10)
    assert done.finished and not done.running and done.fraction == 1.0 and done.error == ""
    assert done.text() == "small: downloaded and verified" and downloads.running() == []
    downloads.start("small")  # finished: a new press (the cache was emptied meanwhile) fetches again
    downloads.wait("small", 10)
    assert fetch.calls == ["small", "small"]


def test_a_failed_download_keeps_its_line_and_can_start_again():
    fetch = _Fetch(
        fail=DownloadError("the server answered 404 Not Found", "http://127.0.0.1:1/x.hdf5"), wait_for_lock=True
    )
    downloads = Downloads(fetch)
    downloads.start("medium")
    assert fetch.reported.wait(10)
    fetch.go.set()
    failed = downloads.wait("medium", 10)
    assert not failed.running and not failed.finished and not failed.waiting
    assert failed.error == "the server answered 404 Not Found (http://127.0.0.1:1/x.hdf5)"
    assert failed.text() == "medium: download failed: the server answered 404 Not Found (http://127.0.0.1:1/x.hdf5)"
    fetch.fail = None
    assert downloads.start("medium").running and downloads.wait("medium", 10).finished


def test_waiting_for_another_process_and_one_line_errors():
    assert DownloadState("original", waiting=True).text() == (
        "original: another server process is downloading it; waiting for it to finish"
    )
    assert one_line(ValueError("first line\nsecond line")) == "first line"
    assert one_line(KeyError()) == "KeyError"
    assert one_line(DownloadError("x failed (http://h/f)", "http://h/f")) == "x failed (http://h/f)"  # once
    assert [size_text(n) for n in (374_434_792, 54_373_184, 450_896, 417)] == ["374 MB", "54 MB", "0.5 MB", "417 B"]
    assert DownloadState("s", file="weights.hdf5", done=5).fraction == 0.0  # no total yet: an empty bar

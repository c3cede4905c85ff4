"""app/serving/background.py's ``Job``: run once, in a thread of the module or the caller's, with its state, error and
seconds (the process-exit side is tests/app/test_clean_exit.py's)."""

from __future__ import annotations

import threading

import pytest

from app.serving import background


class _Count(background.Job):
    NAME = "test-job"

    def __init__(self, fail: Exception | None = None):
        super().__init__()
        self.fail, self.runs, self.where, self.after = fail, 0, [], 0

    def work(self, in_background: bool) -> None:
        self.runs += 1
        self.where.append(in_background)
        if self.fail is not None:
            raise self.fail

    def then(self) -> None:
        self.after += 1


def test_a_job_runs_once_in_the_background_and_says_how_long():
    job = _Count()
    assert job.state == "waiting" and not job.ready
    assert job.start() is job and job.start() is job  # the second start does nothing
    assert job.wait(10) and job.state == "ready" and job.seconds >= 0
    assert job.runs == 1 and job.where == [True] and job.after == 1 and job.error == ""


def test_run_now_works_in_the_calling_thread():
    job = _Count()
    seen = []
    job.work = lambda in_background: seen.append((in_background, threading.current_thread()))
    assert job.run_now().ready and seen == [(False, threading.current_thread())]


@pytest.mark.parametrize(
    "raised, state, error",
    [
        (ValueError("no weights"), "failed", "ValueError: no weights"),
        (background.Stopped("the process is exiting"), "stopped", ""),
    ],
)
def test_a_failure_or_a_stop_is_the_jobs_state_not_an_exception(raised, state, error):
    job = _Count(fail=raised).run_now()
    assert job.state == state and job.error == error and not job.ready
    assert job.after == (1 if state == "failed" else 0)  # a stopped job does no more work


def test_a_subclass_names_its_states():
    class Warm(background.Job):
        IDLE, RUNNING, STOPPED = "off", "warming", "off"

        def work(self, in_background: bool) -> None:
            background.check()
            raise background.Stopped("the process is exiting")

    job = Warm()
    assert job.state == "off"
    assert job.run_now().state == "off"

"""The server process's background threads, and a clean exit with them (no Streamlit here).

Why: Python runs its daemon threads until the interpreter is torn down; a daemon thread that then comes back from
native code which had released the GIL is ended with ``pthread_exit``, whose forced unwind aborts the process
when it crosses a C++ frame that may not throw (torch's ``gil_scoped_release`` destructor:
"terminate called without an active exception", exit 134; a thread running on in a half torn-down interpreter
also crashed it once, SIGSEGV). Streamlit's script threads are daemons, and so are the explorer's own (the UMAP
warm-up, the layer-0 vocabulary), and all of them run torch, numba or OpenMP code: a Ctrl-C or SIGTERM while a
page loaded the model or the vocabulary thread ran, or a Python process that ran the page in AppTest, aborted so.

So every thread of the explorer is started here and checks ``stopping()`` between its chunks of work, and at
interpreter exit (``atexit``: Streamlit has stopped its sessions by then, the daemon threads still run normally)
``stop_all`` sets the stop event and joins them and Streamlit's script threads (asked to stop by Streamlit: they
end at their next ``st.*`` call), so that none is inside native code when the interpreter is torn down. If one
is still running after ``EXIT_WAIT_S`` (UMAP compiling without its cache, a model far larger than ours being
read), a server that Streamlit stopped exits at once with its exit code 0 (``os._exit``), without the teardown
that would abort; any other process waits for the work in progress (``EXIT_WAIT_MAX_S`` at most), since its exit
code is its own.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

# How long a stopped server waits at exit for its threads (each stops within a chunk of work, well under a second
# on an idle machine, seconds on a busy one) before it exits without them: under the 10 s `docker stop` gives.
EXIT_WAIT_S = 8.0
# Any other process (AppTest, a script) waits until the work in progress is done, at most this long: it has an
# exit code of its own to keep, which skipping the teardown would lose.
EXIT_WAIT_MAX_S = 180.0
SCRIPT_THREAD = "ScriptRunner.scriptThread"  # the name Streamlit gives the threads that run the page

_stop = threading.Event()
_threads: list[threading.Thread] = []
_lock = threading.Lock()


class Stopped(Exception):
    """Raised by ``check()`` when the process is exiting: a background job ends where it is."""


def stopping() -> bool:
    """True once the process is exiting: a background job should stop at its next chunk."""
    return _stop.is_set()


def check() -> None:
    """Raises ``Stopped`` when the process is exiting (call it between chunks of work)."""
    if _stop.is_set():
        raise Stopped("the process is exiting")


def start(target: Callable[[], None], name: str) -> threading.Thread:
    """Start ``target`` in a daemon thread that the process waits for at exit (``stop_all``). Daemon, so that a
    thread never keeps a stopped server alive by itself; ``target`` should call ``check()`` or ``stopping()``
    between chunks of work."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    with _lock:
        _threads[:] = [t for t in _threads if t.is_alive()]
        _threads.append(thread)
    thread.start()
    return thread


class Job:
    """A piece of work run once, in a background thread of this module (``start``) or in the caller's (``run_now``).

    ``state`` goes from ``IDLE`` to ``RUNNING``, then "ready", "failed" (``error``: "Type: message") or ``STOPPED``
    (the process began to exit); ``seconds``: how long ``work`` ran (ready or failed). A subclass names its thread
    (``NAME``), may rename the idle/running/stopped states, and implements ``work``, which calls ``check()`` between
    chunks; ``in_background`` tells it where it runs.
    """

    NAME = "background-job"
    IDLE, RUNNING, STOPPED = "waiting", "running", "stopped"

    def __init__(self):
        self.state = self.IDLE
        self.error = ""
        self.seconds = 0.0
        self._thread: threading.Thread | None = None
        self._job_lock = threading.Lock()

    def work(self, in_background: bool) -> None:
        raise NotImplementedError

    def then(self) -> None:
        """Work after ``work`` ended (ready or failed) unless the process is exiting: not timed, its failures not
        the job's (default: nothing)."""

    def start(self):
        """Start the work in a background thread (once; later calls do nothing). Returns self."""
        with self._job_lock:
            if self._thread is None and self.state == self.IDLE:
                self.state = self.RUNNING
                self._thread = start(lambda: self._execute(True), self.NAME)
        return self

    def run_now(self):
        """Do the work in the calling thread (the install step, tests, benchmarks). Returns self."""
        self.state = self.RUNNING
        self._execute(False)
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a started job ended, at most ``timeout`` seconds; True when it is ready."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.state == "ready"

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def _execute(self, in_background: bool) -> None:
        begin = time.perf_counter()
        try:
            self.work(in_background)
            self.state = "ready"
        except Stopped:  # never inside native code when the interpreter is torn down
            self.state = self.STOPPED
            return
        except Exception as err:  # a job's failure must not take the page down: the page says why
            self.state, self.error = "failed", f"{type(err).__name__}: {err}"
        self.seconds = time.perf_counter() - begin
        if not stopping():
            self.then()


def _to_join() -> list[threading.Thread]:
    me = threading.current_thread()
    with _lock:
        ours = list(_threads)
    scripts = [t for t in threading.enumerate() if t.name == SCRIPT_THREAD]
    return [t for t in dict.fromkeys(ours + scripts) if t is not me and t.is_alive()]


def stop_all(timeout: float = EXIT_WAIT_S) -> list[threading.Thread]:
    """Ask every background thread to stop and wait for them and for Streamlit's script threads, at most
    ``timeout`` seconds in all. Returns the threads still running (none, normally)."""
    _stop.set()
    deadline = time.monotonic() + timeout
    for thread in _to_join():
        thread.join(max(0.0, deadline - time.monotonic()))
    return _to_join()


def _server_stopped() -> bool:
    """Whether this process is a Streamlit server that was stopped (a signal, Ctrl-C): its exit code is 0."""
    runtime = sys.modules.get("streamlit.runtime.runtime")
    if runtime is None:
        return False
    try:
        return runtime.Runtime.exists() and runtime.Runtime.instance().state.name in ("STOPPING", "STOPPED")
    except Exception:
        return False


def _names(threads: list[threading.Thread]) -> str:
    return ", ".join(t.name for t in threads)


def _at_exit() -> None:
    left = stop_all(EXIT_WAIT_S)
    if not left:
        return
    if _server_stopped():
        print(
            f"ELMo Explorer: {_names(left)} still running {EXIT_WAIT_S:.0f} s after the stop; exiting without "
            "waiting for it.",
            file=sys.stderr,
        )
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(0)
    print(f"ELMo Explorer: waiting for {_names(left)} to finish the work in progress before exiting.", file=sys.stderr)
    left = stop_all(EXIT_WAIT_MAX_S - EXIT_WAIT_S)
    if left:
        log.warning("%s still running %.0f s after the process began to exit", _names(left), EXIT_WAIT_MAX_S)


atexit.register(_at_exit)

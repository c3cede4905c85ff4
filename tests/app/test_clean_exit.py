"""Stopping the explorer is clean (issue 29 item 5): Ctrl-C (SIGINT) or SIGTERM at any moment, with a page
open, stops ``streamlit run app/streamlit_app.py`` with exit code 0 and no abort, and a Python process that ran
the page in AppTest exits 0.

The abort they replace ("terminate called without an active exception", exit 134): a daemon thread (Streamlit's
script thread loading the model, the layer-0 vocabulary thread, the UMAP warm-up) came back from torch code that
had released the GIL while the interpreter was being torn down; Python ends such a thread with ``pthread_exit``,
whose unwinding through torch's C++ frame calls ``std::terminate``. ``app.serving.background`` now stops and joins them
at exit, before the teardown.

Each server runs on a free 127.0.0.1 port with the default model on the CPU, the reference corpus (so the
vocabulary thread runs) and the UMAP warm-up on; a page is opened over Streamlit's websocket as a browser tab
does, and in one case in headless Chromium (skipped without it, as tests/app/test_browser.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from deploy.replicas import free_port, healthy

pytestmark = pytest.mark.multiprocess

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "allennlp-elmo"
ABORT = "terminate called"
STARTUP_TIMEOUT = 60
STOP_TIMEOUT = 40  # the server waits at most app.serving.background.EXIT_WAIT_S (8 s) for its threads, then exits
LINK = "ex=bank&word=bank"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), ELMO_EXPLORER_DEVICE="cpu", **extra)
    for key in (
        "ELMO_EXPLORER_OPTIONS",
        "ELMO_EXPLORER_WEIGHTS",
        "ELMO_EXPLORER_CHECKPOINT",
        "ELMO_EXPLORER_MODEL",
        "ELMO_EXPLORER_UMAP_WARMUP",
        "ELMO_EXPLORER_TYPE_VECTORS",
        "ELMO_EXPLORER_REFERENCE",
    ):
        if key not in extra:
            env.pop(key, None)
    return env


class Server:
    """``streamlit run app/streamlit_app.py`` as `make app` runs it, on a free port; its output in a file."""

    def __init__(self, tmp_path: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / f"streamlit-{self.port}.log"
        self._log = open(self.log_path, "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app/streamlit_app.py",
                "--server.headless",
                "true",
                "--server.port",
                str(self.port),
                "--server.address",
                "127.0.0.1",
                "--browser.gatherUsageStats",
                "false",
                "--server.fileWatcherType",
                "none",
            ],
            cwd=ROOT,
            env=_env(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not healthy(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server did not start (exit {self.proc.poll()}):\n{self.log()[-3000:]}")
            time.sleep(0.2)

    def stop(self, sig: signal.Signals) -> tuple[int, str, float]:
        """Send ``sig`` to the server process (as Ctrl-C or `docker stop` does); its exit code, output and the
        seconds it took to exit."""
        sent = time.monotonic()
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        took = time.monotonic() - sent
        return code, self.log(), took

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self._log.close()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path)
    try:
        yield s
    finally:
        s.close()


class Tab:
    """A browser tab as Streamlit's websocket protocol sees it: the page is asked to run with a link's query
    string; the messages it sends back are read in a thread until the server goes away (``spinners``: the
    spinners' texts shown so far; ``finished``: set when the page's run finished)."""

    def __init__(self, url: str, query: str):
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from websockets.sync.client import connect

        with urllib.request.urlopen(url + "/", timeout=10) as r:  # a browser's first request
            r.read()
        self.ws = connect(
            url.replace("http", "ws", 1) + "/_stcore/stream",
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=20,
            ping_interval=None,
        ).__enter__()
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_script_hash = ""
        self.ws.send(msg.SerializeToString())
        self.finished = threading.Event()
        self.spinners: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            while True:
                fwd = ForwardMsg()
                fwd.ParseFromString(self.ws.recv())
                if fwd.WhichOneof("type") == "script_finished":
                    self.finished.set()
                elif fwd.WhichOneof("type") == "delta" and fwd.delta.WhichOneof("type") == "new_transient":
                    self.spinners += [
                        e.spinner.text for e in fwd.delta.new_transient.elements if e.WhichOneof("type") == "spinner"
                    ]
        except Exception:  # the server closed the connection
            pass

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass


def _assert_clean(code: int | None, output: str, took: float, what: str) -> None:
    assert ABORT not in output, f"{what}: the process aborted:\n{output[-3000:]}"
    assert code == 0, f"{what}: exit code {code} after {took:.1f} s:\n{output[-3000:]}"


def test_ctrl_c_right_after_start_exits_0(server):
    server.wait_healthy()
    _assert_clean(*server.stop(signal.SIGINT), "SIGINT right after start")


def test_ctrl_c_while_the_first_page_loads_the_model_exits_0(server):
    """The page's script thread is inside torch (building and reading the model: its spinner is up) when Ctrl-C
    comes."""
    server.wait_healthy()
    tab = Tab(server.url, LINK)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not any("Loading the biLM" in text for text in tab.spinners):
            assert time.monotonic() < deadline and not tab.finished.is_set(), (tab.spinners, server.log()[-3000:])
            time.sleep(0.05)
        _assert_clean(*server.stop(signal.SIGINT), "SIGINT while the first page loads")
    finally:
        tab.close()


def test_sigterm_while_the_vocabulary_and_the_umap_warm_up_run_exits_0(server):
    """The page has been drawn: the layer-0 vocabulary thread (torch, 50,000 words) and the UMAP warm-up
    (numba) started in the background by that first page are running when SIGTERM comes."""
    server.wait_healthy()
    tab = Tab(server.url, LINK)
    try:
        assert tab.finished.wait(STARTUP_TIMEOUT), server.log()[-3000:]
        code, output, took = server.stop(signal.SIGTERM)
        _assert_clean(code, output, took, "SIGTERM with the background threads running")
    finally:
        tab.close()


@pytest.mark.browser
def test_ctrl_c_12_s_after_start_with_a_browser_tab_open_exits_0(server):
    """The issue's case: headless Chromium on ?ex=bank&word=bank, Ctrl-C 12 s after the server started."""
    from tests.app.test_browser import _browser_missing, _chromium, _skip_or_fail

    reason = _browser_missing()
    if reason:
        _skip_or_fail(reason)
    server.wait_healthy()
    with _chromium("1400,1000") as driver:
        driver.set_page_load_timeout(30)
        driver.get(f"{server.url}/?{LINK}")
        time.sleep(max(0.0, 12.0 - (time.monotonic() - server.started)))
        _assert_clean(*server.stop(signal.SIGINT), "SIGINT 12 s after start, a tab open")


APPTEST = textwrap.dedent("""
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file("app/streamlit_app.py", default_timeout=150)
    at.query_params["ex"] = "bank"
    at.query_params["word"] = "bank"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    print("page ran")
""")


def test_a_process_that_ran_the_page_in_apptest_exits_0():
    """The page's first run starts the UMAP warm-up and the layer-0 vocabulary thread; the process ends while they
    run (the fixture biLM keeps the run short)."""
    env = _env(
        ELMO_EXPLORER_OPTIONS=str(FIXTURE / "options.json"), ELMO_EXPLORER_WEIGHTS=str(FIXTURE / "lm_weights.hdf5")
    )
    done = subprocess.run(
        [sys.executable, "-c", APPTEST], cwd=ROOT, env=env, capture_output=True, text=True, timeout=400
    )
    output = done.stdout + done.stderr
    assert "page ran" in done.stdout, output[-3000:]
    _assert_clean(done.returncode, output, 0.0, "a process that ran the page in AppTest")

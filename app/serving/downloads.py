"""Published ELMo models downloaded from the model panel, in the background: one download per model per server
process, whatever the number of sessions, readable by all of them.

``Downloads.start(name)`` starts a thread that runs ``elmo_core.download`` (timeouts, retries,
resume, every file checked before it is kept, and a file lock per model so that several server processes end
with one copy), or joins the one that is running. ``Downloads.get(name)`` returns a snapshot of its progress
(``DownloadState``) that any session may draw. When it ends the model is in the cache, so the model panel
offers it like any other cached model; a failed download keeps its one-line error until the next start.

No Streamlit import: ``app.serving.published`` keeps one ``Downloads`` per server process.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass

MB = 1_000_000  # sizes as the download command prints them


def size_text(n: int) -> str:
    """Bytes as the panel shows them: "374 MB", "54 MB", "0.5 MB", "82 kB", "417 B"."""
    if n >= 10 * MB:
        return f"{n / MB:,.0f} MB"
    if n >= 100_000:
        return f"{n / MB:.1f} MB"
    return f"{n / 1000:,.0f} kB" if n >= 1000 else f"{n} B"


@dataclass(frozen=True)
class DownloadState:
    """One download as a session sees it: the file being fetched and its bytes (``total`` None until the server
    said), ``waiting`` while another process holds the model's lock, ``error`` (one line) or ``finished``."""

    name: str
    file: str = ""
    done: int = 0
    total: int | None = None
    waiting: bool = False
    notice: str = ""  # the last retry line ("weights.hdf5: the connection ended ...; retrying in 2 s")
    error: str = ""
    finished: bool = False

    @property
    def running(self) -> bool:
        return not self.finished and not self.error

    @property
    def fraction(self) -> float:
        """0..1 for the progress bar: the weights' bytes (options.json is a few hundred bytes)."""
        if self.finished:
            return 1.0
        if self.file != "weights.hdf5" or not self.total:
            return 0.0
        return min(max(self.done / self.total, 0.0), 1.0)

    def text(self) -> str:
        """One line for the progress bar (plain text: every part is the server's own)."""
        if self.error:
            return f"{self.name}: download failed: {self.error}"
        if self.finished:
            return f"{self.name}: downloaded and verified"
        if self.waiting:
            return f"{self.name}: another server process is downloading it; waiting for it to finish"
        if not self.file:
            return f"{self.name}: starting the download"
        if self.file == "options.json" and self.total and self.done >= self.total:
            return f"{self.name}: options.json fetched; waiting for weights.hdf5"
        of = f" of {size_text(self.total)}" if self.total else ""
        line = f"{self.name}: {self.file} {size_text(self.done)}{of}"
        return f"{line} ({self.notice})" if self.notice else line


# fetch(name, progress=..., on_wait=..., notice=...): elmo_core.download with its other arguments fixed
Fetch = Callable[..., object]


class Downloads:
    """The server process's downloads, keyed by model name (thread-safe)."""

    def __init__(self, fetch: Fetch | None = None):
        self._fetch = fetch or _library_fetch
        self._states: dict[str, DownloadState] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> DownloadState | None:
        """The latest state of ``name``'s download in this process, or None when none was started."""
        with self._lock:
            return self._states.get(name)

    def running(self) -> list[str]:
        """The names being downloaded now."""
        with self._lock:
            return [name for name, s in self._states.items() if s.running]

    def start(self, name: str) -> DownloadState:
        """Start downloading ``name`` in a background thread, or join the download that is running (a second
        session's press fetches nothing more). A finished or failed one starts again."""
        with self._lock:
            state = self._states.get(name)
            if state is not None and state.running:
                return state
            state = self._states[name] = DownloadState(name)
            thread = self._threads[name] = threading.Thread(
                target=self._run, args=(name,), daemon=True, name=f"elmo-download-{name}"
            )
        thread.start()
        return state

    def wait(self, name: str, timeout: float | None = None) -> DownloadState | None:
        """Block until ``name``'s download thread ends (tests, scripts); its last state."""
        with self._lock:
            thread = self._threads.get(name)
        if thread is not None:
            thread.join(timeout)
        return self.get(name)

    def _update(self, name: str, **changes) -> None:
        with self._lock:
            self._states[name] = dataclasses.replace(self._states[name], **changes)

    def _run(self, name: str) -> None:
        def progress(file: str, done: int, total: int | None) -> None:
            self._update(name, file=file, done=done, total=total, waiting=False)

        try:
            self._fetch(
                name,
                progress=progress,
                on_wait=lambda: self._update(name, waiting=True),
                notice=lambda line: self._update(name, notice=line),
            )
        except Exception as err:  # noqa: BLE001 - every failure becomes the line the panel shows
            self._update(name, error=one_line(err), waiting=False)
        else:
            self._update(name, finished=True, waiting=False, notice="")


def one_line(err: BaseException) -> str:
    """An exception as one line for the page: ``DownloadError``'s own line (with the URL it names), else the
    first line of the message, else the exception's type."""
    text = str(err).strip()
    first = text.splitlines()[0] if text else type(err).__name__
    url = getattr(err, "url", None)
    return f"{first} ({url})" if url and url not in first else first


def _library_fetch(name: str, **callbacks) -> object:
    from elmo_core import download

    return download(name, **callbacks)  # the cache and the base URL: $ELMO_CORE_CACHE, $ELMO_CORE_BASE_URL

"""A local HTTP mirror on 127.0.0.1 for the download tests and benchmark: serves files from memory with
Range/If-Range support (as S3 does), and misbehaves on request: drops the connection part way, sends a
body shorter than its Content-Length, answers a status code, or never answers at all. It also acts as a
plain HTTP proxy (a request line with an absolute URL is served by path), so proxy settings can be tested.

Nothing here leaves the machine: the server binds 127.0.0.1 on a free port.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass
class Fault:
    """What to do to the next ``times`` requests of a path (``times`` None: every request).
    kind: "drop" (announce the whole length, send ``after`` bytes, close: once, a dropped connection; every
    time, a body that is always shorter than its Content-Length), "status" (answer ``status`` with no body),
    "hang" (accept the connection, never answer)."""

    kind: str
    times: int | None = 1
    after: int = 0
    status: int = 500


@dataclass
class Request:
    path: str
    headers: dict
    proxied: bool  # the request line held an absolute URL: it came through a proxy setting


@dataclass
class Mirror:
    """``with Mirror({"a/b.json": b"..."}) as m: m.url`` -> "http://127.0.0.1:PORT/"."""

    files: dict[str, bytes]
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    ranges: bool = True
    port: int = 0  # 0: a free port

    def __post_init__(self):
        self._lock = threading.Lock()
        self._stop = threading.Event()
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                mirror._serve(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> Mirror:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    def add_fault(self, path: str, fault: Fault) -> None:
        with self._lock:
            self.faults.setdefault(path, []).append(fault)

    def _next_fault(self, path: str) -> Fault | None:
        with self._lock:
            queue = self.faults.get(path, [])
            while queue:
                fault = queue[0]
                if fault.times is None:
                    return fault
                if fault.times > 0:
                    fault.times -= 1
                    if fault.times == 0:
                        queue.pop(0)
                    return fault
                queue.pop(0)
        return None

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.path
        proxied = raw.startswith("http://") or raw.startswith("https://")
        path = urlsplit(raw).path.lstrip("/")
        with self._lock:
            self.requests.append(Request(path, dict(handler.headers), proxied))
        fault = self._next_fault(path)
        if fault is not None and fault.kind == "hang":
            self._stop.wait(60)
            handler.close_connection = True
            return
        if fault is not None and fault.kind == "status":
            handler.send_response(fault.status)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        body = self.files.get(path)
        if body is None:
            handler.send_response(404)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        etag = '"' + hashlib.md5(body).hexdigest() + '"'
        start = 0
        wanted = handler.headers.get("Range")
        if_range = handler.headers.get("If-Range")
        if wanted and self.ranges and (if_range is None or if_range == etag):
            start = int(wanted.removeprefix("bytes=").split("-")[0])
            if start >= len(body):
                handler.send_response(416)
                handler.send_header("Content-Range", f"bytes */{len(body)}")
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            handler.send_response(206)
            handler.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            handler.send_response(200)
        if self.ranges:
            handler.send_header("Accept-Ranges", "bytes")
        handler.send_header("ETag", etag)
        handler.send_header("Content-Length", str(len(body) - start))
        handler.send_header("Content-Type", "application/octet-stream")
        handler.end_headers()
        view = memoryview(body)[start:]
        if fault is not None and fault.kind == "drop":
            view = view[: fault.after]
            handler.close_connection = True
        try:
            for first in range(0, len(view), 1 << 20):
                handler.wfile.write(view[first : first + (1 << 20)])
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True


def main() -> None:
    """``python -m tests.mirror [--port 8765] [--drop-after N]``: serve the reference test model under every
    published model's paths until Ctrl-C, for trying the download command by hand against 127.0.0.1. With
    ``--drop-after N`` the first request of each weights file is cut after N bytes."""
    import argparse
    from pathlib import Path

    from elmo_core.model.published_table import PUBLISHED

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--drop-after", type=int, default=0)
    args = parser.parse_args()
    fixture = Path(__file__).parent / "fixtures" / "allennlp-elmo"
    files = {}
    for model in PUBLISHED.values():
        paths = model.paths()
        files[paths["options.json"]] = (fixture / "options.json").read_bytes()
        files[paths["weights.hdf5"]] = (fixture / "lm_weights.hdf5").read_bytes()
    mirror = Mirror(files, port=args.port)
    if args.drop_after:
        for model in PUBLISHED.values():
            mirror.add_fault(model.paths()["weights.hdf5"], Fault("drop", after=args.drop_after))
    with mirror:
        print(
            f"serving the reference test model under every published name at {mirror.url} (Ctrl-C stops); "
            "'original' will be refused: its size is known, and this is not its file",
            flush=True,
        )
        try:
            mirror._stop.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

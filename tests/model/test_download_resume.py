"""elmo_core.model.download_resume through ``fetch`` against servers on 127.0.0.1: a part is resumed only with its own
URL's validator, and only from an answer that proves it continues the same file; else the download starts over."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from elmo_core.model.download import Policy, fetch
from tests.mirror import Mirror

pytestmark = pytest.mark.download_server

BODY = bytes(range(256)) * 2000  # 512,000 bytes, every offset distinguishable
FAST = Policy(connect_timeout=2, read_timeout=2, retries=3, backoff=0.01)


# ---- the part's record ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "record", [None, {"url": "http://127.0.0.1:1/other/f.bin", "validator": '"x"'}, {"url": "SAME", "validator": None}]
)
def test_a_part_without_its_servers_validator_is_not_resumed(record, tmp_path):
    """A part from another mirror, or with no ETag to guard the splice, could mix two versions: start over."""
    with Mirror({"f.bin": BODY}) as mirror:
        (tmp_path / "f.bin.part").write_bytes(b"x" * 300_000)
        if record is not None:
            record = {**record, "url": mirror.url + "f.bin" if record["url"] == "SAME" else record["url"]}
            (tmp_path / "f.bin.part.json").write_text(json.dumps(record))
        fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=FAST)
    assert (tmp_path / "f.bin").read_bytes() == BODY
    assert "Range" not in mirror.requests[0].headers


# ---- a resume is kept only when the answer proves it continues the same file ---------------------------------
NEW = bytes(reversed(BODY))  # the file as changed upstream: same length, other bytes everywhere
LONGER = NEW + b"more" * 1000
CUT = 200_000
DATE_1, DATE_2 = "Mon, 01 Jan 2024 00:00:00 GMT", "Tue, 02 Jan 2024 00:00:00 GMT"


class Upstream:
    """A server on 127.0.0.1 whose file changes after the first answer: the first GET gets BODY with the
    ``first`` validator headers, cut after CUT bytes; a GET with Range gets ``resume(start)`` -> (status, headers,
    body); any later GET without Range gets ``whole`` = (headers, body) with status 200."""

    def __init__(self, first: dict, resume, whole: tuple[dict, bytes]):
        self.requests: list[dict] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                headers = dict(self.headers)
                upstream.requests.append(headers)
                if len(upstream.requests) == 1:
                    status, sent, body, length = 200, first, BODY[:CUT], len(BODY)
                elif "Range" in headers:
                    status, sent, body = resume(int(headers["Range"].removeprefix("bytes=").rstrip("-")))
                    length = len(body)
                else:
                    (sent, body), status = whole, 200
                    length = len(body)
                self.send_response(status)
                for name, value in sent.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(length))
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = len(body) != length

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/f.bin"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _partial(body: bytes, headers: dict, start_shift: int = 0, total: int | None = None):
    """A resume answer: 206 with ``body`` from the asked start (moved by ``start_shift``) and ``headers``."""

    def answer(start):
        first = start + start_shift
        whole = len(body) if total is None else total
        span = {"Content-Range": f"bytes {first}-{len(body) - 1}/{whole}"}
        return 206, {**headers, **span}, body[first:]

    return answer


def _unreadable(body: bytes, headers: dict):
    """A resume answer: 206 whose Content-Range cannot be read ("bytes */*")."""

    def answer(start):
        return 206, {**headers, "Content-Range": "bytes */*"}, body[start:]

    return answer


V1, V2 = {"ETag": '"v1"'}, {"ETag": '"v2"'}
RESUMES = {
    # the reported case: If-Range ignored, the new file's tail sent with its new ETag
    "ignores If-Range": (V1, _partial(NEW, V2), (V2, NEW), 'ETag is now "v2", not "v1"'),
    "another ETag for the same bytes": (V1, _partial(BODY, V2), (V2, BODY), "ETag is now"),
    "a wrong Content-Range start": (V1, _partial(BODY, V1, start_shift=-1000), (V1, BODY), "resumed at byte"),
    "a wrong total": (V1, _partial(LONGER, V1), (V1, LONGER), "is now 516,000 bytes, not 512,000"),
    "no validator": (V1, _partial(NEW, {}), ({}, NEW), "carries no ETag"),
    "an unreadable Content-Range": (V1, _unreadable(BODY, V1), (V1, BODY), "unreadable Content-Range 'bytes */*'"),
    "a weak ETag": (V1, _partial(NEW, {"ETag": 'W/"v1"'}), (V2, NEW), "weak ETag"),
    "another Last-Modified": (
        {"Last-Modified": DATE_1},
        _partial(NEW, {"Last-Modified": DATE_2}),
        ({"Last-Modified": DATE_2}, NEW),
        "Last-Modified is now",
    ),
}


@pytest.mark.parametrize("case", list(RESUMES))
def test_a_resume_that_does_not_prove_the_same_file_starts_over_and_never_splices(case, tmp_path):
    first, resume, whole, why = RESUMES[case]
    notices = []
    with Upstream(first, resume, whole) as server:
        fetch(server.url, tmp_path / "f.bin", policy=FAST, sleep=lambda s: None, notice=notices.append)
    got = (tmp_path / "f.bin").read_bytes()
    assert got == whole[1]  # one version, byte for byte: never the old head with the new tail
    assert got[:CUT] != BODY[:CUT] or got[CUT:] == BODY[CUT:]
    assert [("Range" in r) for r in server.requests] == [False, True, False]
    assert server.requests[1]["If-Range"] == next(iter(first.values()))
    [restart] = [line for line in notices if "starting over" in line]
    assert restart.endswith("; starting over from byte 0") and why in restart, notices
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]


def test_a_resume_with_the_same_last_modified_is_kept(tmp_path):
    same = {"Last-Modified": DATE_1}
    with Upstream(same, _partial(BODY, same), (same, b"never asked")) as server:
        fetch(server.url, tmp_path / "f.bin", policy=FAST, sleep=lambda s: None)
    assert (tmp_path / "f.bin").read_bytes() == BODY
    assert [r.get("If-Range") for r in server.requests] == [None, DATE_1]

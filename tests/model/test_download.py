"""elmo_core.model.download.fetch against a local mirror on 127.0.0.1: whole files, resume, every failure mode."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from elmo_core.model.download import DownloadError, Policy, fetch, sha256_of
from tests.mirror import Fault, Mirror

pytestmark = pytest.mark.download_server

BODY = bytes(range(256)) * 2000  # 512,000 bytes, every offset distinguishable
FAST = Policy(connect_timeout=2, read_timeout=2, retries=3, backoff=0.01)


def _no_sleep(waits: list):
    return waits.append


def test_a_whole_file_arrives_byte_for_byte_and_no_part_is_left(tmp_path):
    seen = []
    with Mirror({"f.bin": BODY}) as mirror:
        out = fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=FAST, progress=lambda d, t: seen.append((d, t)))
    assert out.read_bytes() == BODY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]
    assert seen[-1] == (len(BODY), len(BODY))
    assert all(b >= a for (a, _), (b, _) in zip(seen, seen[1:]))  # progress never goes back
    assert mirror.requests[0].headers.get("Accept-Encoding") == "identity"


def test_a_dropped_connection_resumes_with_a_range_request(tmp_path):
    waits, notices = [], []
    with Mirror({"f.bin": BODY}) as mirror:
        mirror.add_fault("f.bin", Fault("drop", after=200_000))
        fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=FAST, sleep=_no_sleep(waits), notice=notices.append)
    assert (tmp_path / "f.bin").read_bytes() == BODY
    first, second = mirror.requests
    assert "Range" not in first.headers
    start = int(second.headers["Range"].removeprefix("bytes=").rstrip("-"))
    assert 0 < start <= 200_000 and start % 65536 == 0  # whole 64 KiB reads kept, the cut one repeated
    assert second.headers["If-Range"].startswith('"')  # the ETag of the first answer guards the splice
    assert waits == [0.01]
    assert len(notices) == 1 and "IncompleteRead" in notices[0] and "attempt 2 of 4" in notices[0]


def test_a_part_left_by_a_killed_process_is_resumed(tmp_path):
    import hashlib

    with Mirror({"f.bin": BODY}) as mirror:
        (tmp_path / "f.bin.part").write_bytes(BODY[:300_000])
        etag = '"' + hashlib.md5(BODY).hexdigest() + '"'  # what the first answer's ETag was
        record = {"url": mirror.url + "f.bin", "validator": etag, "total": len(BODY)}
        (tmp_path / "f.bin.part.json").write_text(json.dumps(record))
        fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=FAST)
    assert (tmp_path / "f.bin").read_bytes() == BODY
    assert [r.headers.get("Range") for r in mirror.requests] == ["bytes=300000-"]
    assert mirror.requests[0].headers["If-Range"] == etag


def test_a_part_of_a_file_that_changed_on_the_server_starts_over(tmp_path):
    notices = []
    with Mirror({"f.bin": BODY}) as mirror:
        (tmp_path / "f.bin.part").write_bytes(b"x" * 300_000)  # from an older version of the file
        (tmp_path / "f.bin.part.json").write_text(json.dumps({"url": mirror.url + "f.bin", "validator": '"old"'}))
        fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=FAST, notice=notices.append)
    assert (tmp_path / "f.bin").read_bytes() == BODY  # the server answered 200, so nothing of the old part stays
    assert mirror.requests[0].headers["If-Range"] == '"old"'
    assert notices == ["the server sent the whole file instead of the rest; starting over from byte 0"]


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


def test_a_server_without_ranges_restarts_from_zero(tmp_path):
    with Mirror({"f.bin": BODY}, ranges=False) as mirror:
        mirror.add_fault("f.bin", Fault("drop", after=200_000))
        fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=FAST, sleep=lambda s: None)
    assert (tmp_path / "f.bin").read_bytes() == BODY


def test_a_body_always_shorter_than_its_length_never_becomes_the_file(tmp_path):
    with Mirror({"f.bin": BODY}) as mirror:
        mirror.add_fault("f.bin", Fault("drop", times=None, after=100_000))
        with pytest.raises(DownloadError, match="gave up after 4 attempts: Connection broken") as info:
            fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=FAST, sleep=lambda s: None)
    assert info.value.url == mirror.url + "f.bin"
    assert not (tmp_path / "f.bin").exists()
    # what did arrive waits as a part for a later resume, under another name
    assert (tmp_path / "f.bin.part").stat().st_size < len(BODY)


def test_a_404_is_final_and_not_retried(tmp_path):
    with Mirror({}) as mirror:
        with pytest.raises(DownloadError, match="404"):
            fetch(mirror.url + "missing.bin", tmp_path / "f.bin", policy=FAST, sleep=lambda s: None)
    assert len(mirror.requests) == 1
    assert not (tmp_path / "f.bin").exists()


def test_a_500_is_retried_with_doubling_backoff(tmp_path):
    waits = []
    with Mirror({"f.bin": BODY}) as mirror:
        mirror.add_fault("f.bin", Fault("status", times=2, status=503))
        fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=Policy(retries=3, backoff=0.5), sleep=waits.append)
    assert waits == [0.5, 1.0]
    assert (tmp_path / "f.bin").read_bytes() == BODY


def test_a_500_every_time_gives_up_after_the_retries(tmp_path):
    with Mirror({"f.bin": BODY}) as mirror:
        mirror.add_fault("f.bin", Fault("status", times=None, status=500))
        with pytest.raises(DownloadError, match="gave up after 3 attempts: the server answered 500"):
            fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=Policy(retries=2), sleep=lambda s: None)
    assert len(mirror.requests) == 3
    assert not (tmp_path / "f.bin").exists()


def test_a_server_that_never_answers_times_out_after_two_tries(tmp_path):
    start = time.monotonic()
    with Mirror({"f.bin": BODY}) as mirror:
        mirror.add_fault("f.bin", Fault("hang", times=None))
        with pytest.raises(
            DownloadError,
            match=r"^the server accepted the connection but sent nothing for 0.5 s, "
            r"twice$",
        ):
            fetch(
                mirror.url + "f.bin",
                tmp_path / "f.bin",
                policy=Policy(read_timeout=0.5, retries=3),
                sleep=lambda s: None,
            )
    assert time.monotonic() - start < 10
    assert len(mirror.requests) == 2  # not four: a server silent twice will stay silent
    assert not (tmp_path / "f.bin").exists()


def test_a_server_silent_once_then_answering_is_fine(tmp_path):
    with Mirror({"f.bin": BODY}) as mirror:
        mirror.add_fault("f.bin", Fault("hang", times=1))
        fetch(mirror.url + "f.bin", tmp_path / "f.bin", policy=Policy(read_timeout=0.5), sleep=lambda s: None)
    assert (tmp_path / "f.bin").read_bytes() == BODY


def test_an_unreachable_proxy_is_named(tmp_path, monkeypatch):
    with Mirror({}) as gone:
        proxy = gone.url.rstrip("/")
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    with pytest.raises(
        DownloadError,
        match=rf"^the proxy {proxy}(/)? could not be used \(.*\); check HTTPS_PROXY, "
        r"HTTP_PROXY and NO_PROXY$",
    ):
        fetch("http://elmo-mirror.invalid/f.bin", tmp_path / "f.bin", policy=FAST, sleep=pytest.fail)


def test_a_refused_port_fails_fast_with_the_reason(tmp_path):
    with Mirror({}) as mirror:
        url = mirror.url + "f.bin"
    with pytest.raises(DownloadError, match="Connection refused") as info:  # the server is gone now
        fetch(url, tmp_path / "f.bin", policy=FAST, sleep=lambda s: None, notice=pytest.fail)
    assert "\n" not in str(info.value)


def test_a_size_known_in_advance_is_checked_before_the_body(tmp_path):
    with Mirror({"f.bin": BODY}) as mirror:
        with pytest.raises(DownloadError, match="512,000 bytes, but this file is known to be 512,001"):
            fetch(mirror.url + "f.bin", tmp_path / "f.bin", expected_size=len(BODY) + 1, policy=FAST)
    assert not (tmp_path / "f.bin").exists() and not (tmp_path / "f.bin.part").exists()


def test_a_file_the_validator_refuses_is_deleted(tmp_path):
    def refuse(path):
        assert path.name == "f.bin.part" and path.read_bytes() == BODY  # validated whole, before the rename
        raise ValueError("dataset 'x' is missing")

    with Mirror({"f.bin": BODY}) as mirror:
        with pytest.raises(DownloadError, match="refused: dataset 'x' is missing"):
            fetch(mirror.url + "f.bin", tmp_path / "f.bin", validate=refuse, policy=FAST)
    assert list(tmp_path.iterdir()) == []


def test_proxies_come_from_the_environment(tmp_path, monkeypatch):
    with Mirror({"f.bin": BODY}) as mirror:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", mirror.url)
        fetch("http://elmo-mirror.invalid/f.bin", tmp_path / "f.bin", policy=FAST)
    assert (tmp_path / "f.bin").read_bytes() == BODY
    assert [r.proxied for r in mirror.requests] == [True]  # a name that cannot resolve, reached through the proxy


def test_sha256_of_a_file(tmp_path):
    (tmp_path / "a").write_bytes(b"abc")
    assert sha256_of(tmp_path / "a") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


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


V1, V2 = {"ETag": '"v1"'}, {"ETag": '"v2"'}
RESUMES = {
    # the reported case: If-Range ignored, the new file's tail sent with its new ETag
    "ignores If-Range": (V1, _partial(NEW, V2), (V2, NEW), 'ETag is now "v2", not "v1"'),
    "another ETag for the same bytes": (V1, _partial(BODY, V2), (V2, BODY), "ETag is now"),
    "a wrong Content-Range start": (V1, _partial(BODY, V1, start_shift=-1000), (V1, BODY), "resumed at byte"),
    "a wrong total": (V1, _partial(LONGER, V1), (V1, LONGER), "is now 516,000 bytes, not 512,000"),
    "no validator": (V1, _partial(NEW, {}), ({}, NEW), "carries no ETag"),
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

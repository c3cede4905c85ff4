"""elmo_core.model.download.fetch against a local mirror on 127.0.0.1: whole files, resume, every failure mode."""

from __future__ import annotations

import json
import time

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

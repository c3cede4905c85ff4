"""Fetching one file over HTTP(S) into a folder, safely: the only module that talks to the network at run time.

What it guarantees, because users of other ELMo tools keep hitting the opposite (a stalled download with no
timeout, a truncated file cached and failing later, two processes writing one file):

* connect and read timeouts on every request, and retries with exponential backoff on dropped connections,
  timeouts and 5xx answers (a 4xx is final: retrying a 404 cannot help);
* the body streams into ``NAME.part`` beside the destination; after a dropped connection, or in a later
  process, the download resumes from the part's length with an HTTP ``Range`` request and ``If-Range``; the
  rest is kept only from a 206 that starts at that length, gives the same total length and the same strong
  validator, else the download starts over from byte 0 and says so: two versions are never spliced (the part's
  record and the judgement of the answer: ``elmo_core.model.download_resume``);
* the length is checked against ``Content-Length`` / ``Content-Range`` (and against a size known in advance),
  then the caller's ``validate`` runs on the complete part, and only then is it renamed into place
  (``os.replace``: atomic on one file system). A file that fails any check never appears under its name.

Proxies come from the environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``NO_PROXY``) as in ``requests``. Locking
between processes is the caller's (``elmo_core.model.published`` holds one lock per model).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from elmo_core.model.download_resume import read_record, record_path, resume_refusal, write_record

# Bytes per network read. A dropped connection loses the read in progress (urllib3 raises before yielding
# it), so a resume repeats at most this much; at 64 KiB the per-read Python cost is still far below the
# disk's (benchmarks/download_throughput.py).
CHUNK_BYTES = 1 << 16
PART_SUFFIX = ".part"


class DownloadError(Exception):
    """A download that failed for a reason worth one line to the user: ``str(error)`` says what failed, where,
    and what to do. ``url`` is the address that failed (None when no request was made)."""

    def __init__(self, message: str, url: str | None = None):
        super().__init__(message)
        self.url = url


@dataclass(frozen=True)
class Policy:
    """How patient a download is.

    connect_timeout, read_timeout: seconds to open a connection / between two received bytes (``requests``'
    ``timeout=(connect, read)``). retries: attempts after the first. backoff: seconds before the first retry,
    doubled for each next one (1, 2, 4 s: an unreachable server fails within about 4 x connect_timeout + 7 s;
    one that accepts connections but never answers after two read timeouts and 1 s, 41 s by default).
    """

    connect_timeout: float = 10.0
    read_timeout: float = 20.0
    retries: int = 3
    backoff: float = 1.0


# progress(bytes done, bytes total or None when unknown): called at most every CHUNK_BYTES and at the end.
ByteProgress = Callable[[int, "int | None"], None]


def sha256_of(path: str | Path) -> str:
    """The hex sha256 of a file, read 1 MiB at a time. Raises OSError when it cannot be read."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class _Retry(Exception):
    """One attempt failed in a way a retry may mend (dropped connection, timeout, 5xx, short body)."""


def _span_of(response) -> tuple[int, int | None]:
    """(first byte, whole file's length or None when unknown) from a 206's Content-Range ("bytes START-END/TOTAL")
    or a 200's Content-Length. Raises DownloadError for a Content-Range that cannot be read."""
    if response.status_code == 206:
        value = response.headers.get("Content-Range", "")
        try:
            span, total = value.split(" ", 1)[1].split("/")
            start = int(span.split("-")[0])
        except (IndexError, ValueError):
            raise DownloadError(
                f"the server answered a range request with an unreadable Content-Range {value!r}", response.url
            ) from None
        return start, int(total) if total.strip().isdigit() else None
    length = response.headers.get("Content-Length")
    return 0, int(length) if length and length.isdigit() else None


def fetch(
    url: str,
    destination: str | Path,
    *,
    expected_size: int | None = None,
    validate: Callable[[Path], None] | None = None,
    policy: Policy = Policy(),
    progress: ByteProgress | None = None,
    notice: Callable[[str], None] | None = None,
    session=None,
    sleep: Callable[[float], None] = time.sleep,
) -> Path:
    """Download ``url`` to ``destination``, resuming a ``destination.part`` left by an earlier attempt.

    Args:
        expected_size: bytes the file must have, when known in advance (checked against the server's length
            before the body is read, and against what arrived).
        validate: called with the complete part file before it is renamed; raises ValueError to refuse it
            (the part is then deleted, since a resume could not mend it).
        policy: timeouts and retries (``Policy``).
        progress: ``progress(done, total)`` in bytes.
        notice: called with one line before each retry (what failed, the wait, the attempt), and when a resume
            is refused and the download starts over from byte 0.
        session: a ``requests.Session`` (tests pass one; default a new one that reads proxies from the
            environment).
        sleep: the backoff's sleep (tests pass a recorder).
    Returns: ``destination``.
    Raises:
        DownloadError: the server could not be reached or kept failing after the retries, answered 4xx, sent
            an HTML page or a length that disagrees with ``expected_size``, or ``validate`` refused the file;
            the message names the URL and, for a refused file, why.
        OSError: the destination's folder cannot be written (the caller words this one).
    """
    import requests

    destination = Path(destination)
    part = destination.with_name(destination.name + PART_SUFFIX)
    own_session = session is None
    session = session or requests.Session()
    try:
        last: str = ""
        silent = 0  # attempts in a row that got no answer at all
        unreachable = False  # the last attempt never connected: retried without a notice, so that an
        # offline machine gets the one final line rather than a line per attempt
        for attempt in range(policy.retries + 1):
            if attempt:
                wait = policy.backoff * 2 ** (attempt - 1)
                if notice is not None and not unreachable:
                    notice(f"{last}; retrying in {wait:g} s (attempt {attempt + 1} of {policy.retries + 1})")
                sleep(wait)
            unreachable = False
            if not last.startswith("the server accepted the connection"):
                silent = 0
            try:
                _attempt(session, url, part, expected_size, policy, progress, notice)
                break
            except _Retry as why:
                last = str(why)
            except requests.exceptions.ConnectTimeout:
                last = f"no connection within {policy.connect_timeout:g} s"
                unreachable = True
            except requests.exceptions.ReadTimeout:
                # No answer at all (headers) within the read timeout; a stall within the body is a
                # ConnectionError below. A server that twice accepts and never answers will not answer a
                # third time: giving up here keeps such a failure near a minute rather than two.
                silent += 1
                last = f"the server accepted the connection but sent nothing for {policy.read_timeout:g} s"
                if silent >= 2:
                    raise DownloadError(f"{last}, twice", url) from None
                continue
            except (requests.exceptions.ProxyError, requests.exceptions.InvalidProxyURL) as exc:
                proxy = _proxy_for(url)
                raise DownloadError(
                    f"the proxy {proxy} could not be used ({_reason(exc)}); check HTTPS_PROXY, HTTP_PROXY and NO_PROXY",
                    url,
                ) from None
            except requests.exceptions.SSLError as exc:
                raise DownloadError(f"TLS failed ({_reason(exc)})", url) from None
            except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
                last = _reason(exc)
                unreachable = _never_connected(exc)
            except requests.exceptions.InvalidURL as exc:
                proxy = _proxy_for(url)
                if proxy and str(proxy) in str(exc):
                    raise DownloadError(
                        f"the proxy setting {proxy!r} is not a valid URL; check HTTPS_PROXY and HTTP_PROXY", url
                    ) from None
                raise DownloadError(f"not a valid URL ({exc})", url) from None
            except requests.exceptions.RequestException as exc:
                raise DownloadError(f"the request failed ({_reason(exc)})", url) from None
        else:
            raise DownloadError(f"gave up after {policy.retries + 1} attempts: {last}", url)
        if validate is not None:
            try:
                validate(part)
            except ValueError as exc:
                part.unlink(missing_ok=True)
                record_path(part).unlink(missing_ok=True)
                raise DownloadError(f"the downloaded file was refused: {exc}", url) from None
        os.replace(part, destination)
        record_path(part).unlink(missing_ok=True)
        return destination
    finally:
        if own_session:
            session.close()


def _proxy_for(url: str) -> str | None:
    """The proxy the environment sets for ``url`` (``requests``' own reading of HTTPS_PROXY, NO_PROXY, ...)."""
    import requests

    proxies = requests.utils.get_environ_proxies(url)
    return proxies.get(url.split(":", 1)[0].lower()) or proxies.get("all")


def _causes(exc: BaseException) -> list[BaseException]:
    """The error and what it wraps, outermost first: requests and urllib3 keep the inner error in ``reason`` or
    as the first argument."""
    chain = [exc]
    while True:
        inner = getattr(exc, "reason", None)
        if not isinstance(inner, BaseException) and exc.args and isinstance(exc.args[0], BaseException):
            inner = exc.args[0]
        if not isinstance(inner, BaseException) or inner in chain:
            return chain
        chain.append(inner)
        exc = inner


def _never_connected(exc: BaseException) -> bool:
    """True when the error chain holds urllib3's NewConnectionError (refused, no route, name not resolved)."""
    from urllib3.exceptions import NewConnectionError

    return any(isinstance(e, NewConnectionError) for e in _causes(exc))


def _reason(exc: BaseException) -> str:
    """The innermost cause of a requests/urllib3 error in one line, without the object reprs they add."""
    exc = _causes(exc)[-1]
    text = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
    text = re.sub(r"<[^<>]*>: |^HTTPS?Connection\([^)]*\): ", "", text).strip()
    return (text.splitlines()[0][:200] if text else "") or type(exc).__name__


def _attempt(session, url: str, part: Path, *args) -> None:
    """One request (``_request``, same arguments), and at most one more from byte 0 when the server's answer to a
    resume does not prove that it continues the file the part holds: the part is then deleted and ``notice``
    says so, never a splice of two versions. Raises _Retry, DownloadError, requests' exceptions, OSError."""
    try:
        _request(session, url, part, *args)
    except _Restart as why:
        part.unlink(missing_ok=True)
        record_path(part).unlink(missing_ok=True)
        if args[-1] is not None:
            args[-1](f"{why}; starting over from byte 0")
        _request(session, url, part, *args)


class _Restart(Exception):
    """The answer to a resume did not prove it continues the part's file: fetch the whole file again."""


def _html_refusal(first: bytes, response) -> str | None:
    """The one line that refuses an HTML page (an error or sign-in page served in place of a file) whose first
    bytes are ``first``, or None when they do not begin an HTML page."""
    if not first[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower().startswith((b"<!doctype html", b"<html", b"<head")):
        return None
    found = re.search(rb"<title[^>]*>([^<]{1,200})", first[:4096], re.IGNORECASE)
    title = " ".join(found.group(1).decode("utf-8", "replace").split())[:80] if found else ""
    return (
        f"the server sent an HTML page{f' titled {title!r}' if title else ''} "
        f"({response.headers.get('Content-Type', 'no Content-Type').split(';')[0]}) instead of the file: an error "
        "or sign-in page, perhaps from a proxy; check the URL and the proxy settings"
    )


def _request(session, url: str, part: Path, expected_size: int | None, policy: Policy, progress, notice) -> None:
    """One request: resume from the part's length when there is one, append what arrives, check the length.
    A resume is kept only when the answer is a 206 that starts at the part's length, gives the same total
    length and carries the same strong validator (raises _Restart otherwise). Raises _Retry, _Restart,
    DownloadError, requests' exceptions, OSError."""
    offset = part.stat().st_size if part.exists() else 0
    headers = {"Accept-Encoding": "identity"}  # the length we check is the file's, not a compressed body's
    record: dict = {}  # what the part's record says of its server's file
    if offset:
        found = read_record(part, url)
        if found is None:
            # Without the server's validator for this very URL a resume could splice two versions of the
            # file (another mirror, a file changed since): start over.
            part.unlink()
            offset = 0
        else:
            record = found
            headers["Range"] = f"bytes={offset}-"
            headers["If-Range"] = record["validator"]
    with session.get(
        url, headers=headers, stream=True, timeout=(policy.connect_timeout, policy.read_timeout), allow_redirects=True
    ) as response:
        status = response.status_code
        if status == 416:
            whole = response.headers.get("Content-Range", "").rpartition("/")[2]
            if offset and (expected_size == offset or whole == str(offset)):
                return  # the part is already the whole file; validation decides
            part.unlink(missing_ok=True)  # the part is longer than the file: start over
            raise _Retry("the partial file did not fit the server's file; starting over")
        if status >= 500:
            raise _Retry(f"the server answered {status} {response.reason}")
        if status >= 400:
            raise DownloadError(f"the server answered {status} {response.reason}", url)
        if status not in (200, 206):
            raise DownloadError(f"unexpected answer {status} {response.reason}", url)
        if status == 200 and offset:
            # no range support, or the file changed (If-Range): the whole file comes, from the first byte
            offset = 0
            if notice is not None:
                notice("the server sent the whole file instead of the rest; starting over from byte 0")
        try:
            start, total = _span_of(response)
        except DownloadError as err:
            if not (status == 206 and offset):
                raise
            raise _Restart(str(err)) from None  # a resume that cannot be read proves nothing: the whole file again
        if status == 206 and offset:
            why = resume_refusal(record, response, offset, start, total, expected_size)
            if why is not None:
                raise _Restart(why)
        elif status == 206 and start != 0:
            raise DownloadError(f"the server sent bytes from {start:,} on, not the whole file as asked", url)
        if expected_size is not None and total is not None and total != expected_size:
            raise DownloadError(
                f"the server's file is {total:,} bytes, but this file is known to be "
                f"{expected_size:,}: it is not the published file (is the mirror's layout right?)",
                url,
            )
        total = total if total is not None else expected_size
        write_record(part, url, response, total)
        done = offset
        with open(part, "r+b" if offset else "wb") as out:
            out.seek(offset)
            out.truncate()
            try:
                for block in response.iter_content(CHUNK_BYTES):
                    refusal = None if done or not block else _html_refusal(block, response)
                    if refusal is not None:
                        part.unlink(missing_ok=True)
                        record_path(part).unlink(missing_ok=True)
                        raise DownloadError(refusal, url)
                    out.write(block)
                    done += len(block)
                    if total is not None and done > total:
                        break
                    if progress is not None:
                        progress(done, total)
            finally:
                out.flush()
    if total is not None and done != total:
        if done > total:
            part.unlink(missing_ok=True)
            raise _Retry(f"the server sent more than the {total:,} bytes it announced; starting over")
        raise _Retry(f"the connection ended after {done:,} of {total:,} bytes")

"""Whether a server's answer to a resumed download continues the part's file: the part's record and the checks.

A part (``NAME.part``) is resumed with an HTTP ``Range`` request guarded by ``If-Range``, naming the validator of
the answer that began it. Servers and proxies do not always honour ``If-Range``, so the answer is judged as well:
the rest is kept only from a 206 that starts at the part's length, gives the same total length and carries the
same strong validator (RFC 9110 13.1.5); anything else means the download starts over from byte 0, never a
splice of two versions of the file. The part's record (``NAME.part.json``: URL, validator and its kind, total
length) carries what the resume needs to a later attempt or a later process.
"""

from __future__ import annotations

import json
from pathlib import Path

from elmo_core.model.strict_json import loads_strict


def record_path(part: Path) -> Path:
    """The part's record, beside it: ``NAME.part.json``."""
    return part.with_name(part.name + ".json")


def read_record(part: Path, url: str) -> dict | None:
    """The part's record when it is for ``url`` and names the server's validator, else None (no record, an
    unreadable one, another URL: another mirror's file, or no validator to guard the splice)."""
    path = record_path(part)
    try:
        record = loads_strict(path.read_text(), str(path))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("url") != url or not record.get("validator"):
        return None
    return record


def write_record(part: Path, url: str, response, total: int | None) -> None:
    """Record what a resume of ``part`` will need: the URL, the response's validator and its kind, the total
    length. Raises OSError."""
    validator, kind = validator_of(response)
    record_path(part).write_text(json.dumps({"url": url, "validator": validator, "kind": kind, "total": total}))


def validator_of(response) -> tuple[str | None, str | None]:
    """What ``If-Range`` may name for this response and its kind: a strong ETag ("etag"), else Last-Modified
    ("last-modified") (RFC 9110 13.1.5); (None, None) when it has neither."""
    etag = response.headers.get("ETag")
    if etag and not etag.startswith("W/"):
        return etag, "etag"
    modified = response.headers.get("Last-Modified")
    return (modified, "last-modified") if modified else (None, None)


def same_validator(record: dict, response) -> str | None:
    """None when the 206 carries the strong validator the resume sent in If-Range, else why not."""
    sent = record["validator"]
    kind = record.get("kind") or ("etag" if sent.startswith(('"', "W/")) else "last-modified")
    header = "ETag" if kind == "etag" else "Last-Modified"
    now = response.headers.get(header)
    if now is None:
        return f"the server's answer to the resume carries no {header}"
    if kind == "etag" and now.startswith("W/"):
        return f"the server's answer to the resume carries a weak ETag {now}, which cannot prove the same file"
    return None if now == sent else f"the server's file changed (its {header} is now {now}, not {sent})"


def resume_refusal(
    record: dict, response, offset: int, start: int, total: int | None, expected_size: int | None
) -> str | None:
    """Why a 206 answer to the resume of a part of ``offset`` bytes does not prove it continues the part's file,
    or None when it does. ``start``, ``total``: the answer's first byte and the whole file's length (None when
    unknown); the total it must match is the record's, else ``expected_size``."""
    known = record.get("total") if isinstance(record.get("total"), int) else expected_size
    if start != offset:
        return f"the server resumed at byte {start:,}, not at {offset:,} as asked"
    if known is None:
        return "the partial file's whole length is unknown, so the resume cannot be checked"
    if total != known:
        length = "of unknown length" if total is None else f"{total:,} bytes"
        return f"the server's file is now {length}, not {known:,} bytes"
    return same_validator(record, response)

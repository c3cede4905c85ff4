"""JSON read one way everywhere: every JSON text elmo_core and the app read (options files, uploads, manifests,
checkpoints' and teachers' meta, training configs, probe results, journals) goes through ``loads_strict``.

Python's ``json`` keeps the last of two equal keys in one object without a word, so
``{"use_skip_connections": true, "use_skip_connections": false}`` would load as a model without its residual
connection; here such a text is refused with the key named. The constants ``NaN``, ``Infinity`` and
``-Infinity`` (not JSON, but ``json.dumps`` writes them for non-finite floats) are refused too, unless the caller
reads a record of measured numbers that may hold them.
"""

from __future__ import annotations

import json
from typing import Any


class NotJSONError(ValueError):
    """A text that is not JSON (or, given as bytes, not UTF-8)."""


class JSONNestingError(ValueError):
    """A JSON text nested deeper than Python's parser can follow (it would recurse without end)."""


def _refuse_duplicates(what: str):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                raise ValueError(f"{what}: the key {key!r} appears twice in one object; give it once")
            obj[key] = value
        return obj

    return hook


def _refuse_constant(what: str):
    def hook(name: str) -> float:
        raise ValueError(f"{what}: {name} is not a JSON number; write a finite number")

    return hook


def loads_strict(text: str | bytes, what: str, *, constants: bool = False) -> Any:
    """Parse one JSON text as ``json.loads`` does, strictly.

    Args:
        text: the JSON text (bytes are decoded as UTF-8).
        what: the file or input read (a file's name, "an upload", "meta.json of DIR"); every message starts
            with it.
        constants: accept ``NaN``, ``Infinity`` and ``-Infinity`` (as ``json.dumps`` writes non-finite floats);
            refused by default.

    Raises:
        ValueError: a key given twice in one object (the key is named), a refused constant, text that is not
            UTF-8 or not JSON (``NotJSONError``, with the parser's reason and line), nesting too deep for the
            parser (``JSONNestingError``). Every message starts with ``what``.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise NotJSONError(f"{what}: not UTF-8 text") from None
    options: dict[str, Any] = {"object_pairs_hook": _refuse_duplicates(what)}
    if not constants:
        options["parse_constant"] = _refuse_constant(what)
    try:
        return json.loads(text, **options)
    except json.JSONDecodeError as exc:
        raise NotJSONError(f"{what}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise JSONNestingError(f"{what}: nested too deep to read") from None

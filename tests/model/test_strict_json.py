"""elmo_core.model.strict_json: one JSON reader for every file and input, refusing a key given twice (Python's json
keeps the last one silently) and NaN/Infinity where numbers must be finite; and the model part's readers using it
(published manifests, a download's part record, embed_file's journals). Options files: test_config.py."""

from __future__ import annotations

import json

import pytest

from elmo_core.model.strict_json import JSONNestingError, NotJSONError, loads_strict


@pytest.mark.parametrize(
    "text, key",
    [
        ('{"use_skip_connections": true, "use_skip_connections": false}', "use_skip_connections"),
        ('{"lstm": {"dim": 64, "projection_dim": 16, "dim": 32}}', "dim"),  # nested
        ('[{"a": 1}, {"b": [{"c": 1, "c": 1}]}]', "c"),  # inside lists, even with the same value
    ],
)
def test_a_key_given_twice_is_refused_naming_it_and_the_input(text, key):
    with pytest.raises(ValueError, match=rf"^my\.json: the key '{key}' appears twice in one object"):
        loads_strict(text, "my.json")
    assert isinstance(json.loads(text), (dict, list))  # what Python's reader does: takes the last, silently


def test_equal_keys_in_different_objects_are_fine_and_the_result_is_json_loads():
    text = '{"a": {"dim": 1}, "b": {"dim": 2}, "c": [1, 2.5, "x", null, true]}'
    assert loads_strict(text, "t") == json.loads(text)
    assert loads_strict(text.encode(), "t") == json.loads(text)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_unless_asked_for(constant):
    text = f'{{"cell_clip": {constant}}}'
    with pytest.raises(ValueError, match=rf"^o\.json: {constant} is not a JSON number"):
        loads_strict(text, "o.json")
    assert str(loads_strict(text, "o.json", constants=True)["cell_clip"]).lower() in {"nan", "inf", "-inf"}
    with pytest.raises(ValueError, match="appears twice"):  # a record of measured numbers: duplicates still refused
        loads_strict('{"x": NaN, "x": 1}', "o.json", constants=True)


@pytest.mark.parametrize(
    "text, error, message",
    [
        ('{"lstm": ', NotJSONError, r"^f: not valid JSON \(Expecting value at line 1\)"),
        (b"\xff\xfe", NotJSONError, r"^f: not UTF-8 text"),
        ("[" * 100_000 + "]" * 100_000, JSONNestingError, r"^f: nested too deep to read"),
    ],
)
def test_text_that_is_not_json_is_one_value_error_naming_the_input(text, error, message):
    with pytest.raises(error, match=message) as info:
        loads_strict(text, "f")
    assert isinstance(info.value, ValueError)


# ---- the model part's readers ----------------------------------------------------------------------------------


def test_a_manifest_with_a_key_twice_is_damaged(tmp_path):
    from elmo_core.model import published as store
    from elmo_core.model import published_table as table

    folder = tmp_path / "small"
    folder.mkdir()
    (folder / table.OPTIONS).write_bytes(b"{}")
    (folder / table.WEIGHTS).write_bytes(b"w" * 10)
    good = '{"files": {"options.json": {"bytes": 2}, "weights.hdf5": {"bytes": 10}}}'
    (folder / store.MANIFEST).write_text(good)
    assert store.cache_entry("small", tmp_path).state == "cached"
    (folder / store.MANIFEST).write_text(good[:-1] + ', "files": {}}')
    entry = store.cache_entry("small", tmp_path)
    assert (entry.state, entry.detail) == ("damaged", f"its {store.MANIFEST} is unreadable")
    with pytest.raises(ValueError, match=r"manifest\.json: the key 'files' appears twice"):
        entry.manifest()


@pytest.mark.download_server
def test_a_part_record_with_a_key_twice_is_not_resumed(tmp_path):
    """A part's record naming another mirror's URL, then this one: the last would pass the check and splice."""
    from elmo_core.model.download import Policy, fetch
    from tests.mirror import Mirror

    body = bytes(range(256)) * 2000
    with Mirror({"f.bin": body}) as mirror:
        (tmp_path / "f.bin.part").write_bytes(b"x" * 300_000)
        url = mirror.url + "f.bin"
        record = f'{{"url": "http://127.0.0.1:1/f.bin", "validator": "\\"x\\"", "url": "{url}"}}'
        assert json.loads(record)["url"] == url
        (tmp_path / "f.bin.part.json").write_text(record)
        fetch(url, tmp_path / "f.bin", policy=Policy(connect_timeout=2, read_timeout=2, retries=3, backoff=0.01))
    assert (tmp_path / "f.bin").read_bytes() == body
    assert "Range" not in mirror.requests[0].headers


def test_a_journal_line_with_a_key_twice_is_refused_naming_the_journal(tmp_path):
    from elmo_core.model.embed_file import _Journal

    (tmp_path / "rank-0.jsonl").write_bytes(b'{"u": 0, "i": 0, "f": "d", "o": 0, "s": [2], "s": [3]}\n')
    with pytest.raises(ValueError, match=r"rank-0\.jsonl: the key 's' appears twice"):
        _Journal(tmp_path).refresh()

"""app/serving/settings.py: the environment's switches and numbers, read at call time."""

from __future__ import annotations

import pytest

from app.serving import settings


@pytest.mark.parametrize(
    "value, expected",
    [("1", True), (" Yes ", True), ("on", True), ("TRUE", True), ("0", False), ("no", False), ("", False)],
)
def test_a_flag_is_on_for_the_usual_words(monkeypatch, value, expected):
    monkeypatch.setenv("ELMO_TEST_FLAG", value)
    assert settings.env_flag("ELMO_TEST_FLAG") is expected


def test_unset_gives_the_default_and_a_bad_number_too(monkeypatch):
    monkeypatch.delenv("ELMO_TEST_FLAG", raising=False)
    monkeypatch.setenv("ELMO_TEST_INT", "12x")
    assert settings.env_flag("ELMO_TEST_FLAG", True) is True
    assert settings.env_int("ELMO_TEST_INT", 7) == 7
    monkeypatch.setenv("ELMO_TEST_INT", "12")
    assert settings.env_int("ELMO_TEST_INT", 7) == 12


def test_server_paths_downloads_and_device_are_off_or_automatic_unless_set(monkeypatch):
    for name in ("ELMO_EXPLORER_ALLOW_SERVER_PATHS", "ELMO_EXPLORER_ALLOW_DOWNLOADS", "ELMO_EXPLORER_DEVICE"):
        monkeypatch.delenv(name, raising=False)
    assert not settings.allow_server_paths() and not settings.allow_downloads() and settings.device() is None
    monkeypatch.setenv("ELMO_EXPLORER_ALLOW_DOWNLOADS", "1")
    monkeypatch.setenv("ELMO_EXPLORER_DEVICE", "cpu")
    assert settings.allow_downloads() and settings.device() == "cpu"

"""A visitor never sees the server's folders or its mirror's URL (AppTest): with every setting that names a place on
the server (the published models' cache and mirror, the reference corpus, the data folder, the probe results, the
startup model's files, numba's cache) pointed at a folder or URL holding a marker, no element of the Explorer or the
Layer probes page holds the marker: not the model panel with the published models listed, a download's error, the
notes of a link naming a model that is not here, nor a startup model that cannot be loaded. The operator finds them
in the server's log; ``ELMO_EXPLORER_ALLOW_SERVER_PATHS=1`` shows them on the page.
"""

from __future__ import annotations

import logging
import unicodedata

import pytest
from streamlit.testing.v1 import AppTest

from app.serving import published, settings
from tests.conftest import APP, APP_TIMEOUT, start_app
from tests.mirror import Mirror

MARKER = "MARKER-9f3a"


@pytest.fixture
def marked(app_env, monkeypatch, tmp_path, fresh_caches):
    """Every path setting under a folder named by the marker, the mirror's URL too (a mirror that has no file:
    every download fails with the URL in its message); downloads allowed, the startup model a published one that
    is not cached (the server starts on the default and says why, with the command that fetches it)."""
    root = tmp_path / MARKER
    root.mkdir()
    results = root / f"{MARKER}-probes.json"  # the file's own name carries the marker too
    results.write_text("{ not json", encoding="utf-8")
    with Mirror({}) as mirror:
        for name, value in {
            "ELMO_CORE_CACHE": root / "cache",
            "ELMO_CORE_BASE_URL": f"{mirror.url}{MARKER}/",
            "ELMO_EXPLORER_REFERENCE": root / "reference",
            "ELMO_DATA_DIR": root / "data",
            "ELMO_EXPLORER_PROBES": results,
            "ELMO_WORDNET_DIR": root / "wordnet",
            "ELMO_BROWN_DIR": root / "brown",
            "NUMBA_CACHE_DIR": root / "numba",
            "ELMO_EXPLORER_MODEL": "small",
            "ELMO_EXPLORER_ALLOW_DOWNLOADS": "1",
        }.items():
            monkeypatch.setenv(name, str(value))
        monkeypatch.delenv("ELMO_EXPLORER_OPTIONS")
        monkeypatch.delenv("ELMO_EXPLORER_WEIGHTS")
        yield root


def shown_text(at) -> str:
    """Every element's message as the page holds it (text, markdown, values, labels, help: the whole proto), without
    markdown's escapes and invisible characters (so that an escaped "MARKER\\-9f3a" is found too)."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    text = "\n".join(out).replace("\\", "")
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def test_the_explorer_and_the_layer_probes_never_show_the_servers_folders_or_mirror(marked, caplog):
    caplog.set_level(logging.INFO)
    at = start_app(ex="bank", word="bank", model="medium")  # a link naming a published model that is not here
    page = shown_text(at)
    assert "Published ELMo models" in page and "python -m elmo_core download medium" in page
    assert "ELMO_EXPLORER_MODEL=small" in page  # the startup model's line, with the command that fixes it
    assert "The link asks for the model 'medium', which is not downloaded on this server" in page
    assert MARKER not in page
    at.button(key="download_medium").click().run()
    assert published.downloads().wait("medium", 60).error
    page = shown_text(at.run())
    assert "medium: download failed" in page and settings.MIRROR_WORDS in page
    assert MARKER not in page
    other = start_app(ex="bank", word="bank", model="no-such-model")  # a link naming an unknown model
    assert MARKER not in shown_text(other)
    layers = AppTest.from_file(APP, default_timeout=APP_TIMEOUT)
    layers.query_params["model"] = "medium"
    layers.switch_page("views/layers.py").run()
    page = shown_text(layers)
    assert "What each layer knows" in page and "precomputed probe results" in page
    assert MARKER not in page
    # the operator has them in the log
    assert any(MARKER in r.getMessage() for r in caplog.records if r.name == "app.serving.settings")


def test_a_startup_model_on_missing_files_does_not_name_them(app_env, monkeypatch, tmp_path, fresh_caches):
    for name in ("OPTIONS", "WEIGHTS"):
        monkeypatch.setenv(f"ELMO_EXPLORER_{name}", str(tmp_path / MARKER / f"{name.lower()}.file"))
    at = start_app(ex="bank", word="bank")
    page = shown_text(at)
    assert "No model could be loaded" in page and MARKER not in page
    layers = AppTest.from_file(APP, default_timeout=APP_TIMEOUT)
    layers.switch_page("views/layers.py").run()
    page = shown_text(layers)
    assert "No model could be loaded" in page and MARKER not in page


def test_the_operator_may_show_them(marked, monkeypatch):
    monkeypatch.setenv("ELMO_EXPLORER_ALLOW_SERVER_PATHS", "1")
    at = start_app(ex="bank", word="bank")
    assert f"--cache-dir {marked / 'cache'}" in shown_text(at)

"""app.launch: the ``elmo-explorer`` console script runs the app's entry script from the installed package
(never a path outside it), headless, passing the user's options on to Streamlit."""

from __future__ import annotations

import sys
from pathlib import Path

import app
from app import launch


def test_the_console_script_runs_the_packaged_entry_script(monkeypatch):
    seen = []
    monkeypatch.setattr("app.serving.warm_start.start", lambda modules: None)  # no model loaded here
    monkeypatch.setattr("streamlit.web.cli.main", lambda: seen.append(list(sys.argv)) or 0)
    monkeypatch.setattr(sys, "argv", ["elmo-explorer", "--server.port", "8700"])
    assert launch.main() == 0
    argv = seen[0]
    package = Path(app.__file__).resolve().parent
    script = Path(argv[2])
    assert argv[:2] == ["streamlit", "run"] and script == package / "streamlit_app.py" and script.is_file()
    assert (script.parent / ".streamlit" / "config.toml").is_file()  # its settings travel with it
    assert argv[3:7] == ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    assert argv[-2:] == ["--server.port", "8700"]

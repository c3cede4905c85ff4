"""``elmo-explorer``: start the Streamlit explorer (the same as ``make app``), from a checkout or an install."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    from streamlit.web import cli as stcli

    # streamlit runs a script file, not a module: the one beside this file, which is in the installed package
    # (its .streamlit/config.toml next to it comes along as package data)
    app = Path(__file__).resolve().parent / "streamlit_app.py"
    sys.argv = [
        "streamlit",
        "run",
        str(app),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        *sys.argv[1:],
    ]
    return stcli.main()

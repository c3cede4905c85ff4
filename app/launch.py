"""``elmo-explorer`` (and ``python -m app.launch``, which `make app` and the Docker image run): start the Streamlit
explorer from a checkout or an install, after starting its warm start (``app.serving.warm_start``) in this
process, so that the server has loaded the model and the page's code before its first visitor."""

from __future__ import annotations

import sys
from pathlib import Path

# The page's modules the first run imports (the entry script and the Explorer page import them): imported by the
# warm start, by name, so that launching imports nothing of the page before the server is up.
PAGE_MODULES = (
    "app.views.layout",
    "app.views.model_panel",
    "app.views.explorer_parts.map_tab",
    "app.views.explorer_parts.sentences",
    "app.views.explorer_parts.rail",
    "app.views.explorer_parts.embedding",
    "app.views.explorer_parts.link",
    "app.views.explorer_parts.senses_tab",
    "app.views.explorer_parts.neighbours_tab",
    "app.views.explorer_parts.similarity_tab",
    "app.views.explorer_parts.compare_tab",
    "app.views.explorer_parts.export_tab",
)


def main() -> int:
    from streamlit.web import cli as stcli

    from app.serving import warm_start

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
    # Streamlit runs the page only when a session connects and has no hook for its own start: started here, the
    # warm start runs in the server's process while the server comes up.
    warm_start.start(PAGE_MODULES)
    return stcli.main()


if __name__ == "__main__":
    sys.exit(main())

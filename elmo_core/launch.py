"""``elmo-explorer``: start the Streamlit explorer from an installed package (same as ``make app``)."""
from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    from streamlit.web import cli as stcli

    app = Path(__file__).resolve().parent.parent / "app" / "streamlit_app.py"
    if not app.is_file():
        print(f"error: the app is not next to the package ({app}); run from a checkout of the repository", file=sys.stderr)
        return 2
    sys.argv = ["streamlit", "run", str(app), "--server.headless", "true", "--browser.gatherUsageStats", "false", *sys.argv[1:]]
    return stcli.main()

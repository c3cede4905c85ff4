"""``python -m elmo_core.corpus build ...``: the same as ``python -m elmo_core corpus build ...``."""
import sys

from ..cli import main

sys.exit(main(["corpus", *sys.argv[1:]]))

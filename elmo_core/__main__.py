import sys

from elmo_core.cli import main

sys.exit(main())

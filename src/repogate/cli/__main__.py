"""``python -m repogate.cli``: the command line (the ``repogate`` console script also guards its load)."""

import sys

from repogate.cli import main

sys.exit(main())

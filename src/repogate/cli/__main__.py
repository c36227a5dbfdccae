"""``python -m repogate.cli``: the command line, as the ``repogate`` console script runs it."""

import sys

from repogate._entry import main

sys.exit(main())

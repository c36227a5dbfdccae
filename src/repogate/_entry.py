"""The ``repogate`` console script: Ctrl-C while repogate itself loads is one line, exit 130.

:func:`repogate.cli.main` turns Ctrl-C into one line once it runs; loading the command line's
modules takes a good part of a second before that, during which Ctrl-C raised a traceback.
The package's ``__init__`` loads its public names lazily, so only this module and
:mod:`repogate._interrupted` are loaded before the guard is up.
"""

from __future__ import annotations

import sys

from repogate._interrupted import interrupted_message, sigterm_as_ctrl_c

INTERRUPTED = 130
""":attr:`repogate.errors.ExitCode.INTERRUPTED`, named here without loading the package."""


def main() -> int:
    """Load the command line and run it; Ctrl-C (or SIGTERM) while it loads: one line, 130.

    :func:`repogate.cli.main` handles an interrupt once it runs; one that reaches here came while
    the guard or the command line loaded.
    """
    try:
        with sigterm_as_ctrl_c():
            from repogate.cli import main as cli_main

            return cli_main()
    except KeyboardInterrupt:
        sys.stderr.write(interrupted_message(sys.argv[1:]) + "\n")
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())

"""What a `repogate` command loads: its modules, read in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys


def modules_loaded_by(args: list[str]) -> set[str]:
    """Run `repogate ARGS` (`repogate.cli.main`) in a fresh interpreter; return `sys.modules`.

    Raises:
        AssertionError: the command did not exit 0 (its standard error is the message).
    """
    probe = (
        "import sys\n"
        "from repogate.cli import main\n"
        f"code = main({args!r})\n"
        "print('\\n' + ' '.join(sorted(sys.modules)))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.splitlines()[-1].split())

"""The harness never blocks or follows a link reading a tree that test-time code dirtied.

Red team finding 8: test-time code planted a FIFO named ``zz_later.py`` in the checkout; the
regression step read every ``.py`` file of the tree to find which names a change touches, and
``open()`` on the FIFO blocked forever.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from repogate.phases._regression import _named_in_tree


def _call_with_deadline(tree: Path, name: str, fifo: Path) -> bool | None:
    """Run the namer in a thread; None when it is still blocked after 20 s (the FIFO is then fed)."""
    found: list[bool] = []
    worker = threading.Thread(
        target=lambda: found.append(name in _named_in_tree(tree, [name])), daemon=True
    )
    worker.start()
    worker.join(20)
    if worker.is_alive():  # release the blocked open() so the test process can end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        return None
    return found[0]


def test_a_planted_fifo_or_link_is_skipped_not_read(tmp_path: Path) -> None:
    """A regression step must not hang on (or read through) what the candidate's tests planted."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "core.py").write_text("def show():\n    return 'NEWS'\n")
    fifo = tree / "pkg" / "zz_later.py"
    os.mkfifo(fifo)
    secret = tmp_path / "secret.py"
    secret.write_text("ONLY_OUTSIDE = 1\n")
    (tree / "pkg" / "link.py").symlink_to(secret)
    assert _call_with_deadline(tree, "NEWS", fifo) is True, "the harness blocked on a FIFO"
    assert _call_with_deadline(tree, "ONLY_OUTSIDE", fifo) is False

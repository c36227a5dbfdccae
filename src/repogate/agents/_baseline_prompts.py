"""The baseline's prompt templates (``str.format`` fields in braces); their digests are recorded.

Changing a template changes every baseline agent's fingerprint: a run made with the old text is
refused as another configuration (:func:`repogate.agents.fingerprint`).
"""

from __future__ import annotations

import hashlib

SYSTEM = (
    "You are a careful software engineer fixing one issue in a Python repository. "
    "Answer exactly in the format asked for; do not add commentary outside it."
)

LOCALISE = """\
Issue:
{statement}

These files of the repository match the issue best (path, then its classes and functions with line numbers):

{skeletons}

Which files and functions must change to resolve the issue? Answer with one line per location,
as `path` or `path::function`, most important first, at most {limit} lines, and nothing else."""

REPAIR = """\
Issue:
{statement}

The code to change:

{contents}

Write the fix as search/replace edits, each in this form:

path/to/file.py
<<<<<<< SEARCH
lines copied exactly from the file, enough to occur only once
=======
the lines that replace them
>>>>>>> REPLACE

Only edit what the issue needs. Optionally add one reproduction script, a Python program that
exits 0 once the issue is fixed, in a fenced block whose info string is `reproduce`:

```reproduce
...
```"""

TEMPLATES = {"system": SYSTEM, "localise": LOCALISE, "repair": REPAIR}
"""Every template by name."""


def digests() -> dict[str, str]:
    """sha256 (hex) of each template's text, by name."""
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in TEMPLATES.items()}

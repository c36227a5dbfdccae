"""An imperfect agent for real runs: each contract's reference patch minus its last hunk.

Agents never see a contract's reference patch (``cmd:`` agents get the task view only), so the
imperfect agent is a SWE-bench predictions file made beforehand, outside the repository, and run
as ``--agent predictions:FILE``. For every contract given, the reference patch is read exactly as
the gold agent reads it (:func:`repogate.patches.load_patch` on the repository mirror) and its
last hunk is removed (a file left with no hunk is removed whole); a reference of one hunk becomes
an empty prediction. Hunks are ordered as git writes them (files by path, hunks by line). Usage::

    uv run python benchmarks/drop_hunk_predictions.py --repo-cache MIRRORS \\
        --out /tmp/minus-last-hunk.jsonl TASKS/*/contract.toml

One JSON row per contract (``instance_id``, ``model_name_or_path`` = ``gold-minus-last-hunk``,
``model_patch``); the last line printed says how many predictions were written and how many are
empty. Nothing fetched is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from repogate.contract import load_contract
from repogate.git import resolve_source
from repogate.patches import load_patch

MODEL = "gold-minus-last-hunk"
_FILE = re.compile(rb"^diff --git ", re.MULTILINE)
_HUNK = re.compile(rb"^@@ ", re.MULTILINE)


def drop_last_hunk(patch: bytes) -> bytes:
    """Return ``patch`` (a ``git diff``) without its last hunk.

    A file section whose only hunk is dropped is dropped whole; sections without hunks (binary
    files, mode changes) are kept. A patch with no hunk at all is returned unchanged.
    """
    starts = [m.start() for m in _FILE.finditer(patch)]
    sections = [patch[a:b] for a, b in zip(starts, [*starts[1:], len(patch)], strict=True)]
    for index in range(len(sections) - 1, -1, -1):
        hunks = [m.start() for m in _HUNK.finditer(sections[index])]
        if not hunks:
            continue
        sections[index] = sections[index][: hunks[-1]] if len(hunks) > 1 else b""
        return patch[: starts[0]] + b"".join(sections) if starts else patch
    return patch


def main() -> None:
    """Write the predictions file; print one line per contract and a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("contracts", nargs="+", type=Path)
    parser.add_argument("--repo-cache", type=Path, required=True, help="bare mirrors")
    parser.add_argument("--out", type=Path, required=True, help="predictions JSONL to write")
    args = parser.parse_args()
    rows, empty = [], 0
    for path in args.contracts:
        contract = load_contract(path)
        if contract.reference is None:
            print(f"{contract.id}: no reference patch, skipped")
            continue
        repo = resolve_source(contract.repo, path.parent, args.repo_cache)
        reference = load_patch(contract.reference, contract, repo)
        patch = drop_last_hunk(reference)
        empty += not patch.strip()
        print(f"{contract.id}: {len(reference)} -> {len(patch)} bytes")
        rows.append(
            {
                "instance_id": contract.id,
                "model_name_or_path": MODEL,
                "model_patch": patch.decode("utf-8", "surrogateescape"),
            }
        )
    args.out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"{len(rows)} predictions written to {args.out}, {empty} empty")


if __name__ == "__main__":
    main()

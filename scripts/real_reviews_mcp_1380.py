"""Rebuild review evidence for modelcontextprotocol/python-sdk PR #1380 from identifiers only.

There is no GitHub API here, so the pull request's reviews are *reconstructed*, not downloaded:
this script writes the JSON GitHub's REST API returns (``pulls/N``, ``pulls/N/reviews``,
``pulls/N/commits``) from facts a clone shows (the pull request's commits under
``refs/pull/1380/head``, their dates, the author, the squash commit's date as the merge time) and
the owners that ``.github/CODEOWNERS`` names at the base. Who reviewed, and when, is *assumed*:
the reviewers are stand-in logins (``auth-owner``, a member of the owning team
``@modelcontextprotocol/python-sdk-auth``; ``sdk-maintainer``, a member of the default owners
``@modelcontextprotocol/python-sdk`` only), never real people; their team membership is written
as ``orgs/O/teams/T/members`` JSON. Each scenario then goes through ``repogate reviews import``
(``--team`` for the two teams) against the clone, and gets a lifecycle contract: the committed
``examples/real/mcp-owners-and-lock.toml`` with its own id, the pull request's author as the
author, the scenario's evidence as its reviews, and ``release_policy = "none"`` (the project keeps
no changelog).

Usage (see docs/reviews.md, "A real pull request")::

    git clone --no-checkout MIRROR CLONE
    git -C CLONE fetch origin refs/pull/1380/head:refs/pull/1380/head
    uv run python scripts/real_reviews_mcp_1380.py --clone CLONE --out OUT
    uv run repogate run OUT/owner-on-candidate/contract.toml ... --agent gold \
        --repo-cache DIR --out RUN        # DIR holds modelcontextprotocol+python-sdk

Exit status: 0 when every file was written; the import's own status otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from repogate.cli import main as repogate_main

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "examples" / "real" / "mcp-owners-and-lock.toml"

PULL = 1380
BASE = "1940040ac3c96118f07a718cc04a3e19ce1b27af"
HEAD = "f983a04b972eeb11e6cc24b0eec816a0a9026fbc"  # refs/pull/1380/head; same tree as the squash
FIX = "0c4632071ee98ca1f2a14a1c3d32a7e3b239aa14"  # HEAD^: the fix before its test was added
EARLIER = "591e153a7be09cca0d1d69af2b5c185870f1f80e"  # FIX^: without the typing refactor
SQUASH = "9323efad9981960638f7aa4bf72231c12c1e101f"  # landed on main
AUTHOR = "automaton82"  # author of every commit of the pull request
OWNER_TEAM = "modelcontextprotocol/python-sdk-auth"  # owns every changed path at BASE
DEFAULT_TEAM = "modelcontextprotocol/python-sdk"  # the `*` rule, overridden for these paths
MEMBERS = {OWNER_TEAM: ("auth-owner",), DEFAULT_TEAM: ("auth-owner", "sdk-maintainer")}

# The gold agent's candidate is the squash commit without tests/: the same patch as FIX (the
# test file is the only difference between FIX and HEAD), so FIX is the candidate's commit.
# Assumed review times, inside the window the commits give: EARLIER and FIX were committed at
# 2025-09-26T19:41:10Z, HEAD at 19:42:52Z; the squash landed 2025-09-29T10:13:16Z.
BEFORE_HEAD = "2025-09-26T19:42:00Z"
AFTER_HEAD = "2025-09-29T09:00:00Z"
LATER = "2025-09-29T09:30:00Z"

SCENARIOS: dict[str, list[tuple[str, str, str, str]]] = {
    # (reviewer, state, commit, submitted_at); the first four judge the gold agent's candidate
    "owner-on-candidate": [("auth-owner", "APPROVED", FIX, BEFORE_HEAD)],
    "owner-on-earlier": [("auth-owner", "APPROVED", EARLIER, BEFORE_HEAD)],
    "non-owner-on-candidate": [("sdk-maintainer", "APPROVED", FIX, BEFORE_HEAD)],
    "changes-after-approval": [
        ("auth-owner", "APPROVED", FIX, BEFORE_HEAD),
        ("auth-owner", "CHANGES_REQUESTED", FIX, AFTER_HEAD),
    ],
    # for `repogate gate --head HEAD`: the pull request's own tip as the candidate
    "owner-on-head": [("auth-owner", "APPROVED", HEAD, AFTER_HEAD)],
}


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], check=True, capture_output=True, text=True
    ).stdout


def _commits(clone: Path) -> list[dict[str, Any]]:
    """``pulls/N/commits``: the pull request's commits, oldest first, with committer dates."""
    log = _git(clone, "log", "--reverse", "--format=%H %cI", f"{BASE}..{HEAD}")
    rows = [line.split() for line in log.splitlines()]
    return [{"sha": sha, "commit": {"committer": {"date": date}}} for sha, date in rows]


def _pull(clone: Path) -> dict[str, Any]:
    """``pulls/N``: opened no earlier than its first commit's author date; merged at the squash."""
    first = _git(clone, "log", "--reverse", "--format=%aI", f"{BASE}..{HEAD}").split()[0]
    merged_at = _git(clone, "log", "-1", "--format=%cI", SQUASH).strip()
    return {
        "number": PULL,
        "user": {"login": AUTHOR},
        "state": "closed",
        "created_at": first,
        "merged": True,
        "merged_at": merged_at,
        "merged_by": None,  # the squash's committer is GitHub itself: who merged is not in git
        "head": {"ref": "main", "sha": HEAD},
        "base": {"ref": "main", "sha": BASE},
    }


def _reviews(rows: list[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
    """``pulls/N/reviews``: one item per review, in GitHub's field names."""
    return [
        {
            "id": 9_000_000 + n,
            "user": {"login": who},
            "state": state,
            "commit_id": commit,
            "submitted_at": at,
            "body": "",
        }
        for n, (who, state, commit, at) in enumerate(rows, start=1)
    ]


def _contract(scenario: str) -> str:
    """The committed contract, one id per scenario, its reviews the scenario's evidence."""
    text = CONTRACT.read_text()
    text = text.replace('id = "mcp-owners-and-lock"', f'id = "mcp-1380-{scenario}"')
    text = text.replace('author = "agent"', f'author = "{AUTHOR}"\nreviews = "evidence.json"')
    return text.replace("release_notes = []", 'release_notes = []\nrelease_policy = "none"')


def build(clone: Path, out: Path) -> int:
    """Write, per scenario under ``out/NAME/``, GitHub's JSON, the evidence and the contract.

    Returns:
        0, or the exit status of the first ``repogate reviews import`` that failed.
    """
    out.mkdir(parents=True, exist_ok=True)
    pull, commits = _pull(clone), _commits(clone)
    teams = []
    for team, logins in MEMBERS.items():
        members = out / f"{team.replace('/', '+')}.members.json"
        members.write_text(json.dumps([{"login": login} for login in logins], indent=2) + "\n")
        teams += ["--team", f"{team}={members}"]
    for name, rows in SCENARIOS.items():
        folder = out / name
        folder.mkdir(exist_ok=True)
        files = {"pull": pull, "reviews": _reviews(rows), "commits": commits}
        evidence = folder / "evidence.json"
        args = ["reviews", "import", *teams, "--repo", str(clone), "--out", str(evidence)]
        for key, data in files.items():
            (folder / f"{key}.json").write_text(json.dumps(data, indent=2) + "\n")
            args += [f"--{key}", str(folder / f"{key}.json")]
        status = repogate_main(args)
        if status != 0:
            return status
        data = json.loads(evidence.read_text())
        data["notes"] = [
            *data["notes"],
            "reconstructed from identifiers (scripts/real_reviews_mcp_1380.py): reviewers, "
            "their teams and review times are assumed, not read from GitHub",
        ]
        evidence.write_text(json.dumps(data, indent=2) + "\n")
        (folder / "contract.toml").write_text(_contract(name))
    return 0


def _main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, required=True, help="clone with refs/pull/1380/head")
    parser.add_argument("--out", type=Path, required=True, help="folder for the files")
    args = parser.parse_args()
    return build(args.clone, args.out)


if __name__ == "__main__":
    sys.exit(_main())

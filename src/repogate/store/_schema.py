"""The run store's SQLite layout: its tables, its schema versions, and how a row reads back.

Schema versions: 2 kept an attempt's crash as ``Type: message`` text; 3 keeps it as a
:class:`~repogate.receipt.Crash` in JSON; 4 adds the run's **run id** to ``meta``, made once when
the store is created (a random uuid4, never a clock reading), so a copy of the folder is known as
the same run. A schema-2 or -3 store is read (crash strings parsed into a :class:`Crash`, its run
id derived from its first finished attempt by :func:`derived_run_id`) and becomes schema 4, with
that same derived id, when a run resumes it; any other version is refused.
"""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from repogate.receipt import Crash

SCHEMA_VERSION = 4
"""4: ``meta`` holds ``run_id``; 3: an attempt's ``crash`` is a :class:`Crash` as JSON."""
READABLE_VERSIONS = ("2", "3", "4")
"""2 kept a crash as ``Type: message`` text (read as a :class:`Crash`); 2 and 3 have no run id
(derived when read, written when a run resumes them, which makes them schema 4)."""
DB_NAME = "store.sqlite"
MANIFEST_FILE = "manifest.json"

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS attempts (
    attempt_id TEXT PRIMARY KEY,
    contract_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    decision TEXT,
    decision_sha256 TEXT,
    crash TEXT,
    UNIQUE (contract_id, agent, epoch)
);
CREATE TABLE IF NOT EXISTS receipts (
    attempt_id TEXT NOT NULL REFERENCES attempts(attempt_id),
    seq INTEGER NOT NULL,
    gate TEXT NOT NULL,
    status TEXT NOT NULL,
    state_id TEXT NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (attempt_id, seq)
);
"""


def connect(db: Path) -> sqlite3.Connection:
    """Open ``db`` in WAL mode with rows read by column name (:class:`sqlite3.Row`)."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn


_M = TypeVar("_M", bound=BaseModel)


def row_model(model: type[_M], text: str | None) -> _M | None:
    """A row's JSON ``text`` read as ``model``; None when it is None or does not validate.

    A row that does not validate changed since the harness stored it; the digest chain
    (:mod:`repogate.store._chain`) names it, so readers show no verdict of it rather than crash.
    """
    if text is None:
        return None
    try:
        return model.model_validate_json(text)
    except ValidationError:
        return None


def crash_of(text: str | None) -> Crash | None:
    """Read a stored crash: JSON (schema 3) or ``Type: message`` text (schema 2)."""
    if text is None:
        return None
    try:
        return Crash.model_validate_json(text)
    except ValidationError:
        return Crash.parse(text)


def new_run_id() -> str:
    """A new run id: a random uuid4 as 32 hex digits (unique without reading the clock)."""
    return uuid.uuid4().hex


def derived_run_id(conn: sqlite3.Connection) -> str | None:
    """The run id of a store written before schema 4, or None when no attempt of it finished.

    Derived (sha256, 32 hex digits) from the first finished attempt's id and start and finish
    times: a finished attempt is never redone, so the original folder and every copy of it
    derive the same id, and two runs made apart (at other times) derive different ones.
    """
    row = conn.execute(
        "SELECT attempt_id, started_at, finished_at FROM attempts WHERE status='done'"
        " ORDER BY started_at, attempt_id LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    text = "\n".join((row["attempt_id"], row["started_at"], row["finished_at"] or ""))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def run_id_of(conn: sqlite3.Connection, run_dir: Path) -> str:
    """The run id of the store ``conn`` (in ``run_dir``): 32 hex digits.

    Made when the run was created (schema 4), so it stays on resume and a copy of the folder
    carries it; a report counts the attempts of folders with one id once. A store written before
    run ids has the id :func:`derived_run_id` gives, or, with no attempt finished, one derived
    from the folder's path.
    """
    row = conn.execute("SELECT value FROM meta WHERE key='run_id'").fetchone()
    if row is not None:
        return str(row["value"])
    derived = derived_run_id(conn)
    return derived or hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:32]

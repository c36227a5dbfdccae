"""The run store's SQLite layout: its tables, its schema versions, and how a row reads back.

Schema versions: 2 kept an attempt's crash as ``Type: message`` text; 3 keeps it as a
:class:`~repogate.receipt.Crash` in JSON. A schema-2 store is read (its crash strings parsed into
a :class:`Crash`) and becomes schema 3 when a run resumes it; any other version is refused.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pydantic import ValidationError

from repogate.receipt import Crash

SCHEMA_VERSION = 3
"""3: an attempt's ``crash`` is a :class:`~repogate.receipt.Crash` as JSON."""
READABLE_VERSIONS = ("2", "3")
"""2 kept a crash as ``Type: message`` text; it is read as a :class:`Crash`, and a resumed run
of schema 2 becomes schema 3 (every later crash is JSON)."""
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


def crash_of(text: str | None) -> Crash | None:
    """Read a stored crash: JSON (schema 3) or ``Type: message`` text (schema 2)."""
    if text is None:
        return None
    try:
        return Crash.model_validate_json(text)
    except ValidationError:
        return Crash.parse(text)

"""The run store: an SQLite index plus an evidence folder per attempt, written as work proceeds.

Layout of a run directory::

    RUN_DIR/store.sqlite                  index of runs, attempts and receipts (WAL mode); its
                                          meta table holds the run id and the inputs
    RUN_DIR/manifest.json                 the run manifest, written before the first attempt
    RUN_DIR/attempts/<attempt_id>/        evidence of one attempt
        receipts/<nn>-<gate>.intoto.json  each receipt as an in-toto Statement v1
        decision.json                     the decision, once made
        ...                               patch, logs, JUnit XML, trajectory

Every attempt is kept whatever becomes of it (the denominator). Each receipt is committed as soon as
its gate finishes, so a killed process leaves every finished receipt readable; an attempt left
``running`` by a killed process is discarded and redone on resume, never duplicated.

The evidence files are the canonical copy; the SQLite rows are an index that chains to them by
digest (:mod:`repogate.store._chain`): ``decision.json`` lists its receipt files' sha256, the attempt's row
holds the sha256 of ``decision.json``. ``show`` names every finished attempt whose chain broke, and a
resume refuses the run directory (see :meth:`Store.create`). One process writes (it holds the
lock); SQLite runs in WAL mode so readers never block it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from repogate import clock
from repogate._files import read_json_object
from repogate._folders import not_a_folder
from repogate._locks import write_atomic
from repogate._model import FrozenModel
from repogate._problems import every_problem
from repogate.agent_spec import AgentSpec, attempt_tag
from repogate.decision import Decision
from repogate.errors import RunDirError
from repogate.receipt import Artifact, Crash, Receipt
from repogate.state import CandidateState
from repogate.store._chain import DECISION_FILE, StoredReceipt, attempt_problems, refuse_changed
from repogate.store._rundir import RunInputs, hold, is_held
from repogate.store._schema import (
    DB_NAME,
    MANIFEST_FILE,
    READABLE_VERSIONS,
    SCHEMA_SQL,
    SCHEMA_VERSION,
    connect,
    crash_of,
    derived_run_id,
    new_run_id,
    row_model,
    run_id_of,
)
from repogate.store.manifest import RunManifest
from repogate.vocabulary import AttemptStatus


class AttemptRecord(FrozenModel):
    """One attempt as the store indexes it: who, which contract, which epoch, and its decision."""

    attempt_id: str
    contract_id: str
    agent: str
    epoch: int
    status: AttemptStatus
    started_at: str
    finished_at: str | None = None
    decision: Decision | None = None
    crash: Crash | None = None


def attempt_id_for(contract_id: str, agent: AgentSpec, epoch: int) -> str:
    """Return a filesystem-safe attempt id: contract id, agent tag (:func:`attempt_tag`), epoch."""
    return f"{contract_id}__{attempt_tag(agent)}__e{epoch}"


class Store:
    """A run's SQLite index and evidence folders.

    Open with :meth:`create` (to write) or :meth:`open` (to read), as a context manager: leaving
    the ``with`` block closes the database and releases the run directory's lock.
    """

    def __init__(
        self, run_dir: Path, conn: sqlite3.Connection, lock: IO[str] | None = None
    ) -> None:
        self.run_dir = run_dir
        self._conn = conn
        self._lock = lock
        self.inputs = RunInputs()

    @classmethod
    def create(cls, run_dir: Path, inputs: RunInputs | None = None) -> Store:
        """Create (or reopen, to resume or extend) the store in ``run_dir`` and hold it.

        Args:
            run_dir: the run directory.
            inputs: what this command runs (contracts, agents, epochs). A rerun resumes the run,
                or extends it with new agents (:meth:`RunInputs.extend`); :attr:`inputs` is then
                the whole run's.

        Raises:
            RunDirError: another process is writing to ``run_dir``; it holds a store of another
                schema version; it was written for other inputs; or a finished attempt's
                evidence changed since it was stored.
        """
        wanted = inputs or RunInputs()
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = hold(run_dir)
        try:
            conn = connect(run_dir / DB_NAME)
            conn.executescript(SCHEMA_SQL)
            conn.executemany(
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                [("schema_version", str(SCHEMA_VERSION)), ("inputs", wanted.model_dump_json())],
            )
        except sqlite3.DatabaseError as exc:
            lock.close()
            raise RunDirError(
                f"{run_dir / DB_NAME} is not a readable repogate store ({exc})",
                "give the --out folder of a repogate run, or rerun into a new folder",
            ) from None
        store = cls(run_dir, conn, lock)
        try:
            store._check_version()
            row = conn.execute("SELECT value FROM meta WHERE key='inputs'").fetchone()
            store.inputs = wanted.extend(RunInputs.model_validate_json(row["value"]), run_dir)
            refuse_changed(run_dir, store.changed_evidence())
        except BaseException:
            store.close()
            raise
        # a new store gets a new run id; an older one (schema 2, 3) keeps the id it was read by
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('run_id', ?)",
            (derived_run_id(conn) or new_run_id(),),
        )
        conn.executemany(
            "UPDATE meta SET value=? WHERE key=?",
            [(store.inputs.model_dump_json(), "inputs"), (str(SCHEMA_VERSION), "schema_version")],
        )
        return store

    @classmethod
    def open(cls, run_dir: Path) -> Store:
        """Open an existing run directory for reading.

        Raises:
            RunDirError: it does not exist, holds no store, or the store is unreadable.
        """
        db = run_dir / DB_NAME
        if not run_dir.is_dir():
            why = not_a_folder(run_dir) or "does not exist"
            raise RunDirError(
                f"run directory {run_dir} {why}", "give the --out folder of a repogate run"
            )
        if not db.is_file():
            raise RunDirError(
                f"{run_dir} holds no {DB_NAME}", "give the --out folder of a repogate run"
            )
        try:
            store = cls(run_dir, connect(db))
        except sqlite3.DatabaseError as exc:
            raise RunDirError(
                f"{db} is not a readable repogate store ({exc})",
                "give the --out folder of a repogate run, or rerun into a new folder",
            ) from None
        store._check_version()
        return store

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_version(self) -> None:
        try:
            row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise RunDirError(
                f"{self.run_dir / DB_NAME} is not a readable repogate store ({exc})",
                "give the --out folder of a repogate run, or rerun into a new folder",
            ) from None
        if row is None or row["value"] not in READABLE_VERSIONS:
            raise RunDirError(
                f"{self.run_dir} has store schema version {row['value'] if row else 'none'}, "
                f"this repogate reads {' and '.join(READABLE_VERSIONS)}",
                "use the repogate version that wrote it, or rerun into a new folder",
            )

    @property
    def run_id(self) -> str:
        """The run's id (:func:`~repogate.store._schema.run_id_of`): kept on resume and by a copy."""
        return run_id_of(self._conn, self.run_dir)

    def being_written(self) -> bool:
        """Return True while a run process holds this run directory's lock (it is running)."""
        return self._lock is not None or is_held(self.run_dir)

    def close(self) -> None:
        """Close the database connection and release the run directory."""
        self._conn.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
            self._conn.execute("COMMIT")  # a full disk fails here: roll back, keep nothing half
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def write_manifest(self, manifest: RunManifest) -> Path:
        """Write the run manifest (before the first attempt) and return its path."""
        path = self.run_dir / MANIFEST_FILE
        write_atomic(path, manifest.model_dump_json(indent=2).encode())
        return path

    def manifest(self) -> RunManifest | None:
        """Return the run manifest, validated, or None when none was written.

        Raises:
            RunDirError: ``manifest.json`` is not JSON, not a JSON object, or not a manifest
                this repogate reads.
        """
        path = self.run_dir / MANIFEST_FILE
        if not path.is_file():
            return None
        fix = "use the repogate version that wrote it, or rerun into a new --out folder"
        data = read_json_object(path, "run manifest", RunDirError, fix)
        try:
            return RunManifest.model_validate(data)
        except ValidationError as exc:
            raise RunDirError(
                f"{path} is not a run manifest this repogate reads ({every_problem(exc, RunManifest)})",
                fix,
            ) from None

    def attempt_dir(self, attempt_id: str) -> Path:
        """Return the evidence folder of ``attempt_id``."""
        return self.run_dir / "attempts" / attempt_id

    def begin_attempt(self, contract_id: str, agent: AgentSpec, epoch: int) -> AttemptRecord:
        """Plan an attempt (``planned``), or return the finished record when it is done (resume).

        An attempt left unfinished by a killed process, or ``crashed`` (the evaluator's fault), is
        discarded with its evidence and begun anew, so a resumed run neither loses nor duplicates
        attempts nor mixes the receipts of two tries. :meth:`start_attempt` marks it ``running``
        when a worker starts it.
        """
        attempt_id = attempt_id_for(contract_id, agent, epoch)
        existing = self.get(attempt_id)
        if existing is not None and existing.status == "done":
            return existing
        folder = self.attempt_dir(attempt_id)
        with self._tx() as tx:
            tx.execute("DELETE FROM receipts WHERE attempt_id=?", (attempt_id,))
            tx.execute("DELETE FROM attempts WHERE attempt_id=?", (attempt_id,))
            tx.execute(
                "INSERT INTO attempts (attempt_id, contract_id, agent, epoch, status, started_at)"
                " VALUES (?, ?, ?, ?, 'planned', ?)",
                (attempt_id, contract_id, agent.text, epoch, clock.now().isoformat()),
            )
        if folder.exists():
            shutil.rmtree(folder)
        (folder / "receipts").mkdir(parents=True)
        record = self.get(attempt_id)
        assert record is not None
        return record

    def start_attempt(self, attempt_id: str) -> None:
        """Mark a planned attempt ``running`` (a worker started it), at the time it started."""
        with self._tx() as tx:
            tx.execute(
                "UPDATE attempts SET status='running', started_at=? WHERE attempt_id=?"
                " AND status='planned'",
                (clock.now().isoformat(), attempt_id),
            )

    def add_receipt(self, attempt_id: str, receipt: Receipt, state: CandidateState) -> Path:
        """Write ``receipt`` as an in-toto statement file and index it; return the file's path."""
        seq = self._conn.execute(
            "SELECT COUNT(*) FROM receipts WHERE attempt_id=?", (attempt_id,)
        ).fetchone()[0]  # an aggregate's one column
        folder = self.attempt_dir(attempt_id)
        relative = f"receipts/{seq:02d}-{receipt.gate}.intoto.json"
        data = json.dumps(receipt.to_in_toto(state), indent=2).encode()
        write_atomic(folder / relative, data)
        with self._tx() as tx:
            tx.execute(
                "INSERT INTO receipts (attempt_id, seq, gate, status, state_id, path, sha256, body)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    attempt_id,
                    seq,
                    receipt.gate,
                    receipt.status,
                    receipt.state_id,
                    relative,
                    hashlib.sha256(data).hexdigest(),
                    receipt.model_dump_json(),
                ),
            )
        return folder / relative

    def finish_attempt(
        self, attempt_id: str, decision: Decision | None, crash: Crash | None = None
    ) -> None:
        """Record the decision (or the crash) and mark the attempt finished.

        The decision is stored with the digest of every receipt file (``receipt_digests``), and its
        row with the digest of ``decision.json``: the store's digest chain.
        """
        digest = None
        if decision is not None:
            listed = tuple(
                Artifact(path=r.path, sha256=r.sha256) for r in self._receipt_rows(attempt_id)
            )
            decision = decision.model_copy(update={"receipt_digests": listed})
            data = decision.model_dump_json(indent=2).encode()
            write_atomic(self.attempt_dir(attempt_id) / DECISION_FILE, data)
            digest = hashlib.sha256(data).hexdigest()
        with self._tx() as tx:
            tx.execute(
                "UPDATE attempts SET status=?, finished_at=?, decision=?, decision_sha256=?,"
                " crash=? WHERE attempt_id=?",
                (
                    "done" if crash is None else "crashed",
                    clock.now().isoformat(),
                    None if decision is None else decision.model_dump_json(),
                    digest,
                    None if crash is None else crash.model_dump_json(),
                    attempt_id,
                ),
            )

    def _receipt_rows(self, attempt_id: str) -> list[StoredReceipt]:
        rows = self._conn.execute(
            "SELECT path, sha256, body FROM receipts WHERE attempt_id=? ORDER BY seq",
            (attempt_id,),
        ).fetchall()
        return [StoredReceipt(path=r["path"], sha256=r["sha256"], body=r["body"]) for r in rows]

    def changed_evidence(self) -> dict[str, tuple[str, ...]]:
        """Check the digest chain of every finished attempt; return what changed, by attempt id.

        Attempts still running or crashed are redone on resume and have no chain to check. An
        empty result means every finished attempt's files and rows are as the harness wrote them.
        """
        rows = self._conn.execute(
            "SELECT attempt_id, decision, decision_sha256 FROM attempts"
            " WHERE status='done' ORDER BY rowid"
        ).fetchall()
        found = {}
        for row in rows:
            attempt_id = row["attempt_id"]
            problems = attempt_problems(
                self.attempt_dir(attempt_id),
                row["decision"],
                row["decision_sha256"],
                self._receipt_rows(attempt_id),
            )
            if problems:
                found[attempt_id] = problems
        return found

    def get(self, attempt_id: str) -> AttemptRecord | None:
        """Return one attempt's record, or None."""
        rows = self._select("WHERE attempt_id=?", (attempt_id,))
        return rows[0] if rows else None

    def attempts(self) -> list[AttemptRecord]:
        """Return every attempt, in the order they were begun."""
        return self._select("ORDER BY rowid", ())

    def attempt_ids(self) -> set[str]:
        """Return every attempt's id (no decision is read: cheap on a large store)."""
        rows = self._conn.execute("SELECT attempt_id FROM attempts").fetchall()
        return {str(row["attempt_id"]) for row in rows}

    def receipts(self, attempt_id: str) -> list[Receipt]:
        """Return an attempt's receipts in the order they were written.

        A row that no longer reads as a receipt (changed since it was stored) is left out:
        :meth:`changed_evidence` names it, and ``show`` and ``report`` trust no verdict of it.
        """
        rows = self._conn.execute(
            "SELECT body FROM receipts WHERE attempt_id=? ORDER BY seq", (attempt_id,)
        ).fetchall()
        return [r for r in (row_model(Receipt, row["body"]) for row in rows) if r is not None]

    def _select(self, where: str, params: tuple[Any, ...]) -> list[AttemptRecord]:
        cols = "attempt_id, contract_id, agent, epoch, status, started_at, finished_at, decision, crash"
        try:
            rows = self._conn.execute(f"SELECT {cols} FROM attempts {where}", params).fetchall()  # noqa: S608
        except sqlite3.DatabaseError as exc:
            raise RunDirError(
                f"{self.run_dir / DB_NAME} is half written or damaged ({exc})",
                "rerun into a new --out folder",
            ) from None
        records = []
        for row in rows:
            # a decision row that no longer reads as one changed since it was stored: the
            # record has none, and changed_evidence() names the attempt (show, report, resume)
            decision = row_model(Decision, row["decision"])
            kept = (k for k in row.keys() if k not in ("decision", "crash"))  # noqa: SIM118 (a Row iterates values)
            fields = {key: row[key] for key in kept}
            records.append(AttemptRecord(**fields, decision=decision, crash=crash_of(row["crash"])))
        return records

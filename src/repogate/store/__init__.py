"""The run store: every attempt's evidence, its SQLite index and the run manifest.

Public face of the package; the modules behind it are private, except the manifest's records:

- ``_store``: :class:`Store`, the run directory's writer and reader (one writer holds the lock);
- ``_schema``: the SQLite schema, its version and the run directory's file names;
- ``_chain``: the digest chain from a run's index to each attempt's decision and receipts;
- ``_rundir``: the run's inputs and the hold a writing process keeps on its folder;
- ``manifest``: :class:`RunManifest`, what a run was asked to do and with what.
"""

from repogate.store._chain import DECISION_FILE, file_sha256
from repogate.store._rundir import RunInputs, is_held
from repogate.store._schema import DB_NAME, MANIFEST_FILE
from repogate.store._store import AttemptRecord, Store, attempt_id_for
from repogate.store.manifest import (
    AgentEntry,
    ContractEntry,
    ExecutorEntry,
    RunManifest,
    contract_entry,
    isolation_summary,
)

__all__ = [
    "DB_NAME",
    "DECISION_FILE",
    "MANIFEST_FILE",
    "AgentEntry",
    "AttemptRecord",
    "ContractEntry",
    "ExecutorEntry",
    "RunInputs",
    "RunManifest",
    "Store",
    "attempt_id_for",
    "contract_entry",
    "file_sha256",
    "is_held",
    "isolation_summary",
]

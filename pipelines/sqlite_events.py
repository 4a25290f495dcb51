"""Dagster's SQLite event log, with its connections kept open and the tenants' partitions
remembered: the same files and tables (the UI and `dagster` read them as ever), less per query.

Why: a small run stores ~600 events and asks ~2,500 questions of the event log (each asset's
and check's partition, its inputs' data versions, the checks' target materializations), and
Dagster's `SqliteEventLogStorage` builds a new SQLAlchemy engine and SQLite connection for every
one (closing the last one checkpoints the WAL). That was the largest part of a small run's CPU
(docs/benchmarks.md, "Session 10: a run's Dagster overhead"). Here an engine per database file
keeps one pooled connection (the index and the few run files in use), and the existence of a
dynamic partition (asked ~430 times a run, for the one tenant) is remembered for a few seconds.
PostgreSQL (RESERVOIR_DAGSTER_PG_URL) gets the same from `pipelines.pg_storage`.
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME
from dagster._core.storage.sqlite import create_db_conn_string
from sqlalchemy.engine import Connection
from sqlalchemy.pool import QueuePool

# The run files whose engines stay open besides the index (a run writes one; the UI reads a few).
OPEN_RUN_FILES = 4
# How long a partition seen to exist is taken to exist without asking again. Another process
# deleting a tenant partition is seen after this long; this process's own deletions at once.
PARTITION_MEMORY_SECONDS = 10.0
# Dagster's own busy timeout for SQLite (`SQLITE_BUSY_TIMEOUT_SECONDS`).
BUSY_TIMEOUT_SECONDS = 30.0


def _commit_without_sync(dbapi_connection: Any, _record: Any) -> None:
    """A database in WAL mode (Dagster's event log files are) commits without an fsync each:
    `synchronous=NORMAL` syncs the WAL at its checkpoints only. A commit still survives the
    process's crash; a power loss may undo the last ones, never corrupt the file. A run stores
    ~650 events (~210 at the lake step's end, one commit or more each), and on a shared disk an
    fsync took ~6 ms (docs/benchmarks.md, "Session 25")."""
    cursor = dbapi_connection.cursor()
    try:
        (mode,) = cursor.execute("PRAGMA journal_mode").fetchone()
        if str(mode).lower() == "wal":
            cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """`SqliteEventLogStorage` (same `base_dir`, files and schema) reusing its connections."""

    def __init__(self, base_dir: str, inst_data: Any = None) -> None:
        self._engines: OrderedDict[str, sa.Engine] = OrderedDict()
        self._partitions_seen: dict[tuple[str, str], float] = {}
        self._tables_seen: set[str] = set()
        self._asset_key_cols_seen: set[str] = set()
        self._indexes_seen: set[str] = set()
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: Any, config_value: dict[str, Any]
    ) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str) -> sa.Engine:
        """The open engine of one database file (the least recently used run file's closed)."""
        engine = self._engines.get(shard)
        if engine is not None:
            self._engines.move_to_end(shard)
            return engine
        engine = sa.create_engine(
            create_db_conn_string(self._base_dir, shard),
            poolclass=QueuePool,
            pool_size=1,
            max_overflow=2,
            # one connection serves the storage's threads in turn (`_db_lock`)
            connect_args={"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
        )
        sa.event.listen(engine, "connect", _commit_without_sync)
        self._engines[shard] = engine
        runs = [s for s in self._engines if s != INDEX_SHARD_NAME]
        for old in runs[: max(0, len(runs) - OPEN_RUN_FILES)]:
            self._engines.pop(old).dispose()
        return engine

    @contextlib.contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
                # a new file's first connection predates its WAL mode: open one that sees it
                engine.dispose()
            with engine.connect() as conn, conn.begin():
                yield conn

    def _close_engines(self) -> None:
        with self._db_lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()

    def _forget(self) -> None:
        self._partitions_seen.clear()
        self._tables_seen.clear()
        self._asset_key_cols_seen.clear()
        self._indexes_seen.clear()

    def wipe(self) -> None:
        self._close_engines()  # the run files are deleted: no connection may hold them
        self._forget()
        super().wipe()

    def reindex_events(self, print_fn: Any = None, force: bool = False) -> None:
        self._indexes_seen.clear()  # a forced reindex redoes the data migrations
        super().reindex_events(print_fn, force)

    def reindex_assets(self, print_fn: Any = None, force: bool = False) -> None:
        self._indexes_seen.clear()
        super().reindex_assets(print_fn, force)

    def dispose(self) -> None:
        self._close_engines()
        super().dispose()

    def has_table(self, table_name: str) -> bool:
        """A table once found stays (a migration adds tables; none drops them): asked ~280 times
        a run, each time with a new engine."""
        if table_name in self._tables_seen:
            return True
        found = super().has_table(table_name)
        if found:
            self._tables_seen.add(table_name)
        return found

    def has_asset_key_col(self, column_name: str) -> bool:
        if column_name in self._asset_key_cols_seen:  # without opening a connection
            return True
        return super().has_asset_key_col(column_name)

    def _has_asset_key_col_on_connection(self, conn: Connection, column_name: str) -> bool:
        """A column of `asset_keys` once found stays (migrations add them): asked for every
        asset event stored (~470 a small run), each time inspecting the table."""
        if column_name in self._asset_key_cols_seen:
            return True
        found = super()._has_asset_key_col_on_connection(conn, column_name)
        if found:
            self._asset_key_cols_seen.add(column_name)
        return found

    def has_secondary_index(self, name: str) -> bool:
        """A data migration once completed stays completed (until a wipe or a forced reindex):
        asked ~120 times a small run, a query each."""
        if name in self._indexes_seen:
            return True
        found = super().has_secondary_index(name)
        if found:
            self._indexes_seen.add(name)
        return found

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        key = (partitions_def_name, partition_key)
        seen = self._partitions_seen.get(key)
        if seen is not None and time.monotonic() - seen < PARTITION_MEMORY_SECONDS:
            return True
        exists = super().has_dynamic_partition(partitions_def_name, partition_key)
        if exists:
            self._partitions_seen[key] = time.monotonic()
        else:
            self._partitions_seen.pop(key, None)
        return exists

    def delete_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> None:
        self._partitions_seen.pop((partitions_def_name, partition_key), None)
        super().delete_dynamic_partition(partitions_def_name, partition_key)

"""The lake's unique-keys check, counted while the run goes on: each table's duplicate keys are
counted in a background thread as soon as its stream's landing has committed, while the next
streams are read, instead of all of them after the last stream.

A full run's later streams spend seconds waiting for the service (the availability horizon: the
service computes it while this process has nothing to do), and the counts (DuckDB, the GIL let
go) take ~6 CPU s at the large scale, most of them for the bill lines; counted after the last
stream, they were the lake step's tail, on one core (docs/benchmarks.md, "Session 25").

A table landed again later in the same run (its landing commits again) is counted again; only
the last count is used, taken after the table's last commit, so the check sees what the lake
holds at the run's end, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

import duckdb

from assets import progress
from assets.catalogue import SPECS
from lake.store import Lake, connect

TABLES_OF_ROOT = {s.table.name: tuple(t.name for t in s.tables) for s in SPECS}


class KeyCounts:
    """Duplicate keys of `tables`, each counted once its stream has committed (`progress`'s
    done event for the stream's root table); `get` gives a table's count, counting it then when
    no commit was seen."""

    def __init__(self, lake: Lake, tables: Collection[str]) -> None:
        self._lake, self._tables = lake, frozenset(tables)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="lake-key-counts")
        self._counts: dict[str, Future[int]] = {}
        self._lock = threading.Lock()
        self._con: duckdb.DuckDBPyConnection | None = None  # the pool thread's cursor
        self._unsubscribe: Callable[[], None] | None = None

    def __enter__(self) -> KeyCounts:
        self._unsubscribe = progress.subscribe(self._landed)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._con is not None:
            self._con.close()

    def stop(self) -> None:
        """No more counting on commits (the landings are over)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _landed(self, event: progress.Event) -> None:
        if not (isinstance(event, progress.PageEvent) and event.done):
            return
        for table in TABLES_OF_ROOT.get(event.table, ()):
            if table in self._tables:
                with self._lock:
                    self._counts[table] = self._pool.submit(self._count, table)

    def _count(self, table: str) -> int:
        if self._con is None:  # one cursor for every count, in the pool's one thread
            self._con = connect()
        return self._lake.duplicate_keys(table, self._con)

    def get(self, table: str, con: duckdb.DuckDBPyConnection) -> int:
        """The table's duplicate keys: its last count since a commit, else counted now."""
        with self._lock:
            counted = self._counts.pop(table, None)
        if counted is None:
            return self._lake.duplicate_keys(table, con)
        return counted.result()

"""Tidy the published warehouse after a refresh: DuckDB's row-group merges, where nobody waits.

A checkpoint of DuckDB merges, in every table, the runs of row groups whose live rows fit in
fewer groups (its vacuum of deleted rows). In the refresh that crosses midnight at large those
merges are ~0.5 of its commit's ~0.9 CPU s (docs/benchmarks.md, sessions 22 and 23). A refresh
asked to defer them (`update_warehouse(defer_merges=True)`: Dagster's warehouse asset) commits
with the vacuum off, so its marts are published (the file closed, readers may open it) without
them; this step, run after it (the `warehouse_tidy` asset of the same run), does them.

A checkpoint runs only when the write-ahead log holds something: with nothing written `CHECKPOINT`
and `FORCE CHECKPOINT` return at once and merge nothing. So the tidy writes a table to the catalog
and drops it in one transaction (the log holds both, the file's contents stay the same), then
checkpoints with the vacuum on. On a file with nothing to merge that costs ~0.06 CPU s at large.

While the tidy holds the file, readers of another process cannot open it (DuckDB's "Could not set
lock": they retry, as during a refresh); the tidy holds the lake's writer lock, so no refresh
runs meanwhile. When a reader holds the file the tidy does nothing: the next tidy merges what
this one left (a refresh that defers leaves the merges to a tidy, never to the next refresh).
"""

from __future__ import annotations

import contextlib
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from lake.locks import DEFAULT_LOCK_TIMEOUT, writer_lock
from lake.store import Lake
from warehouse.build import LAKE_DIR, warehouse_path

# a table created and dropped in one transaction: the log it leaves makes the checkpoint run
PROBE = "meta.tidy_checkpoint_probe"


@dataclass(frozen=True)
class TidyResult:
    """What a tidy did: `merged` False (with its `skipped` reason) when it could not open the
    file; the rows stored but deleted before and after, and the live rows of each table (the
    same before and after: the tidy changes no contents)."""

    path: Path
    merged: bool
    skipped: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    deleted_rows_before: int = 0
    deleted_rows_after: int = 0
    rows_before: dict[str, int] = field(default_factory=dict)
    rows_after: dict[str, int] = field(default_factory=dict)

    @property
    def rows_unchanged(self) -> bool:
        return self.rows_before == self.rows_after


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def table_rows(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, int], int]:
    """Each table's live rows, and the rows stored but deleted in all of them (DuckDB's estimate
    counts the rows its row groups hold, deleted ones too): ~0.05 CPU s at large."""
    tables = con.execute(
        "select schema_name || '.' || table_name, estimated_size from duckdb_tables() "
        "where database_name = current_database() and not temporary order by 1"
    ).fetchall()
    if not tables:
        return {}, 0
    counts = " union all ".join(
        f"select {i} as i, count(*) as n from {name}" for i, (name, _) in enumerate(tables)
    )
    live = dict(con.execute(counts).fetchall())
    rows = {name: int(live[i]) for i, (name, _) in enumerate(tables)}
    deleted = sum(int(stored) - rows[name] for name, stored in tables)
    return rows, deleted


def merge_row_groups(con: duckdb.DuckDBPyConnection) -> None:
    """A checkpoint with the vacuum on that runs even when nothing else was written."""
    con.execute("reset max_vacuum_tasks")
    con.execute("begin")
    con.execute(f"create table {PROBE} (x integer)")
    con.execute(f"drop table {PROBE}")
    con.execute("commit")
    con.execute("checkpoint")


def tidy_warehouse(
    data_dir: Path | str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
) -> TidyResult:
    """Merge the published file's row groups whose live rows fit in fewer (see the module)."""
    data_dir = Path(data_dir)
    target = warehouse_path(data_dir)
    if not target.exists():
        return TidyResult(path=target, merged=False, skipped="no warehouse file")
    started, cpu = time.perf_counter(), _cpu()
    with writer_lock(Lake(data_dir / LAKE_DIR), lock_timeout):
        try:
            con = duckdb.connect(str(target))
        # another process reads it ("Could not set lock on file"), or this one, read-only
        except (duckdb.IOException, duckdb.ConnectionException) as exc:
            reason = str(exc).splitlines()[0][:200]
            return TidyResult(path=target, merged=False, skipped=f"file in use: {reason}")
        try:
            rows_before, deleted_before = table_rows(con)
            merge_row_groups(con)
            rows_after, deleted_after = table_rows(con)
        finally:
            with contextlib.suppress(duckdb.Error):
                con.close()
    return TidyResult(
        path=target,
        merged=True,
        seconds=time.perf_counter() - started,
        cpu_seconds=_cpu() - cpu,
        deleted_rows_before=deleted_before,
        deleted_rows_after=deleted_after,
        rows_before=rows_before,
        rows_after=rows_after,
    )

"""The append-only Parquet lake: batch writers, the current-state reader and compaction.

Layout (docs/contracts.md section 3): `lake/<table>/<batch_id>-<part:05d>.parquet`. Parts are
written as `<name>.parquet.tmp` and renamed only when the whole table batch commits, so a crash
leaves no half file and no half batch (a full batch that is only partly visible would make the
current-state rule drop every key it has not reached yet). Re-executing a run reuses its batch
id: the commit overwrites the same file names and removes any surplus parts of that batch, so the
re-run is idempotent. Compaction writes the current rows (lineage columns untouched, so the
current state is the same) to a new file first and deletes the files it read only afterwards; a
crash in between leaves duplicate rows that the current-state rule already tolerates.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from assets.schema import QUARANTINE_SCHEMA, TABLES, Table

DEFAULT_FLUSH_ROWS = 50_000
STALE_TMP_SECONDS = 3600  # temp files older than this belong to a crashed writer
_PART = re.compile(r"^(?P<batch>\d{8}T\d{6}Z-[0-9a-f]{8})-(?P<part>\d{5})\.parquet$")


def new_batch_id(at: datetime | None = None, token: str | None = None) -> str:
    """`YYYYMMDDTHHMMSSZ-<8 hex>`: sorts by time, unique per run."""
    at = (at or datetime.now(UTC)).astimezone(UTC)
    token = (token or secrets.token_hex(4))[:8].lower()
    return f"{at:%Y%m%dT%H%M%SZ}-{token}"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _replace_atomically(tmp: Path, final: Path) -> None:
    os.replace(tmp, final)


class PartWriter:
    """Buffers normalised rows of one table and writes them as parts of one batch."""

    def __init__(
        self,
        folder: Path,
        batch_id: str,
        schema: pa.Schema,
        *,
        flush_rows: int = DEFAULT_FLUSH_ROWS,
    ) -> None:
        self.folder, self.batch_id, self.schema = folder, batch_id, schema
        self.flush_rows = flush_rows
        self.rows = 0
        self.bytes_written = 0
        self.files: list[Path] = []
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        self._pending: list[Path] = []
        for stale in folder.glob(f"{batch_id}-*.parquet.tmp"):
            stale.unlink(missing_ok=True)  # left by a crashed attempt of this same run

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self._buffer.append(table)
        self._buffered += table.num_rows
        if self._buffered >= self.flush_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        data = pa.concat_tables(self._buffer).select(self.schema.names).cast(self.schema)
        self._buffer, self._buffered = [], 0
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f"{self.batch_id}-{len(self._pending):05d}.parquet.tmp"
        pq.write_table(data, tmp)
        self._pending.append(tmp)
        self.rows += data.num_rows

    def commit(self, kind: str | None = None) -> list[Path]:
        """Make the batch visible; `kind` rewrites `_batch_kind` (a full batch downgraded)."""
        self._flush()
        for i, tmp in enumerate(self._pending):
            if kind is not None:
                data = pq.read_table(tmp, schema=self.schema)
                idx = data.schema.get_field_index("_batch_kind")
                data = data.set_column(idx, "_batch_kind", pa.array([kind] * data.num_rows))
                pq.write_table(data.cast(self.schema), tmp)
            final = self.folder / f"{self.batch_id}-{i:05d}.parquet"
            _replace_atomically(tmp, final)
            self.files.append(final)
            self.bytes_written += final.stat().st_size
        # Surplus parts of an earlier attempt of this batch would hold stale rows.
        for path in sorted(self.folder.glob(f"{self.batch_id}-*.parquet")):
            m = _PART.match(path.name)
            if m and int(m["part"]) >= len(self._pending):
                path.unlink(missing_ok=True)
        self._pending = []
        return self.files

    def abort(self) -> None:
        self._buffer, self._buffered = [], 0
        for tmp in self._pending:
            tmp.unlink(missing_ok=True)
        self._pending = []


@dataclass
class CompactionResult:
    table: str
    files_before: int
    files_after: int
    rows: int
    removed: list[str] = field(default_factory=list)


class Lake:
    """A lake folder (`$RESERVOIR_DATA_DIR/lake`)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    @classmethod
    def from_env(cls) -> Lake:
        return cls(Path(os.environ.get("RESERVOIR_DATA_DIR", "./data")) / "lake")

    def table_dir(self, table: str) -> Path:
        return self.root / table

    def quarantine_dir(self, table: str) -> Path:
        return self.root / "_quarantine" / table

    def files(self, table: str) -> list[Path]:
        folder = self.table_dir(table)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))

    def quarantine_files(self, table: str) -> list[Path]:
        folder = self.quarantine_dir(table)
        return sorted(folder.glob("*.parquet")) if folder.is_dir() else []

    def writer(
        self,
        table: Table,
        batch_id: str,
        *,
        include_pii: bool = False,
        flush_rows: int = DEFAULT_FLUSH_ROWS,
    ) -> PartWriter:
        return PartWriter(
            self.table_dir(table.name),
            batch_id,
            table.arrow_schema(include_pii),
            flush_rows=flush_rows,
        )

    def quarantine_writer(
        self, table: str, batch_id: str, flush_rows: int = DEFAULT_FLUSH_ROWS
    ) -> PartWriter:
        return PartWriter(
            self.quarantine_dir(table), batch_id, QUARANTINE_SCHEMA, flush_rows=flush_rows
        )

    # -- current state ---------------------------------------------------------------------

    def _current_sql(self, table: str, params: dict[str, Any]) -> str | None:
        """The contract's current-state rule as SQL, or None when the table has no files."""
        spec = TABLES[table]
        files = self.files(table)
        if not files:
            return None
        name = f"files_{table}"
        params[name] = [str(f) for f in files]
        raw = f"read_parquet(${name}, union_by_name = true)"
        key = ", ".join(_quote(k) for k in spec.key)
        if spec.parent is None:
            return f"""(
with ranked as (
    select *, row_number() over (
        partition by {key} order by _batch_id desc, _extracted_at desc) as _row_rank
    from {raw}
),
last_full as (select max(_batch_id) as b from {raw} where _batch_kind = 'full')
select * exclude (_row_rank) from ranked
where _row_rank = 1 and not coalesce(_is_deleted, false)
    and _batch_id >= coalesce((select b from last_full), '')
)"""
        parent_sql = self._current_sql(spec.parent, params)
        if parent_sql is None:
            return None
        join = " and ".join(f"t.{_quote(c)} = p.{_quote(pk)}" for c, pk in spec.parent_key.items())
        return f"""(
with candidates as (
    select t.*, row_number() over (
        partition by {", ".join("t." + _quote(k) for k in spec.key)}
        order by t._extracted_at desc) as _row_rank
    from {raw} as t
    inner join {parent_sql} as p on {join} and t._batch_id = p._batch_id
)
select * exclude (_row_rank) from candidates
where _row_rank = 1 and not coalesce(_is_deleted, false)
)"""

    def _schema(self, table: str) -> pa.Schema:
        files = self.files(table)
        if not files:
            return TABLES[table].arrow_schema()
        return pa.unify_schemas([pq.read_schema(f) for f in files])

    @staticmethod
    def _connect() -> duckdb.DuckDBPyConnection:
        con = duckdb.connect()
        con.execute("set TimeZone = 'UTC'")
        return con

    def current(self, table: str) -> pa.Table:
        """Current rows of a table (latest per key, no tombstones, children of current parents)."""
        params: dict[str, Any] = {}
        sql = self._current_sql(table, params)
        schema = self._schema(table)
        if sql is None:
            return schema.empty_table()
        with self._connect() as con:
            result = con.sql(f"select * from {sql}", params=params).to_arrow_table()
        return result.select(schema.names).cast(schema)

    def current_ids(self, table: str, column: str) -> list[int]:
        """Distinct values of one column of the current state, sorted (for fan-out calls)."""
        params: dict[str, Any] = {}
        sql = self._current_sql(table, params)
        if sql is None:
            return []
        with self._connect() as con:
            rows = con.execute(
                f"select distinct {_quote(column)} from {sql} where {_quote(column)} is not null "
                f"order by 1",
                params,
            ).fetchall()
        return [r[0] for r in rows]

    def duplicate_keys(self, table: str) -> int:
        """Keys with more than one row in their latest batch: the current state is ambiguous."""
        spec = TABLES[table]
        files = self.files(table)
        if not files:
            return 0
        key = ", ".join(_quote(k) for k in spec.key)
        sql = f"""
with raw as (select * from read_parquet($files, union_by_name = true)),
latest as (select {key}, max(_batch_id) as b from raw group by {key})
select count(*) from (
    select {", ".join("r." + _quote(k) for k in spec.key)}
    from raw as r inner join latest as l
        on {" and ".join(f"r.{_quote(k)} = l.{_quote(k)}" for k in spec.key)}
        and r._batch_id = l.b
    group by all having count(*) > 1
)"""
        with self._connect() as con:
            row = con.execute(sql, {"files": [str(f) for f in files]}).fetchone()
        return int(row[0]) if row else 0

    # -- compaction ------------------------------------------------------------------------

    def compact(self, table: str, *, min_files: int = 2) -> CompactionResult:
        """Rewrite the current rows as one file; delete the replaced files after the rename."""
        files = self.files(table)
        self._sweep_tmp(self.table_dir(table))
        if len(files) < min_files:
            return CompactionResult(table, len(files), len(files), 0)
        params: dict[str, Any] = {}
        sql = self._current_sql(table, params)
        schema = pa.unify_schemas([pq.read_schema(f) for f in files])
        batch_id = new_batch_id()
        folder = self.table_dir(table)
        tmp = folder / f"{batch_id}-00000.parquet.tmp"
        final = folder / f"{batch_id}-00000.parquet"
        rows = 0
        with self._connect() as con, pq.ParquetWriter(tmp, schema) as out:
            if sql is not None:
                reader = con.sql(f"select * from {sql}", params=params).to_arrow_reader(100_000)
                for batch in reader:
                    data = pa.Table.from_batches([batch]).select(schema.names).cast(schema)
                    out.write_table(data)
                    rows += data.num_rows
        _replace_atomically(tmp, final)
        for f in files:
            f.unlink(missing_ok=True)
        return CompactionResult(table, len(files), 1, rows, [f.name for f in files])

    @staticmethod
    def _sweep_tmp(folder: Path) -> None:
        if not folder.is_dir():
            return
        cutoff = time.time() - STALE_TMP_SECONDS
        for tmp in folder.glob("*.tmp"):
            if tmp.stat().st_mtime < cutoff:
                tmp.unlink(missing_ok=True)

    # -- state -----------------------------------------------------------------------------

    def write_state(self, name: str, batch_id: str, values: dict[str, Any]) -> Path:
        folder = self.root / "_state" / name
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{batch_id}.parquet"
        tmp = folder / f"{batch_id}.parquet.tmp"
        pq.write_table(pa.Table.from_pylist([values]), tmp)
        _replace_atomically(tmp, final)
        return final

    def read_state(self, name: str) -> dict[str, Any] | None:
        """The newest row of a state (files sort by batch id), or None."""
        folder = self.root / "_state" / name
        files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
        if not files:
            return None
        rows = pq.read_table(files[-1]).to_pylist()
        return rows[-1] if rows else None


def current(table: str, lake: Lake | str | os.PathLike[str] | None = None) -> pa.Table:
    """Current state of a lake table (`Lake.from_env()` when no lake is given)."""
    if lake is None:
        lake = Lake.from_env()
    elif not isinstance(lake, Lake):
        lake = Lake(lake)
    return lake.current(table)


LOCK_FILE = "writer.lock"
DEFAULT_LOCK_TIMEOUT = 600.0


class LakeBusy(RuntimeError):
    """Another writer holds the lake lock for longer than we are willing to wait."""


@contextlib.contextmanager
def writer_lock(lake: Lake, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[Path]:
    """Exclusive lake writer lock (`flock`; released by the OS if the process dies)."""
    folder = lake.root / "_state"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    deadline = time.monotonic() + max(timeout, 0.0)
    with open(path, "a+") as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LakeBusy(
                        f"another run is writing to the lake ({path} is locked); "
                        "try again when it has finished"
                    ) from None
                time.sleep(0.2)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} since {datetime.now(UTC).isoformat()}\n")
            handle.flush()
            yield path
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

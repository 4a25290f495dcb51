"""The append-only Parquet lake: a folder of tables, their writers, the current-state reader and
the run state (`_state/<name>/<batch_id>.parquet`, newest file wins).

Files and batch ids: `lake.parts`; locks: `lake.locks`; compaction: `lake.compaction`; the
current-state rule: `lake.sql.current_state_sql`.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from lake.parts import (
    DEFAULT_FLUSH_ROWS,
    FOLDED,
    PartWriter,
    file_id,
    replace_atomically,
    superseded_by,
    sweep_tmp,
)
from lake.remote import DeltaRemote
from lake.schema import QUARANTINE_SCHEMA, Table
from lake.sql import (
    current_state_sql,
    duplicate_keys_sql,
    narrowed_current_sql,
    quote_ident,
    recent_tombstones_sql,
    twice_in_a_batch_sql,
)
from lake.tables import TABLES

# Rows of a table counted in one pass of `Lake.duplicate_keys` (~100 bytes of DuckDB memory each).
DUPLICATE_PASS_ROWS = 4_000_000

_reader: tuple[int, duckdb.DuckDBPyConnection] | None = None  # (pid, this process's database)
_reader_lock = threading.Lock()


_inherited: list[object] = []


def _forget_reader() -> None:
    """In a forked child: the parent's database and lock are not this process's. The parent's
    database is kept referenced, never closed here: closing it would stop threads this process
    does not have (a crash)."""
    global _reader, _reader_lock
    if _reader is not None:
        _inherited.append(_reader)
    _reader, _reader_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_reader)


def connect() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection in UTC, for reading lake files; the caller closes it.

    A connection (a cursor) of one in-memory database per process: opening a database costs
    ~15 ms of CPU, a cursor ~0.3 ms, and a small run opened ~20. Each cursor has its own
    registered tables, temp tables and settings, as a database of its own had; nothing here
    writes to the shared database's catalog. A forked child opens its own."""
    global _reader
    with _reader_lock:
        if _reader is None or _reader[0] != os.getpid():
            if _reader is not None:
                _inherited.append(_reader)  # another process's (see `_forget_reader`)
            _reader = (os.getpid(), duckdb.connect())
        con = _reader[1].cursor()
    con.execute("set TimeZone = 'UTC'")
    return con


@dataclass
class QuarantineLayout:
    visible: list[Path]  # what readers read
    hidden: list[Path]  # present, but a folded file already holds their rows
    hidden_ids: list[tuple[str, int, int]]


class Lake:
    """A lake folder (`$RESERVOIR_DATA_DIR/lake`); with a `remote`, the local cache of a lake on
    object storage (lake/remote.py), which every commit goes to first."""

    def __init__(self, root: str | os.PathLike[str], remote: DeltaRemote | None = None) -> None:
        self.root = Path(root)
        self.remote = remote

    def pull(self) -> None:
        """Bring the store's tables, quarantine and state into the local folder (no-op without
        a store)."""
        if self.remote is not None:
            self.remote.pull(self.root)

    def _publisher(self, rel: str) -> Callable[[PartWriter], list[Path]] | None:
        remote = self.remote
        if remote is None:
            return None

        def publish(writer: PartWriter) -> list[Path]:
            remote.commit_batch(rel, writer.staged, writer.batch_id, writer.schema)
            return remote.sync(rel, writer.folder)

        return publish

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
        """The quarantine files to read: all but those a folded file already holds."""
        return self.quarantine_layout(table).visible

    def quarantine_tables(self) -> list[str]:
        """Tables with a quarantine folder."""
        folder = self.root / "_quarantine"
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if p.is_dir())

    def quarantine_layout(self, table: str) -> QuarantineLayout:
        folder = self.quarantine_dir(table)
        files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
        # Every folded file counts, a superseded one too: its rows live on in the one that
        # replaced it, so what it replaced stays replaced.
        superseded: set[tuple[str, int, int]] = set()
        for f in files:
            if FOLDED.match(f.name):
                with contextlib.suppress(FileNotFoundError):  # deleted by a compaction
                    superseded |= superseded_by(f)
        layout = QuarantineLayout([], [], [])
        for f in files:
            ident = file_id(f)
            if ident is None:
                continue
            if ident in superseded:
                layout.hidden.append(f)
                layout.hidden_ids.append(ident)
            else:
                layout.visible.append(f)
        return layout

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
            publish=self._publisher(table.name),
        )

    def quarantine_writer(
        self, table: str, batch_id: str, flush_rows: int = DEFAULT_FLUSH_ROWS
    ) -> PartWriter:
        return PartWriter(
            self.quarantine_dir(table),
            batch_id,
            QUARANTINE_SCHEMA,
            flush_rows=flush_rows,
            publish=self._publisher(f"_quarantine/{table}"),
        )

    # -- current state ---------------------------------------------------------------------

    def current_sql(
        self, table: str, params: dict[str, Any], *, before: str | None = None
    ) -> str | None:
        """The current-state rule (`lake.sql.current_state_sql`) over this lake's files, as a
        parenthesised relation; its file lists are added to `params`. None when the table (or,
        for a child, its parent) has no files. `before`: the state as it was before that batch
        (its rows and any later ones left out), e.g. the last good version a run keeps."""
        files = self.files(table)
        if not files:
            return None
        spec = TABLES[table]
        parent = None
        if spec.parent is not None:
            parent = self.current_sql(spec.parent, params, before=before)
            if parent is None:
                return None
        name = f"files_{table}"
        params[name] = [str(f) for f in files]
        raw = f"read_parquet(${name}, union_by_name = true)"
        if before is not None:
            params["before_batch"] = before
            raw = f"(select * from {raw} where _batch_id < $before_batch)"
        return f"({current_state_sql(spec, raw, parent)})"

    def _schema(self, table: str) -> pa.Schema:
        files = self.files(table)
        if not files:
            return TABLES[table].arrow_schema()
        return pa.unify_schemas([pq.read_schema(f) for f in files])

    def current(self, table: str) -> pa.Table:
        """Current rows of a table (latest per key, no tombstones, children of current parents)."""
        params: dict[str, Any] = {}
        sql = self.current_sql(table, params)
        schema = self._schema(table)
        if sql is None:
            return schema.empty_table()
        with connect() as con:
            result = con.sql(f"select * from {sql}", params=params).to_arrow_table()
        return result.select(schema.names).cast(schema)

    def current_where(self, table: str, column: str, values: Sequence[Any]) -> pa.Table:
        """`current(table)` restricted to the rows whose `column` holds one of `values`, at the
        cost of those rows (a few accommodation types' availability, a few journal reports'
        entries). The same rows as filtering `current(table)` when each value has its own
        current rows: `column` is in the table's key, or links a child to its parent's key
        (a parent is narrowed the same way through that link)."""
        spec = TABLES[table]
        if column not in spec.key and column not in spec.parent_key:
            raise ValueError(
                f"internal error: {column!r} is neither in {table!r}'s key nor its parent link"
            )
        params: dict[str, Any] = {}

        def rows(name: str) -> str | None:
            files = self.files(name)
            if not files:
                return None
            params[f"files_{name}"] = [str(f) for f in files]
            return f"read_parquet($files_{name}, union_by_name = true)"

        def matching(columns: tuple[str, ...]) -> str:
            return f"{quote_ident(columns[0])} in (select unnest($only_values))"

        sql = None
        if len(values):
            sql = narrowed_current_sql(
                table,
                (column,),
                matching,
                rows=rows,
                current=lambda name: self.current_sql(name, params),
            )
        schema = self._schema(table)
        if sql is None:
            return schema.empty_table()
        params["only_values"] = list(values)
        with connect() as con:
            result = con.sql(sql, params=params).to_arrow_table()
        return result.select(schema.names).cast(schema)

    def current_ids(self, table: str, column: str) -> list[int]:
        """Distinct values of one column of the current state, sorted (for fan-out calls)."""
        params: dict[str, Any] = {}
        sql = self.current_sql(table, params)
        if sql is None:
            return []
        with connect() as con:
            rows = con.execute(
                f"select distinct {quote_ident(column)} from {sql} where {quote_ident(column)} is not null "
                f"order by 1",
                params,
            ).fetchall()
        return [r[0] for r in rows]

    def recent_tombstones(self, table: str, since: datetime) -> list[tuple[Any, ...]]:
        """Keys of a top-level table deleted (latest row a tombstone) since `since` (UTC)."""
        files = self.files(table)
        if not files:
            return []
        raw = "read_parquet($files, union_by_name = true)"
        with connect() as con:
            return con.execute(
                recent_tombstones_sql(TABLES[table], raw),
                {"files": [str(f) for f in files], "since": since},
            ).fetchall()

    def duplicate_keys(self, table: str, con: duckdb.DuckDBPyConnection | None = None) -> int:
        """Keys with more than one row in their latest batch: the current state is ambiguous.

        `con` (from `connect()`) serves a run's checks of every table: opening DuckDB costs
        more than counting a small table's keys. A table of more than `DUPLICATE_PASS_ROWS` rows
        is counted in passes over shares of its keys (`lake.sql.duplicate_keys_sql`), so the
        memory a pass takes stays that of a few million keys (docs/benchmarks.md, session 12)."""
        spec = TABLES[table]
        files = [str(f) for f in self.files(table)]
        if not files:
            return 0
        with contextlib.nullcontext(con) if con is not None else connect() as reader:
            rows = reader.execute(
                "select count(*) from read_parquet($files, union_by_name = true)",
                {"files": files},
            ).fetchone()
            passes = max(1, -(-int(rows[0] if rows else 0) // DUPLICATE_PASS_ROWS))
            sql = duplicate_keys_sql(list(spec.key), passes)
            twice = twice_in_a_batch_sql(list(spec.key), passes)
            found = 0
            for part in range(passes):
                params: dict[str, Any] = {"files": files}
                if passes > 1:
                    params["part"] = part
                # No key twice in one batch (a healthy lake): the pass counts 0 (~20 % cheaper).
                row = reader.execute(twice, params).fetchone()
                if not (row and row[0]):
                    continue
                row = reader.execute(sql, params).fetchone()
                found += int(row[0]) if row else 0
        return found

    # -- state -----------------------------------------------------------------------------

    def write_state(self, name: str, batch_id: str, values: dict[str, Any]) -> Path:
        folder = self.root / "_state" / name
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{batch_id}.parquet"
        tmp = folder / f"{batch_id}.parquet.tmp"
        pq.write_table(pa.Table.from_pylist([values]), tmp)
        if self.remote is not None:  # the store first: it is the record
            self.remote.commit_state(name, batch_id, values)
        replace_atomically(tmp, final)
        return final

    def prune_state(self, keep: int = 100) -> dict[str, int]:
        """Delete all but the newest `keep` files of each state (cursor, marks, pending...).

        Only the newest file of a state is ever read, but every run appends one, so an event
        sensor starting a run a minute would add ~1,440 files a day per state, and listing them
        (each read, and `next_batch_id` across all states) would slow every run. The newest
        files stay, so the newest batch id of each state, which batch ids must sort after, stays
        too. Returns files removed per state.
        """
        if keep < 1:
            raise ValueError(f"state history must keep at least 1 file per state, not {keep}")
        root = self.root / "_state"
        removed: dict[str, int] = {}
        if not root.is_dir():
            return removed
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            if self.remote is not None:
                self.remote.prune_state(folder.name, keep)
            sweep_tmp(folder)
            files = sorted(folder.glob("*.parquet"))
            for f in files[:-keep]:
                f.unlink(missing_ok=True)
            if len(files) > keep:
                removed[folder.name] = len(files) - keep
        return removed

    def read_state(self, name: str) -> dict[str, Any] | None:
        """The newest row of a state (files sort by batch id), or None. With a store, its
        newest row is fetched first: another process may have moved it (a run in another pod,
        read by the sensors of a long-lived code server)."""
        folder = self.root / "_state" / name
        if self.remote is not None:
            self.remote.sync_state(name, folder)
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

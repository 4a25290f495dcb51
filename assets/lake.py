"""The append-only Parquet lake: batch writers, the current-state reader and compaction.

Layout (docs/contracts.md section 3): `lake/<table>/<batch_id>-<part:05d>.parquet`. Parts are
written as `<name>.parquet.tmp` and renamed only when the whole table batch commits, so a crash
leaves no half file and no half batch (a full batch that is only partly visible would make the
current-state rule drop every key it has not reached yet). Re-executing a run reuses its batch
id: the commit overwrites the same file names and removes any surplus parts of that batch, so the
re-run is idempotent. Compaction writes the current rows (lineage columns untouched, so the
current state is the same) to a new file first and deletes the files it read only afterwards; a
crash in between leaves duplicate rows that the current-state rule already tolerates.

Quarantine (`lake/_quarantine/<table>/`) is evidence, not state: no rule removes duplicate rows
there, so its compaction ("folding") has to make the swap itself atomic. A folded file
`<batch_id>-folded.parquet` holds every row of the files it replaced, sorted by `_extracted_at` and
then `_batch_id`, and names those files (name, size, mtime) in its Parquet footer. Renaming it
into place is the commit: from then on `Lake.quarantine_files` skips every file a folded file names,
so a crash before the old files are deleted never counts a row twice, and the next compaction
deletes those leftovers first.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from assets.schema import QUARANTINE_SCHEMA, TABLES, Table

DEFAULT_FLUSH_ROWS = 50_000
STALE_TMP_SECONDS = 3600  # temp files older than this belong to a crashed writer
_PART = re.compile(r"^(?P<batch>\d{8}T\d{6}Z-[0-9a-f]{8})-(?P<part>\d{5})\.parquet$")
# A quarantine file written by compaction; its footer names the files it replaced.
_FOLDED = re.compile(r"^(?P<batch>\d{8}T\d{6}Z-[0-9a-f]{8})-folded\.parquet$")
SUPERSEDES_KEY = "reservoir.supersedes"


def new_batch_id(at: datetime | None = None, token: str | None = None) -> str:
    """`YYYYMMDDTHHMMSSZ-<8 hex>`: sorts by time, unique per run."""
    at = (at or datetime.now(UTC)).astimezone(UTC)
    token = (token or secrets.token_hex(4))[:8].lower()
    return f"{at:%Y%m%dT%H%M%SZ}-{token}"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _replace_atomically(tmp: Path, final: Path) -> None:
    os.replace(tmp, final)


def _fsync(path: Path) -> None:
    """Flush a file (or a folder's entries) to disk; a no-op where the OS refuses folders."""
    is_dir = path.is_dir()
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if is_dir else 0))
    try:
        os.fsync(fd)
    except OSError:
        if not is_dir:  # some filesystems do not fsync folders; a file must be on disk
            raise
    finally:
        os.close(fd)


def _file_id(path: Path) -> tuple[str, int, int] | None:
    """(name, size, mtime_ns): which version of a file a folded quarantine file replaced.

    Size and mtime make a re-executed run's rewrite of the same name a new file (visible), not
    a leftover of the version that was folded.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (path.name, st.st_size, st.st_mtime_ns)


def _superseded_by(folded: Path) -> set[tuple[str, int, int]]:
    raw = (pq.read_metadata(folded).metadata or {}).get(SUPERSEDES_KEY.encode())
    return {(str(n), int(size), int(mtime)) for n, size, mtime in json.loads(raw or b"[]")}


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


@dataclass
class QuarantineCompactionResult:
    """What folding one table's quarantine did (`folded` False: the files were left alone)."""

    table: str
    files_before: int  # visible files (what readers saw)
    files_after: int
    rows_before: int  # rows readers saw
    rows: int  # rows kept in the folded file
    expired: int = 0  # rows older than the retention, dropped
    replaced: int = 0  # rows of a batch a re-executed run wrote again, dropped
    folded: bool = False
    removed: list[str] = field(default_factory=list)  # files folded and deleted
    leftovers: list[str] = field(default_factory=list)  # superseded files of an earlier crash


@dataclass
class _QuarantineLayout:
    visible: list[Path]  # what readers read
    hidden: list[Path]  # present, but a folded file already holds their rows
    hidden_ids: list[tuple[str, int, int]]


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
        """The quarantine files to read: all but those a folded file already holds."""
        return self._quarantine_layout(table).visible

    def quarantine_tables(self) -> list[str]:
        """Tables with a quarantine folder."""
        folder = self.root / "_quarantine"
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if p.is_dir())

    def _quarantine_layout(self, table: str) -> _QuarantineLayout:
        folder = self.quarantine_dir(table)
        files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
        # Every folded file counts, a superseded one too: its rows live on in the one that
        # replaced it, so what it replaced stays replaced.
        superseded: set[tuple[str, int, int]] = set()
        for f in files:
            if _FOLDED.match(f.name):
                with contextlib.suppress(FileNotFoundError):  # deleted by a compaction
                    superseded |= _superseded_by(f)
        layout = _QuarantineLayout([], [], [])
        for f in files:
            ident = _file_id(f)
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

    def compact_quarantine(
        self,
        table: str,
        *,
        min_files: int = 2,
        retention_days: int | None = None,
        now: datetime | None = None,
    ) -> QuarantineCompactionResult:
        """Fold a table's quarantine files into one, keeping every row (minus expired ones).

        Folds when at least `min_files` files are visible, or when `retention_days` is set and
        some row is older than that. Leftovers of an interrupted fold are deleted first, always.
        The folded file is renamed into place before the files it replaces are deleted; its footer
        names them, so readers skip them from the rename on (see the module docstring).
        """
        if retention_days is not None and retention_days < 1:
            raise ValueError(
                f"quarantine retention must be at least 1 day, got {retention_days}; "
                "leave it unset to keep every quarantined record"
            )
        folder = self.quarantine_dir(table)
        self._sweep_tmp(folder)
        leftovers = self._quarantine_layout(table).hidden
        for f in leftovers:
            f.unlink(missing_ok=True)
        layout = self._quarantine_layout(table)
        files = layout.visible
        rows_before = sum(pq.read_metadata(f).num_rows for f in files)
        result = QuarantineCompactionResult(
            table,
            len(files),
            len(files),
            rows_before,
            rows_before,
            leftovers=[f.name for f in leftovers],
        )
        # A batch with its own file again (a re-executed run rewrote it after a fold): its rows
        # in folded files are the earlier attempt's, which the re-run replaces.
        folded = [str(f) for f in files if _FOLDED.match(f.name)]
        rewritten = sorted({m["batch"] for f in files if (m := _PART.match(f.name))})
        may_drop = retention_days is not None or bool(folded and rewritten)
        if not files or (len(files) < min_files and not may_drop):
            return result
        params: dict[str, Any] = {"files": [str(f) for f in files]}
        stale = "false"
        if folded and rewritten:
            params |= {"folded": folded, "rewritten": rewritten}
            stale = "list_contains($folded, filename) and list_contains($rewritten, _batch_id)"
        expired = "false"
        if retention_days is not None:
            now = (now or datetime.now(UTC)).astimezone(UTC)
            params["cutoff"] = now - timedelta(days=retention_days)
            expired = "coalesce(_extracted_at < $cutoff, false)"
        source = "read_parquet($files, filename = true, file_row_number = true)"
        with self._connect() as con:
            ((replaced_rows, expired_rows),) = con.execute(
                f"select count(*) filter (where {stale}), "
                f"count(*) filter (where not ({stale}) and {expired}) from {source}",
                params,
            ).fetchall()  # all: the next query needs the connection free
            result.replaced, result.expired = int(replaced_rows), int(expired_rows)
            if len(files) < min_files and not (result.expired or result.replaced):
                return result
            batch_id = new_batch_id()
            tmp = folder / f"{batch_id}-folded.parquet.tmp"
            final = folder / f"{batch_id}-folded.parquet"
            replaced = [i for f in files if (i := _file_id(f)) is not None] + layout.hidden_ids
            columns = ", ".join(_quote(n) for n in QUARANTINE_SCHEMA.names)
            reader = con.sql(
                f"select {columns} from {source} where not ({stale}) and not ({expired}) "
                "order by _extracted_at nulls last, _batch_id nulls last, filename, "
                "file_row_number",
                params=params,
            ).to_arrow_reader(100_000)
            rows = 0
            try:
                with pq.ParquetWriter(tmp, QUARANTINE_SCHEMA) as out:
                    for batch in reader:
                        data = pa.Table.from_batches([batch]).cast(QUARANTINE_SCHEMA)
                        out.write_table(data)
                        rows += data.num_rows
                    out.add_key_value_metadata({SUPERSEDES_KEY: json.dumps(sorted(replaced))})
                _fsync(tmp)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        _replace_atomically(tmp, final)  # the commit: from here on readers skip `replaced`
        _fsync(folder)
        for f in files:
            f.unlink(missing_ok=True)
        for name, _, _ in layout.hidden_ids:
            (folder / name).unlink(missing_ok=True)
        result.rows, result.folded, result.files_after = rows, True, 1
        result.removed = [f.name for f in files]
        return result

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
            self._sweep_tmp(folder)
            files = sorted(folder.glob("*.parquet"))
            for f in files[:-keep]:
                f.unlink(missing_ok=True)
            if len(files) > keep:
                removed[folder.name] = len(files) - keep
        return removed

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
COMPACTION_LOCK_FILE = "compaction.lock"
DEFAULT_LOCK_TIMEOUT = 600.0


class LakeBusy(RuntimeError):
    """Another writer holds the lake lock for longer than we are willing to wait."""


@contextlib.contextmanager
def writer_lock(lake: Lake, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[Path]:
    """Exclusive lake writer lock (`flock`; released by the OS if the process dies)."""
    with _flocked(
        lake,
        LOCK_FILE,
        fcntl.LOCK_EX,
        timeout,
        "another run is writing to the lake ({path} is locked); try again when it has finished",
    ) as path:
        yield path


@contextlib.contextmanager
def compaction_lock(
    lake: Lake, *, shared: bool, timeout: float | None = None
) -> Iterator[Path | None]:
    """Keeps compaction and readers that list the lake's files apart.

    A reader that lists a table's files and reads them later (the warehouse build: its views name
    the files, and a build takes seconds to a minute) holds it shared; compaction, which deletes
    the files it has replaced, holds it exclusively. Writers need not take it: they only add
    files, and they already exclude compaction through the writer lock. A lake that does not exist
    yet has nothing to compact: no lock, and no folder is made for one.
    """
    if not shared:
        lake.root.mkdir(parents=True, exist_ok=True)
    elif not lake.root.is_dir():
        yield None
        return
    message = (
        "the lake is being compacted ({path} is locked); the warehouse build waits for it - "
        "try again when the compaction has finished"
        if shared
        else "a warehouse build is reading the lake ({path} is locked); try the compaction again "
        "when it has finished"
    )
    with _flocked(
        lake,
        COMPACTION_LOCK_FILE,
        fcntl.LOCK_SH if shared else fcntl.LOCK_EX,
        DEFAULT_LOCK_TIMEOUT if timeout is None else timeout,
        message,
        stamp=not shared,
    ) as path:
        yield path


@contextlib.contextmanager
def _flocked(
    lake: Lake, name: str, mode: int, timeout: float, busy: str, *, stamp: bool = True
) -> Iterator[Path]:
    """`flock` on `_state/<name>` in `mode`, waiting up to `timeout` s, else `LakeBusy(busy)`."""
    folder = lake.root / "_state"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    deadline = time.monotonic() + max(timeout, 0.0)
    with open(path, "a+") as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LakeBusy(busy.format(path=path)) from None
                time.sleep(0.2)
        try:
            if stamp:  # who holds it, for a person looking at a stuck lock
                handle.seek(0)
                handle.truncate()
                handle.write(f"pid {os.getpid()} since {datetime.now(UTC).isoformat()}\n")
                handle.flush()
            yield path
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

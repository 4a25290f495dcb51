"""Expose the Parquet lake to the models as two read-only catalogs of views.

`lake.<table>` holds every row ever extracted (typed per `lake_schema`), `lake_current.<table>`
the current state per the contract's rule. Both live in in-memory catalogs attached to the build
connection, so the published warehouse never depends on lake paths.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from lake.parts import PART, file_id
from lake.sql import current_state_sql, quote_ident, quote_literal
from lake.sql import narrowed_current_sql as narrowed_current_sql_over
from lake.tables import TABLES as LAKE_TABLES
from warehouse.lake_schema import TABLES

LAKE_CATALOG = "lake"
CURRENT_CATALOG = "lake_current"
FileKey = tuple[str, str, int, int]  # (table, file name, size, mtime_ns): `meta.lake_files`' row
Schema = tuple[str, ...] | None


# a refresh's one look at the lake (`lake_snapshot`): each table's files and each file's version
_SNAPSHOT: ContextVar[dict[object, object] | None] = ContextVar("lake_snapshot", default=None)


@contextmanager
def lake_snapshot() -> Iterator[None]:
    """Within it, each table's files are listed and each file's version (`file_id`) read once:
    a refresh asked the folders ~110 times and `stat` ~1,900 times for a large lake's ~500 files
    (its changes, its views, its record of what it read: ~0.06 CPU s, docs/benchmarks.md, session
    21). The caller holds the lake still meanwhile (the compaction lock; a refresh also the
    writer lock), and every step then sees the same files: the record of what the refresh read
    names no file that landed after its changes were read."""
    token = _SNAPSHOT.set({})
    try:
        yield
    finally:
        _SNAPSHOT.reset(token)


def table_files(lake_dir: Path, table: str) -> list[Path]:
    """Committed Parquet files of a table (temp files start with a dot or lack the suffix), in
    name order."""
    seen = _SNAPSHOT.get()
    key = ("files", lake_dir, table)
    if seen is not None and key in seen:
        return list(seen[key])  # type: ignore[call-overload]
    folder = lake_dir / table
    files = (
        sorted(
            (p for p in folder.glob("*.parquet") if not p.name.startswith(".")),
            key=lambda p: p.name,  # one folder: the names' order is the paths' (and cheaper)
        )
        if folder.is_dir()
        else []
    )
    if seen is not None:
        seen[key] = tuple(files)
    return files


def lake_file_id(path: Path) -> tuple[str, int, int] | None:
    """`lake.parts.file_id` (name, size, mtime_ns), read once per file in a `lake_snapshot`."""
    seen = _SNAPSHOT.get()
    if seen is None:
        return file_id(path)
    key = ("id", path)
    if key not in seen:
        seen[key] = file_id(path)
    return seen[key]  # type: ignore[return-value]


@lru_cache(maxsize=4096)
def _footer_schema(path: str, size: int, mtime_ns: int) -> tuple[str, ...]:
    """A file's columns as `name type`, from its footer: once per version of a file."""
    return tuple(f"{field.name} {field.type}" for field in pq.read_schema(path))


def file_schema(table: str, path: Path, recorded: Mapping[FileKey, tuple[str, ...]]) -> Schema:
    """The columns of one of `table`'s files as `name type`: as `recorded` (the published file's
    `meta.lake_file_columns`) has them, else from its footer; None for a file gone."""
    ident = lake_file_id(path)
    if ident is None:
        return None
    return recorded.get((table, *ident)) or _footer_schema(str(path), ident[1], ident[2])


def _names(schema: tuple[str, ...]) -> set[str]:
    """The column names of a file's `name type` columns (`file_schema`)."""
    return {column.split(" ", 1)[0] for column in schema}


def _present_columns(
    table: str, files: list[Path], recorded: Mapping[FileKey, tuple[str, ...]]
) -> set[str]:
    """The columns any of the files has (`file_schema`: as `recorded`, else from its footer),
    read until every column of the table is found (a lake file is written with every column of
    its table: usually the first)."""
    wanted = set(TABLES[table].all_columns)
    names: set[str] = set()
    for f in files:
        names |= _names(file_schema(table, f, recorded) or ())
        if wanted <= names:
            break
    return names


def raw_view_sql(
    table: str, files: list[Path], recorded: Mapping[FileKey, tuple[str, ...]] | None = None
) -> str:
    """A typed select over the table's files; missing columns become typed nulls. With
    `recorded` (the columns of the files a refresh read before), files that all have the same
    columns (names and types) are read with `union_by_name = false`: the scan binds from one
    footer where a union by name opens every file's each time a statement binds the view
    (docs/benchmarks.md, session 18); a file with other columns keeps the union by name."""
    spec = TABLES[table]
    schemas = {file_schema(table, f, recorded) for f in files} if recorded is not None else set()
    if len(schemas) == 1 and (schema := schemas.pop()) is not None:
        present, union = _names(schema), "false"
    else:
        present, union = _present_columns(table, files, recorded or {}), "true"
    cols = []
    for name, typ in spec.all_columns.items():
        src = quote_ident(name) if name in present else "null"
        cols.append(f"cast({src} as {typ}) as {quote_ident(name)}")
    select = ",\n    ".join(cols)
    if not files:
        return f"select\n    {select}\nwhere false"
    paths = ", ".join(quote_literal(str(f)) for f in files)
    return f"select\n    {select}\nfrom read_parquet([{paths}], union_by_name = {union})"


def rows_since(table: str, batch: str | None) -> str | None:
    """The `lake.<table>` view's rows in only the files that may hold rows of batch `batch` or
    a later one, within the `lake_snapshot` that attached the view; None when every file may
    (or the view's files are not at hand). A batch's rows are in the files named after it, or
    in a compaction's file, named after a batch id the compaction took later (batch ids sort
    by time: the current-state rule ranks by them); a file not named after a batch may hold
    any. The filter on the batch stays the caller's: this only leaves out files without such
    rows, which the scan would open to skip by their statistics (~0.2 ms a file: the hour's
    bill lines 253 files, 0.05 CPU s, for the newest batch's one, docs/benchmarks.md session
    24)."""
    seen = _SNAPSHOT.get()
    found = seen.get(("viewed", table)) if seen is not None and batch is not None else None
    if found is None or batch is None:
        return None
    files, recorded = found  # type: ignore[misc]
    since = batch[:16]  # the batch id's time, to the second (two ids of one second: either)
    kept = [f for f in files if (m := PART.match(f.name)) is None or m.group("batch")[:16] >= since]
    if len(kept) == len(files):
        return None
    return f"({raw_view_sql(table, kept, recorded)})"


def current_view_sql(table: str) -> str:
    """The current-state view of one table: the lake's one rule over the `lake` catalog."""
    spec = LAKE_TABLES[table]
    raw = f"{LAKE_CATALOG}.{quote_ident(table)}"
    parent = None if spec.parent is None else f"{CURRENT_CATALOG}.{quote_ident(spec.parent)}"
    return current_state_sql(spec, raw, parent)


def narrowed_current_sql(
    table: str,
    columns: tuple[str, ...],
    match: Callable[[tuple[str, ...]], str],
    known: Callable[[str, tuple[str, ...]], str | None] | None = None,
    narrowed_rows: Callable[[str], str | None] | None = None,
) -> str:
    """`lake.sql.narrowed_current_sql` over the `lake` catalog: the current state of the rows of
    `table` whose `columns` pass `match(columns)`, a parent without those columns read whole
    from `lake_current`; `known` names the narrowed states already at hand, `narrowed_rows`
    a table's rows for `match` already read."""
    sql = narrowed_current_sql_over(
        table,
        columns,
        match,
        rows=lambda name: f"{LAKE_CATALOG}.{quote_ident(name)}",
        current=lambda name: f"{CURRENT_CATALOG}.{quote_ident(name)}",
        known=known,
        narrowed_rows=narrowed_rows,
    )
    assert sql is not None  # every table has its view
    return sql


def with_parents(tables: set[str]) -> set[str]:
    """The tables with the parents their current state follows."""
    out: set[str] = set()
    for table in tables:
        found: str | None = table
        while found is not None and found not in out:
            out.add(found)
            found = LAKE_TABLES[found].parent
    return out


def _ordered_tables() -> list[str]:
    """Parents before children, so current child views can reference current parents."""
    return sorted(TABLES, key=lambda t: (TABLES[t].parent is not None, t))


def attach_lake(
    con: duckdb.DuckDBPyConnection,
    lake_dir: Path,
    tables: set[str] | None = None,
    recorded: Mapping[FileKey, tuple[str, ...]] | None = None,
    deferred: set[str] | None = None,
) -> dict[str, int]:
    """Create the `lake` and `lake_current` catalogs; return the file count per table.
    `tables`: the views to create (with their parents'), default every table's: a refresh
    names those its changed models read (each view costs ~4 ms, reading its files' footers).
    `recorded`: the columns of the files read before (`raw_view_sql`). `deferred`: the
    `lake_current` views are not created but added to it, for `CurrentOnDemand`."""
    con.execute(f"attach ':memory:' as {LAKE_CATALOG}")
    con.execute(f"attach ':memory:' as {CURRENT_CATALOG}")
    wanted = set(TABLES) if tables is None else with_parents(tables)
    counts: dict[str, int] = {}
    for table in _ordered_tables():
        files = table_files(lake_dir, table)
        counts[table] = len(files)
        if table not in wanted:
            continue
        name = quote_ident(table)
        con.execute(f"create view {LAKE_CATALOG}.{name} as {raw_view_sql(table, files, recorded)}")
        seen = _SNAPSHOT.get()
        if seen is not None:  # the files of its view, for `rows_since`
            seen[("viewed", table)] = (tuple(files), recorded)
        if deferred is not None:
            deferred.add(table)
            continue
        con.execute(f"create view {CURRENT_CATALOG}.{name} as {current_view_sql(table)}")
    return counts


# a `lake_current` view named in a statement (as the models name it, or quoted)
_CURRENT_NAMED = re.compile(rf'\b{CURRENT_CATALOG}\.(?:"([a-z_][a-z0-9_]*)"|([a-z_][a-z0-9_]*)\b)')


class CurrentOnDemand:
    """A refresh's connection that creates each deferred `lake_current` view (`attach_lake`)
    just before the first statement naming it, with the views it names first (a child's current
    state reads its parent's). An hour's refresh created 16 current views and read 6: the
    others' models read their lake rows narrowed to the affected keys (`narrowed_current_sql`),
    and a view's creation binds its query (~2-4 ms of CPU each; docs/benchmarks.md, session 22).
    The transaction writes the warehouse's file, and one transaction writes one database: such
    a view is a temp view (`_lake_current_<table>`), and the statements naming
    `lake_current.<table>` name it instead. Everything else is the connection's own."""

    def __init__(self, con: duckdb.DuckDBPyConnection, deferred: set[str]) -> None:
        self._con = con
        self._deferred = deferred
        self._created: set[str] = set()

    def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
        if self._deferred or self._created:
            sql = self._named(sql)
        return self._con.execute(sql, *args)

    def _named(self, sql: str) -> str:
        """`sql` naming the temp views of the current views it names, created first."""

        def swap(found: re.Match[str]) -> str:
            table = found.group(1) or found.group(2)
            if table in self._deferred:
                self._deferred.discard(table)
                view = self._named(current_view_sql(table))
                self._con.execute(f"create temp view {_temp_view(table)} as {view}")
                self._created.add(table)
            return _temp_view(table) if table in self._created else found.group(0)

        return _CURRENT_NAMED.sub(swap, sql)

    def __getattr__(self, name: str) -> object:
        return getattr(self._con, name)


def _temp_view(table: str) -> str:
    return f"temp.main.{quote_ident(f'_lake_current_{table}')}"


def detach_lake(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"detach {CURRENT_CATALOG}")
    con.execute(f"detach {LAKE_CATALOG}")

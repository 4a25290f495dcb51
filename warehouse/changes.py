"""What changed since the last build: the lake files a refresh reads anew, and the version of
each model's SQL (`warehouse.maintain` decides from them how to bring each model up to date).

The published file records which lake files it was built from (`meta.lake_files`: name, size,
mtime; `meta.lake_file_columns` adds each file's columns, so a refresh's views read only its new
files' footers) and which version of each model's SQL built each table (`meta.model_versions`).
A lake table's **changed rows** are the rows of its new or rewritten files that belong to the
batch the file is named after (a compaction's file holds older batches' rows, the same current
state: no change); a full batch among them changes the table whole (keys absent from it vanish).
`delta_readers` names the models whose readers map their rows to keys of their own.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import duckdb

from lake.parts import PART
from lake.sql import quote_ident, quote_literal
from warehouse import macros
from warehouse.headers import without_storage_order
from warehouse.lake import (
    FileKey,
    file_schema,
    lake_file_id,
    raw_view_sql,
    table_files,
    with_parents,
)
from warehouse.lake_schema import TABLES
from warehouse.macros import macros_called
from warehouse.models import Model

LAKE_FILES_TABLE = "meta.lake_files"
LAKE_COLUMNS_TABLE = "meta.lake_file_columns"
VERSIONS_TABLE = "meta.model_versions"
FULL = "full"  # an input's state: changed whole (no keys known)
SETTINGS_INPUT = "meta.build_settings"  # the build settings (the as-of date), read by models
# a lake table named anywhere in a model's text, its headers included
_LAKE_NAMED = re.compile(r"\blake(?:_current)?\.([a-z_][a-z0-9_]*)")


def model_version(model: Model) -> str:
    """What the table was built with: the model's SQL and the macros it calls, directly or
    through another macro (a change to any other macro leaves its version as it was). The SQL's
    `-- incremental stored as built` or `stored by` line is left out: it says in which order a
    whole build stores the rows, not what they are, so declaring or dropping it rebuilds
    nothing."""
    return _version(without_storage_order(model.sql), macros.MACROS)


@cache
def _version(sql: str, texts: tuple[str, ...]) -> str:
    """Once per text and macros' `texts` in a process: finding the macros a model calls runs a
    pattern per macro over its SQL (~0.6 ms a model; a refresh asks three times per model)."""
    text = "\n".join((sql, *macros_called(sql)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record_build(
    con: duckdb.DuckDBPyConnection,
    lake_dir: Path,
    built: list[Model],
    recorded: Mapping[FileKey, tuple[str, ...]] | None = None,
) -> None:
    """Write the lake files this build read with their columns (`recorded` has those of the
    files read before; the others' footers are read), and the version of each model it
    rebuilt."""
    con.execute(
        f"create table if not exists {LAKE_FILES_TABLE} "
        "(lake_table varchar, file_name varchar, size bigint, mtime_ns bigint)"
    )
    # the columns in a table of their own, so that older code still refreshes the file (its
    # rows are keyed by the file's version: a row older code left behind names no other file)
    con.execute(
        f"create table if not exists {LAKE_COLUMNS_TABLE} (lake_table varchar, "
        "file_name varchar, size bigint, mtime_ns bigint, file_columns varchar[])"
    )
    rows = [
        (table, *ident, tuple(schema))
        for table in TABLES
        for f in table_files(lake_dir, table)
        if (ident := lake_file_id(f)) is not None
        and (schema := file_schema(table, f, recorded or {})) is not None
    ]
    files = [row[:4] for row in rows]
    if recorded is None:  # a build: both records written whole
        con.execute(f"delete from {LAKE_FILES_TABLE}")
        con.execute(f"delete from {LAKE_COLUMNS_TABLE}")
        _insert_files(con, LAKE_FILES_TABLE, files)
        _insert_files(con, LAKE_COLUMNS_TABLE, rows)
    else:
        # a refresh: the rows of the files gone deleted, those of the new files inserted (an
        # hour lands ~15 of a large lake's ~1,900 files: writing every row again was ~0.03 CPU s
        # and a row group of the commit's each time)
        stored = con.execute(
            f"select lake_table, file_name, size, mtime_ns from {LAKE_FILES_TABLE}"
        ).fetchall()
        _replace_files(con, LAKE_FILES_TABLE, stored, files)
        _replace_files(con, LAKE_COLUMNS_TABLE, [(*k, tuple(c)) for k, c in recorded.items()], rows)
    con.execute(f"create table if not exists {VERSIONS_TABLE} (model varchar, version varchar)")
    names = [m.qualified for m in built]
    con.execute(f"delete from {VERSIONS_TABLE} where list_contains($1, model)", [names])
    if built:
        con.execute(
            f"insert into {VERSIONS_TABLE} select unnest($1::varchar[]), unnest($2::varchar[])",
            [names, [model_version(m) for m in built]],
        )


def _insert_files(
    con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[object, ...]]
) -> None:
    """Rows of `meta.lake_files` (four columns) or `meta.lake_file_columns` (five) inserted in
    one statement of lists (`executemany` is a statement per row: ~0.2 CPU s for a large lake's
    ~500 files, docs/benchmarks.md session 14)."""
    if not rows:
        return
    columns = [list(column) for column in zip(*rows, strict=True)]
    if len(columns) == 5:
        columns[4] = [list(c) for c in columns[4]]
    kinds = ["varchar[]", "varchar[]", "bigint[]", "bigint[]", "varchar[][]"][: len(columns)]
    listed = ", ".join(f"unnest(${i}::{kind})" for i, kind in enumerate(kinds, 1))
    con.execute(f"insert into {table} select {listed}", columns)


def _replace_files(
    con: duckdb.DuckDBPyConnection,
    table: str,
    stored: list[tuple[object, ...]],
    rows: list[tuple[object, ...]],
) -> None:
    """Bring a record of lake files (`stored`: its rows) to `rows`: the rows not among `rows`
    deleted (by the file's version: table, name, size, mtime), those not stored inserted. A
    record holding a row twice is written whole again."""
    kept = set(stored)
    if len(kept) != len(stored):
        con.execute(f"delete from {table}")
        _insert_files(con, table, rows)
        return
    wanted = set(rows)
    gone = [row[:4] for row in stored if row not in wanted]
    if gone:
        listed = [list(column) for column in zip(*gone, strict=True)]
        con.execute(
            f"delete from {table} as f where exists (select 1 from (select "
            "unnest($1::varchar[]) as t, unnest($2::varchar[]) as n, unnest($3::bigint[]) as s, "
            "unnest($4::bigint[]) as m) as g where g.t = f.lake_table and g.n = f.file_name "
            "and g.s = f.size and g.m = f.mtime_ns)",
            listed,
        )
    _insert_files(con, table, [row for row in rows if row not in kept])


def recorded_columns(con: duckdb.DuckDBPyConnection) -> dict[FileKey, tuple[str, ...]]:
    """The columns (`name type`) of each lake file the published file recorded, by the file's
    version (`meta.lake_file_columns`); none for a file recorded before they were."""
    try:
        rows = con.execute(
            f"select lake_table, file_name, size, mtime_ns, file_columns from {LAKE_COLUMNS_TABLE}"
        ).fetchall()
    except duckdb.CatalogException:
        return {}
    return {(t, n, size, mtime): tuple(columns) for t, n, size, mtime, columns in rows}


def forget_lake_files(con: duckdb.DuckDBPyConnection) -> None:
    """After a partial build (`only=`): no record, so the next refresh rebuilds whole."""
    con.execute(f"drop table if exists {LAKE_FILES_TABLE}")
    con.execute(f"drop table if exists {LAKE_COLUMNS_TABLE}")


def built_versions(con: duckdb.DuckDBPyConnection) -> dict[str, str] | None:
    """Model -> version of the file's tables; None for a file built before versions existed."""
    try:
        return dict(con.execute(f"select model, version from {VERSIONS_TABLE}").fetchall())
    except duckdb.CatalogException:
        return None


def lake_changes(con: duckdb.DuckDBPyConnection, lake_dir: Path) -> dict[str, str] | None:
    """Per lake table that changed since the recorded build: FULL, or a temp view of its
    changed rows. None when the file records no lake files (a whole rebuild is needed)."""
    try:
        recorded = con.execute(
            f"select lake_table, file_name, size, mtime_ns from {LAKE_FILES_TABLE}"
        )
        known = {(t, (n, s, m)) for t, n, s, m in recorded.fetchall()}
    except duckdb.CatalogException:
        return None
    # the names recorded per table: a pass over the record per table, and over a table's new
    # files per recorded name, was ~0.04 CPU s of Python for a large lake's ~1,900 files
    named_before: dict[str, set[str]] = {}
    for t, (n, _, _) in known:
        named_before.setdefault(t, set()).add(n)
    changes: dict[str, str] = {}
    for table in TABLES:
        files = table_files(lake_dir, table)
        fresh = [f for f in files if (table, lake_file_id(f)) not in known]
        names = {f.name for f in files}
        fresh_names = {f.name for f in fresh}
        if any(n not in names or n in fresh_names for n in named_before.get(table, ())):
            # A file read before is gone (compaction folded it: the rows of every version but
            # the current one went with it, which `lake.<table>` readers see) or was rewritten
            # (a re-executed run: the keys only its first version held are unknown).
            changes[table] = FULL
            continue
        if not fresh:
            continue
        named = [f for f in fresh if PART.match(f.name)]
        # A file not named after its batch (a data file of the object store's table format,
        # cached by `lake.remote`) counts with every row it holds: a superset of the change
        unnamed = [f for f in fresh if not PART.match(f.name)]
        parts = []
        if named:
            batches = sorted({m.group("batch") for f in named if (m := PART.match(f.name))})
            listed = ", ".join(quote_literal(b) for b in batches)
            parts.append(
                f"select * from ({raw_view_sql(table, named)}) where _batch_id in ({listed})"
            )
        if unnamed:
            parts.append(f"select * from ({raw_view_sql(table, unnamed)})")
        view = f"_changed_lake_{table}"
        con.execute(
            f"create or replace temp view {quote_ident(view)} as "
            + " union all by name ".join(parts)
        )
        changes[table] = view
    # a full batch among a table's changed rows changes it whole: every view asked at once
    # (a statement's own cost is ~1 ms: an hour changes 13 tables)
    viewed = [t for t, state in changes.items() if state != FULL]
    if viewed:
        full = dict(
            con.execute(
                " union all ".join(
                    f"select {i} as i, count(*) as n from {quote_ident(changes[t])} "
                    "where _batch_kind = 'full'"
                    for i, t in enumerate(viewed)
                )
            ).fetchall()
        )
        for i, table in enumerate(viewed):
            if full[i]:
                changes[table] = FULL
    return changes


def lake_inputs(model: Model) -> set[str]:
    """The lake tables a model reads, with the parents their current state follows."""
    return with_parents(set(model.lake_tables))


def lake_tables_read(
    models: dict[str, Model],
    changes: dict[str, str],
    versions: dict[str, str],
    existing: set[str],
    *,
    settings_changed: bool,
) -> set[str]:
    """The lake tables a refresh may read (with their parents): those of every model it may
    maintain, i.e. missing, of another version, or with an input that may have changed (a
    changed lake table, the settings when they may have changed, a model it may maintain).
    Its headers count too (a `from lake.<table>:` source). Only these get their views."""
    touched: set[str] = set()
    tables: set[str] = set()
    for q, model in models.items():  # in dependency order
        if (
            q not in existing
            or versions.get(q) != model_version(model)
            or not lake_inputs(model).isdisjoint(changes)
            or not model.deps.isdisjoint(touched)
            or (settings_changed and SETTINGS_INPUT in model.sql)
        ):
            touched.add(q)
            tables |= set(model.lake_tables) | set(_LAKE_NAMED.findall(model.sql))
    return with_parents(tables & set(TABLES))


# a reader that names a lineage column (copies a batch id) must see a row whose batch alone changed
_LINEAGE_REF = re.compile(r"\b(?:batch_id|batch_kind|extracted_at)\b")


def delta_readers(models: dict[str, Model]) -> dict[str, tuple[bool, tuple[Model, ...]]]:
    """The models some reader maps to its key by an expression of its own (`from <model>:`): a
    whole rebuild of these reports its changed rows (a diff) rather than a fingerprint. The
    value: whether the diff may leave the lineage columns out (no reader of the model carries
    one; a reader that copies a batch id must see a row whose batch alone changed), and the
    readers that name it."""
    named: dict[str, list[Model]] = {}
    for m in models.values():
        for source, _ in m.incremental.sources if m.incremental is not None else ():
            if source in models:
                named.setdefault(source, []).append(m)
    return {
        q: (
            not any(q in m.deps and _LINEAGE_REF.search(m.sql) for m in models.values()),
            tuple(readers),
        )
        for q, readers in named.items()
    }


def keyed_sources(models: dict[str, Model]) -> set[str]:
    """The models whose changed rows some reader takes by key: a reader maintained by key
    with a key expression over the model, or a model of sums over it. A model outside this
    set that is maintained by key hands its readers FULL, without copying its old rows out
    before the delete: each of its readers is rebuilt whole on its change (or maps it by its
    `when ... changed whole` query) and would only learn from the changed rows that none
    changed (docs/benchmarks.md, session 14: marts.sales_daily's copy, 0.23 CPU s of 4.9
    million rows, served forecast_daily, rebuilt whole every hour in 0.1)."""
    out: set[str] = set()
    for reader in models.values():
        inc, sums = reader.incremental, reader.sums
        for dep in reader.deps:
            if (inc is not None and inc.expression(dep) is not None) or (
                sums is not None and sums.source == dep
            ):
                out.add(dep)
    return out


def handed_keys(models: dict[str, Model]) -> set[str]:
    """The models that hand their readers the affected keys as their changed rows (`--
    incremental changes every affected key`, `warehouse.headers`). Each reader must take such
    a model by its key columns alone: a reader maintained by key whose expression over it is
    another one, or a model of sums over it (which needs the rows removed and added), is an
    error in the models."""
    handed = {
        q
        for q, m in models.items()
        if m.incremental is not None and m.incremental.every_key_changes
    }
    for reader in models.values():
        inc, sums = reader.incremental, reader.sums
        for dep in sorted(reader.deps & handed):
            keys = models[dep].incremental.keys  # type: ignore[union-attr]
            expr = inc.expression(dep) if inc is not None else None
            if (sums is not None and sums.source == dep) or (
                expr is not None and tuple(c.strip() for c in expr.split(",")) != keys
            ):
                raise ValueError(
                    f"{reader.qualified} reads {dep} by other than its key "
                    f"({', '.join(keys)}): {dep} hands its readers the affected keys only "
                    "(`-- incremental changes every affected key`)"
                )
    return handed

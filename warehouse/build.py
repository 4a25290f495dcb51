"""Build the DuckDB warehouse from the Parquet lake and publish it atomically.

The build writes `warehouse.duckdb.building-<id>` next to `warehouse.duckdb` and renames it over
the old file only when every model is built and the file is checkpointed, so readers holding the
old file keep a consistent old version and nobody sees half-built marts (contracts.md section 4).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from lake.locks import compaction_lock
from lake.sql import quote_ident, quote_literal
from lake.store import Lake
from lake.tenancy import DEFAULT_TENANT, tenant_of
from warehouse import asof
from warehouse.catalog import column_docs
from warehouse.changes import forget_lake_files, record_build
from warehouse.columns import table_columns
from warehouse.lake import FileKey, attach_lake, detach_lake
from warehouse.macros import KPI_WINDOW, MACROS
from warehouse.models import LAYERS, Model, discover_models, downstream, resolve, upstream
from warehouse.refused import write_refused_areas
from warehouse.schedule import build_models

WAREHOUSE_FILE = "warehouse.duckdb"
LAKE_DIR = "lake"
# DuckDB takes up to 80 % of RAM by default; a build is bounded instead and spills to disk
# beyond this, next to the file it builds. 2.5 GB keeps the building process (DuckDB's buffers
# plus Python and the run) under 3 GB at large scale at no measured CPU cost (docs/benchmarks.md).
DEFAULT_MEMORY_LIMIT = "2.5GB"
SPILL_DIR = ".warehouse-spill"
SCHEMAS: tuple[str, ...] = (*LAYERS, "meta")
SETTINGS_TABLE = "meta.build_settings"


@dataclass(frozen=True)
class ModelResult:
    """What one model produced: rows, columns (name, DuckDB type) and build seconds."""

    name: str
    row_count: int
    seconds: float
    columns: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class BuildResult:
    """Outcome of a build: the published file and what each rebuilt model produced."""

    path: Path
    build_id: str
    as_of: date | None  # None only for a lake without data or run state
    seconds: float
    models: dict[str, ModelResult] = field(default_factory=dict)
    lake_files: dict[str, int] = field(default_factory=dict)
    # how each model was refreshed in place (`keys`: delete+insert of the affected keys,
    # `whole`: rebuilt); empty for a build into a new file
    refreshed: dict[str, str] = field(default_factory=dict)

    @property
    def row_counts(self) -> dict[str, int]:
        return {q: r.row_count for q, r in self.models.items()}


def warehouse_path(data_dir: Path) -> Path:
    return Path(data_dir) / WAREHOUSE_FILE


def new_build_id() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def build_warehouse(
    data_dir: Path,
    *,
    only: set[str] | None = None,
    as_of: date | None = None,
    reporting_range: tuple[date, date] | None = None,
) -> BuildResult:
    """Build all models (or `only` these, on a copy of the current file) and publish.

    `only` takes model names (`occupancy_daily` or `marts.occupancy_daily`); see
    `warehouse.models.models_depending_on` to turn changed lake tables into that set. Models
    that `only` needs but the current file lacks are built too, and so are the models that
    read `meta.build_settings` when the as-of date moved. `as_of` overrides the as-of date
    (booking pace; default: the service's date the lake's newest run recorded, see
    `warehouse.asof`); `reporting_range` (first night, last night) overrides the range derived
    from reservations.
    """
    started = time.perf_counter()
    data_dir = Path(data_dir)
    target = warehouse_path(data_dir)
    build_id = new_build_id()
    building = data_dir / f"{WAREHOUSE_FILE}.building-{build_id}"
    models = discover_models()
    incremental = only is not None and target.exists()
    if incremental:
        copy_published(target, building)

    results: dict[str, ModelResult] = {}
    # Compaction deletes lake files that the views below name: it waits while this build reads.
    with compaction_lock(Lake(data_dir / LAKE_DIR), shared=True):
        con = duckdb.connect(str(building))
        try:
            lake_files = prepare(con, data_dir)
            dated = resolve_as_of(con, data_dir, as_of)
            as_of = dated.as_of
            moved = incremental and _previous_as_of(con) != as_of
            write_settings(con, build_id, dated, reporting_range, tenant_of(data_dir))

            selected = (
                _select(con, models, only, settings_moved=moved) if incremental else set(models)
            )
            # the models on a few cursors at once, each committed when built (warehouse.schedule)
            seconds = build_models(con, models, selected, _build_model, _model_cursor)
            con.execute("begin transaction")
            results = describe_models(con, models, seconds)
            apply_comments(con, [models[q] for q in results])
            if {"marts.occupancy_daily", "marts.revenue_daily"} <= table_names(con):
                con.execute(KPI_WINDOW)
            record_build(con, data_dir / LAKE_DIR, [models[q] for q in results])
            if incremental:
                # The models left out did not read the lake's newest files: the next refresh
                # cannot tell what they miss, and rebuilds whole (warehouse.changes).
                forget_lake_files(con)
            con.execute("commit")

            detach_lake(con)
            con.execute("checkpoint")
            con.close()
            publish(building, target)
        except BaseException:
            con.close()
            discard(building)
            raise
    return BuildResult(
        path=target,
        build_id=build_id,
        as_of=as_of,
        seconds=time.perf_counter() - started,
        models=results,
        lake_files=lake_files,
    )


def _model_cursor(cursor: duckdb.DuckDBPyConnection) -> None:
    """What a cursor of the build connection needs of its own to build models: the session's
    time zone and the temp macros (the settings, catalogs and schemas are the database's)."""
    cursor.execute("set TimeZone = 'UTC'")
    for macro in MACROS:
        cursor.execute(macro)


def configure(con: duckdb.DuckDBPyConnection, data_dir: Path) -> None:
    """The settings of a build connection."""
    con.execute("set TimeZone = 'UTC'")
    con.execute(f"set memory_limit = {quote_literal(DEFAULT_MEMORY_LIMIT)}")
    con.execute(f"set temp_directory = {quote_literal(str(data_dir / SPILL_DIR))}")
    # Models are tables; keeping insertion order only costs memory.
    con.execute("set preserve_insertion_order = false")


def prepare(
    con: duckdb.DuckDBPyConnection,
    data_dir: Path,
    *,
    begin: bool = False,
    tables: set[str] | None = None,
    recorded: Mapping[FileKey, tuple[str, ...]] | None = None,
    deferred: set[str] | None = None,
) -> dict[str, int]:
    """Settings, the lake's catalogs, the macros and the schemas of a build connection;
    returns the lake's file count per table. `begin`: open the transaction before the first
    write to the file (after the lake's in-memory catalogs, which one transaction cannot also
    write). `tables`: the lake tables to give views, `recorded`: the columns of the lake files
    read before, `deferred`: the current views left to `warehouse.lake.CurrentOnDemand`
    (`warehouse.lake.attach_lake`)."""
    configure(con, data_dir)
    lake_files = attach_lake(con, data_dir / LAKE_DIR, tables, recorded, deferred)
    if begin:
        con.execute("begin transaction")
    for macro in MACROS:
        con.execute(macro)
    for schema in SCHEMAS:
        con.execute(f"create schema if not exists {quote_ident(schema)}")
    write_refused_areas(con, data_dir / LAKE_DIR)  # optional areas refused (warehouse.refused)
    return lake_files


def resolve_as_of(
    con: duckdb.DuckDBPyConnection, data_dir: Path, given: date | None
) -> asof.WarehouseAsOf:
    """The override, else the service's date the lake's newest run recorded. A lake no run
    recorded a date in (written by hand, or before runs did) falls back to its newest
    extraction date, else to no date at all (an empty lake)."""
    if given is not None:
        return asof.WarehouseAsOf(given)
    recorded = asof.from_lake(data_dir / LAKE_DIR)
    if recorded is not None:
        return recorded
    row = con.execute("select max(_extracted_at)::date from lake.reservations").fetchone()
    return asof.WarehouseAsOf(row[0] if row and row[0] else None, asof.NO_RUN_STATE)


def _previous_as_of(con: duckdb.DuckDBPyConnection) -> date | None:
    """The as-of date of the copied file (partial builds); None when it has none."""
    found = asof.read(con)
    return found.as_of if found is not None else None


def write_settings(
    con: duckdb.DuckDBPyConnection,
    build_id: str,
    dated: asof.WarehouseAsOf,
    reporting_range: tuple[date, date] | None,
    tenant: str = DEFAULT_TENANT,
) -> None:
    con.execute(
        f"create or replace table {SETTINGS_TABLE} ("
        "build_id varchar, built_at timestamptz, as_of date, range_start date, range_end date, "
        "as_of_source varchar, service_time timestamp, tenant varchar)"
    )
    start, end = reporting_range or (None, None)
    when = dated.service_time
    if when is not None and when.tzinfo is not None:  # stored as naive UTC
        when = when.astimezone(UTC).replace(tzinfo=None)
    con.execute(
        f"insert into {SETTINGS_TABLE} values ($1, $2, $3, $4, $5, $6, $7, $8)",
        [build_id, datetime.now(UTC), dated.as_of, start, end, dated.source, when, tenant],
    )


def _select(
    con: duckdb.DuckDBPyConnection,
    models: dict[str, Model],
    only: set[str] | None,
    *,
    settings_moved: bool = False,
) -> set[str]:
    """The requested models plus any upstream model missing from the copied file, plus the
    models that read the build settings (and theirs) when the as-of date moved."""
    wanted = resolve(set(only or ()), models)
    if settings_moved:
        readers = {q for q, m in models.items() if SETTINGS_TABLE in m.sql}
        wanted |= downstream(readers, models)
    existing = {
        f"{s}.{t}"
        for s, t in con.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_catalog = current_database()"
        ).fetchall()
    }
    missing = {q for q in upstream(wanted, models) if q not in existing}
    return wanted | missing


def _build_model(con: duckdb.DuckDBPyConnection, model: Model) -> float:
    """Build one model's table (or view); returns the seconds it took."""
    t0 = time.perf_counter()
    if model.view:
        create_view(con, model)
    else:
        name = model.relation
        con.execute(f"create or replace table {name} as\n{model.table_sql}")
    return time.perf_counter() - t0


def create_view(con: duckdb.DuckDBPyConnection, model: Model) -> None:
    """Create a `-- materialized as a view` model, over the table a file built before the
    model was a view keeps under its name."""
    name = model.relation
    (tables,) = con.execute(
        "select count(*) from duckdb_tables() where database_name = current_database() "
        "and schema_name = $1 and table_name = $2",
        [model.layer, model.name],
    ).fetchone() or (0,)
    if tables:
        con.execute(f"drop table {name}")
    con.execute(f"create or replace view {name} as\n{model.sql}")


def describe_models(
    con: duckdb.DuckDBPyConnection,
    models: dict[str, Model],
    seconds: dict[str, float],
    columns: dict[str, tuple[tuple[str, str], ...]] | None = None,
) -> dict[str, ModelResult]:
    """Rows and columns of the built models `seconds` names (qualified name -> build seconds),
    in that order. `columns`: the file's `table_columns` when the caller has them."""
    columns = table_columns(con) if columns is None else columns
    # every count in one statement (a statement's own cost is ~1 ms: a refresh names ~60)
    counted = " union all ".join(
        f"select {i} as i, count(*) as n from {models[q].relation}" for i, q in enumerate(seconds)
    )
    counts = dict(con.execute(counted).fetchall()) if seconds else {}
    out: dict[str, ModelResult] = {}
    for i, (q, took) in enumerate(seconds.items()):
        model = models[q]
        out[q] = ModelResult(
            name=model.qualified,
            row_count=int(counts[i]),
            seconds=took,
            columns=columns.get(f"{model.layer}.{model.name}", ()),
        )
    return out


def apply_comments(
    con: duckdb.DuckDBPyConnection,
    models: list[Model],
    columns: dict[str, tuple[tuple[str, str], ...]] | None = None,
) -> None:
    """COMMENT ON TABLE/COLUMN from the model headers and `warehouse.catalog` (one script).
    `columns`: the file's `table_columns` when the caller has them (a refresh asks once for
    these and `describe_models`: a query of the catalog's columns is ~0.01 CPU s at large)."""
    if not models:
        return
    if columns is None:
        columns = table_columns(con)
    present = {table: [name for name, _ in found] for table, found in columns.items()}
    statements = []
    for model in models:
        name = model.relation
        statements.append(f"comment on table {name} is {quote_literal(model.description)}")
        for column, text in column_docs(model.qualified, present).items():
            if text:
                statements.append(
                    f"comment on column {name}.{quote_ident(column)} is {quote_literal(text)}"
                )
    if statements:
        con.execute(";\n".join(statements))


def wal_path(path: Path) -> Path:
    """DuckDB's write-ahead log of the database file `path`."""
    return path.with_name(path.name + ".wal")


def copy_published(target: Path, building: Path) -> None:
    """Copy the published file to build on, with the log beside it: a writer that crashed
    after its commit, before its checkpoint, left its committed rows there (DuckDB replays the
    log when the copy is opened)."""
    shutil.copyfile(target, building)
    if wal_path(target).exists():
        shutil.copyfile(wal_path(target), wal_path(building))


def publish(building: Path, target: Path) -> None:
    """Swap the finished file in; the old file's log (a crashed writer's, which the copy built
    on holds: `copy_published`) must not be replayed on it: DuckDB refuses it ("the WAL
    checkpoint iteration does not match")."""
    with contextlib.suppress(FileNotFoundError):
        wal_path(target).unlink()
    os.replace(building, target)


def discard(building: Path) -> None:
    """Remove an unfinished file and its WAL: the published one stays as it was."""
    for leftover in (building, wal_path(building)):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def table_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The file's tables and views (a model may be either)."""
    rows = con.execute(
        "select schema_name || '.' || table_name from duckdb_tables() "
        "where database_name = current_database() "
        "union all select schema_name || '.' || view_name from duckdb_views() "
        "where database_name = current_database() and not internal"
    ).fetchall()
    return {r[0] for r in rows}

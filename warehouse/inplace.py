"""Refresh the published warehouse in place, in work proportional to what the lake's new batches
touch (`warehouse.maintain` decides per model: delete+insert of the affected keys, a whole
rebuild, or nothing).

Atomic publish (docs/contracts.md section 4) without copying the file: every write, from the
macros to the last insert and the record of what was read, is one DuckDB transaction on
`warehouse.duckdb`. A reader (another process opens the file after the commit) sees the old
version or the new, never a mix; a crash before the commit leaves the old version (DuckDB
replays only committed transactions from its WAL; `tests/warehouse/test_inplace.py` kills a
refresh with SIGKILL mid-transaction). DuckDB lets one process write a file only when no other
process has it open: when a reader holds it, the refresh runs on a copy renamed over the file at
the end, as builds do, so that reader keeps its consistent old version.
"""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path
from typing import cast

import duckdb

from lake.locks import compaction_lock
from lake.store import Lake
from lake.tenancy import tenant_of
from warehouse import asof
from warehouse.asof import WarehouseAsOf
from warehouse.build import (
    LAKE_DIR,
    SETTINGS_TABLE,
    WAREHOUSE_FILE,
    BuildResult,
    ModelResult,
    apply_comments,
    build_warehouse,
    configure,
    copy_published,
    create_view,
    describe_models,
    discard,
    new_build_id,
    prepare,
    publish,
    resolve_as_of,
    table_names,
    warehouse_path,
    write_settings,
)
from warehouse.changes import (
    FULL,
    built_versions,
    delta_readers,
    handed_keys,
    keyed_sources,
    lake_changes,
    lake_tables_read,
    model_version,
    record_build,
    recorded_columns,
)
from warehouse.columns import table_columns
from warehouse.lake import CurrentOnDemand, detach_lake, lake_snapshot
from warehouse.macros import KPI_WINDOW
from warehouse.maintain import Maintainer
from warehouse.maintain_keys import Outcome
from warehouse.models import Model, discover_models
from warehouse.shared_current import shared_reads


def _settings(con: duckdb.DuckDBPyConnection) -> tuple[object, ...] | None:
    """What the models read of the build settings (the as-of date and the reporting range)."""
    try:
        return con.execute(f"select as_of, range_start, range_end from {SETTINGS_TABLE}").fetchone()
    except duckdb.CatalogException:
        return None


def _view(walk: Maintainer, model: Model) -> Outcome:
    """A model stored as a view (`-- materialized as a view`): created again when it is missing
    or its SQL changed, else nothing to maintain; its readers see it changed whole when any of
    its inputs changed."""
    q = model.qualified
    if q in walk.existing and walk.versions.get(q) == model_version(model):
        walk.states[q] = FULL if walk.changed_inputs(model) else None
        return Outcome("unchanged", walk.states[q])
    create_view(walk.con, model)
    walk.states[q] = FULL
    return Outcome("whole", FULL)


def _open(target: Path, build_id: str) -> tuple[duckdb.DuckDBPyConnection, Path | None]:
    """The published file for writing, else (another process reads it) a copy to publish."""
    try:
        return duckdb.connect(str(target)), None
    # another process reads it ("Could not set lock on file"), or this one, read-only
    except (duckdb.IOException, duckdb.ConnectionException):
        building = target.with_name(f"{WAREHOUSE_FILE}.building-{build_id}")
        copy_published(target, building)
        return duckdb.connect(str(building)), building


def update_warehouse(
    data_dir: Path | str, *, as_of: date | None = None, defer_merges: bool = False
) -> BuildResult:
    """Bring the published warehouse up to the lake in place (a new build if there is none, or
    if the file records no lake files: built before this existed, or partly by `only=`).

    `defer_merges`: the commit leaves DuckDB's row-group merges (its vacuum of deleted rows,
    ~0.5 CPU s across midnight at large) to `warehouse.tidy.tidy_warehouse`, run after the
    marts are published; the caller runs it (Dagster's `warehouse_tidy` asset does)."""
    data_dir = Path(data_dir)
    target = warehouse_path(data_dir)
    if not target.exists():
        return build_warehouse(data_dir, as_of=as_of)
    started = time.perf_counter()
    lake_dir = data_dir / LAKE_DIR
    build_id = new_build_id()
    models = discover_models()
    results: dict[str, ModelResult] = {}
    refreshed: dict[str, str] = {}
    # one look at the lake's folders for every step (`lake_snapshot`): the lock holds them still
    with compaction_lock(Lake(lake_dir), shared=True), lake_snapshot():
        con, building = _open(target, build_id)
        try:
            configure(con, data_dir)
            # what changed, read before the transaction (temp views only: the file is not
            # written), so that the lake's catalogs hold the views of what the changes reach
            changes = lake_changes(con, lake_dir)
            recorded = recorded_columns(con)
            versions = built_versions(con)
            if changes is None or versions is None:
                con.close()
                if building is not None:
                    building.unlink()
                return build_warehouse(data_dir, as_of=as_of)
            before = _settings(con)
            # the as-of date, unless only the lake's own rows can give it (read below)
            dated = WarehouseAsOf(as_of) if as_of is not None else asof.from_lake(lake_dir)
            existing = table_names(con)
            tables = lake_tables_read(
                models,
                changes,
                versions,
                existing,
                settings_changed=dated is None or before != (dated.as_of, None, None),
            )
            deferred: set[str] = set()  # the current views, created as the walk names them
            lake_files = prepare(
                con,
                data_dir,
                begin=True,
                tables=tables if dated else {*tables, "reservations"},
                recorded=recorded,
                deferred=deferred,
            )
            dated = dated or resolve_as_of(con, data_dir, None)
            asof.keep_previous(con)  # the date a header's query may move from
            write_settings(con, build_id, dated, None, tenant_of(data_dir))
            readers = {q: sum(q in m.deps for m in models.values()) for q in models}
            handed_keys(models)  # a model's reader by other than its key: refused here
            walk = Maintainer(
                cast(duckdb.DuckDBPyConnection, CurrentOnDemand(con, deferred)),
                lake=changes,
                settings_changed=_settings(con) != before,
                versions=versions,
                existing=existing,
                readers=readers,
                keyed=keyed_sources(models),
                summed={m.sums.source for m in models.values() if m.sums is not None},
                diffed=delta_readers(models),
                shared_reads=shared_reads(models.values()),
            )
            seconds: dict[str, float] = {}
            for q, model in models.items():
                outcome = _view(walk, model) if model.view else walk.maintain(model)
                if outcome.how != "unchanged":
                    refreshed[q] = outcome.how
                    seconds[q] = outcome.seconds
            # the walk's ~240 temp tables and views are left to the connection's close: a
            # statement each to drop them cost ~0.04 CPU s more (docs/benchmarks.md, session 20)
            # the file's columns once, for the results and the comments
            columns = table_columns(con)
            results = describe_models(con, models, seconds, columns)
            whole = [models[q] for q, how in refreshed.items() if how == "whole"]
            apply_comments(con, whole, columns)
            # what the file holds now: what it held, and what the walk built (a model it
            # could not build raised); a catalog query less (~0.008 CPU s at large)
            if {"marts.occupancy_daily", "marts.revenue_daily"} <= existing | refreshed.keys():
                con.execute(KPI_WINDOW)
            record_build(con, lake_dir, [models[q] for q in refreshed], recorded)
            if defer_merges:  # the database's setting, for this commit and checkpoint
                con.execute("set max_vacuum_tasks = 0")
            con.execute("commit")
            detach_lake(con)
            con.execute("checkpoint")
            if defer_merges:  # another connection of this process may share the database
                con.execute("reset max_vacuum_tasks")
            con.close()
            if building is not None:
                publish(building, target)
        except BaseException:
            con.close()  # the transaction is not committed: the file keeps its old version
            if building is not None:
                discard(building)
            raise
    return BuildResult(
        path=target,
        build_id=build_id,
        as_of=dated.as_of,
        seconds=time.perf_counter() - started,
        models=results,
        lake_files=lake_files,
        refreshed=refreshed,
    )

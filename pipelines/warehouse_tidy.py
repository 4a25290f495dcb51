"""The warehouse's tidy in Dagster: DuckDB's row-group merges after the marts are published, in
the same run, where nobody waits on them (`warehouse.tidy`).

The asset `warehouse_tidy` is a spec of the warehouse's multi_asset (`pipelines.warehouse_assets`)
rather than an asset of its own: an asset downstream of the models would be skipped whenever a
refresh left some model as it was (Dagster skips the steps after an output not produced), which
is every refresh. So the warehouse's step, when the tidy is selected, refreshes with the merges
deferred (`defer_merges=True`): its commit writes the changed rows and publishes them, its checks
read the published file, and then the tidy merges the row groups whose live rows fit in fewer. It
changes how the file stores the rows, never which rows: its check compares each table's live rows
before and after. Its metadata says what it cost (CPU and wall seconds) and what it merged (the
deleted rows the file stored before and after). When a reader holds the file it does nothing
(`merged` false, with the reason) and the next run's tidy merges what is left.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.partitions import TENANTS
from warehouse.tidy import TidyResult, tidy_warehouse

TIDY_KEY = dg.AssetKey(["warehouse_tidy"])
ROWS_CHECK = "rows_unchanged"


def tidy_spec() -> dg.AssetSpec:
    return dg.AssetSpec(
        key=TIDY_KEY,
        group_name="warehouse_maintenance",
        kinds={"duckdb"},
        description="DuckDB's row-group merges of the published warehouse (its vacuum of deleted "
        "rows), run after the refresh has published the marts and their checks have read them, "
        "so that neither the refresh nor the next one waits on them.",
        skippable=True,
    )


def tidy_check_spec() -> dg.AssetCheckSpec:
    """Built inside `pipelines.partitions.partitioned_checks` (its `partitions_def`)."""
    return dg.AssetCheckSpec(
        name=ROWS_CHECK,
        asset=TIDY_KEY,
        description="Every table of the warehouse holds the same live rows after the tidy as "
        "before it.",
        partitions_def=TENANTS,
    )


def tidy_metadata(result: TidyResult) -> dict[str, Any]:
    """What a tidy did and cost, for its materialization."""
    return {
        "merged": result.merged,
        **({"skipped": result.skipped} if not result.merged else {}),
        "cpu_seconds": round(result.cpu_seconds, 3),
        "seconds": round(result.seconds, 3),
        "deleted_rows_stored_before": result.deleted_rows_before,
        "deleted_rows_stored_after": result.deleted_rows_after,
        "tables": len(result.rows_after),
        "path": str(result.path),
    }


def rows_check(result: TidyResult) -> dg.AssetCheckResult:
    changed = {
        t: [result.rows_before.get(t), result.rows_after.get(t)]
        for t in sorted(result.rows_before.keys() | result.rows_after.keys())
        if result.rows_before.get(t) != result.rows_after.get(t)
    }
    return dg.AssetCheckResult(
        asset_key=TIDY_KEY,
        check_name=ROWS_CHECK,
        passed=not changed,
        metadata={"tables_changed": dg.MetadataValue.json(changed)},
    )


def tidy_results(
    context: dg.AssetExecutionContext, data_dir: str | Path
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """The tidy of `data_dir`'s published file: its materialization, then (when selected) its
    check."""
    result = tidy_warehouse(data_dir)
    if not result.merged:
        context.log.warning(f"warehouse tidy skipped: {result.skipped}")
    context.add_asset_metadata(tidy_metadata(result), asset_key=TIDY_KEY)
    yield dg.MaterializeResult(asset_key=TIDY_KEY)
    if dg.AssetCheckKey(TIDY_KEY, ROWS_CHECK) in context.selected_asset_check_keys:
        yield rows_check(result)

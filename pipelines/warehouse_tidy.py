"""The warehouse's tidy as a Dagster asset: DuckDB's row-group merges after the marts are
published, in the same run, where nobody waits on them (`warehouse.tidy`).

The warehouse asset refreshes with the merges deferred (`defer_merges=True`): its commit writes
the changed rows and publishes them, and this asset, which depends on every model so it runs
after the warehouse's step in every asset job, then merges the row groups whose live rows fit in
fewer. It changes how the file stores the rows, never which rows: its check compares each
table's live rows before and after. Its metadata says what it cost (CPU and wall seconds) and
what it merged (the deleted rows the file stored before and after). When a reader holds the file
it does nothing (`merged` false, with the reason) and the next run's tidy merges what is left.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dagster as dg

from pipelines.partitions import TENANTS, partitioned_checks
from pipelines.warehouse_assets import DEFAULT_RESOURCE_KEY, WarehouseResource, model_key
from warehouse.models import discover_models
from warehouse.tidy import TidyResult, tidy_warehouse

TIDY_KEY = dg.AssetKey(["warehouse_tidy"])
ROWS_CHECK = "rows_unchanged"


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


def _rows_check(result: TidyResult) -> dg.AssetCheckResult:
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


def build_warehouse_tidy(*, resource_key: str = DEFAULT_RESOURCE_KEY) -> dg.AssetsDefinition:
    """The tidy asset, after every model; needs a `WarehouseResource` at resource_key."""
    deps = [model_key(m) for m in discover_models().values()]
    check_specs = partitioned_checks(
        lambda: [
            dg.AssetCheckSpec(
                name=ROWS_CHECK,
                asset=TIDY_KEY,
                description="Every table of the warehouse holds the same live rows after the "
                "tidy as before it.",
                partitions_def=TENANTS,
            )
        ]
    )

    @dg.asset(
        key=TIDY_KEY,
        deps=deps,
        group_name="warehouse_maintenance",
        kinds={"duckdb"},
        description="DuckDB's row-group merges of the published warehouse (its vacuum of deleted "
        "rows), run after the refresh has published the marts, so that neither the refresh nor "
        "the next one waits on them.",
        partitions_def=TENANTS,
        check_specs=check_specs,
        required_resource_keys={resource_key},
    )
    def warehouse_tidy(context) -> Iterator[Any]:  # type: ignore[no-untyped-def]
        # no annotation: see `build_warehouse_assets`
        res: WarehouseResource = getattr(context.resources, resource_key)
        result = tidy_warehouse(res.data_dir)
        if not result.merged:
            context.log.warning(f"warehouse tidy skipped: {result.skipped}")
        context.add_asset_metadata(tidy_metadata(result))
        yield dg.MaterializeResult(asset_key=TIDY_KEY)
        yield _rows_check(result)

    return warehouse_tidy

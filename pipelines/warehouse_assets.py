"""Dagster assets for the SQL models: one subsettable multi_asset over every model file.

Why one multi_asset: the warehouse is published as a whole file (build a copy, then rename), so a
run builds the selected models together in one fresh copy and publishes once. Each model is
still its own asset (key `["warehouse", <layer>, <name>]`, group `warehouse_<layer>`), with deps
on the models it reads and on the lake tables `["lake", <table>]`, and the data-quality checks
of `warehouse.checks` are asset checks on their models.

In every run mode the same asset runs: when the whole warehouse is selected it rebuilds the
models that read the lake tables landed since the last build (`warehouse.refresh`: everything
after a full landing or when no file exists yet, only the dependent models after a delta; in a
child process when the lake is large, `pipelines.build_process`; DuckDB's row-group merges left
to the `warehouse_tidy` spec, run at the end of the step, `pipelines.warehouse_tidy`), and
evaluates every selected check on the published file, rebuilt or not. A selection of some
models builds exactly those.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any, Self

import dagster as dg
import duckdb

from pipelines.asset_keys import WAREHOUSE_PREFIX, lake_key, model_key
from pipelines.build_process import refresh
from pipelines.partitions import (
    TENANTS,
    check_bound,
    partitioned_checks,
    run_partition,
    settings_for_partition,
)
from pipelines.warehouse_tidy import TIDY_KEY, tidy_check_spec, tidy_results, tidy_spec
from warehouse.build import BuildResult, build_warehouse, warehouse_path
from warehouse.catalog import column_docs
from warehouse.checks import CHECKS, CheckResult, CheckSpec, run_check
from warehouse.models import Model, discover_models
from warehouse.probe import model_columns, model_schemas
from warehouse.refused import refused_by_model

DEFAULT_RESOURCE_KEY = "warehouse"
KINDS = {"duckdb", "sql"}


class WarehouseResource(dg.ConfigurableResource):
    """Where the lake and `warehouse.duckdb` live, and optional build settings."""

    data_dir: str
    as_of: str | None = None  # ISO date for booking pace; default: latest extraction date
    tenant: str | None = None  # as ReservationServiceResource.tenant

    def for_tenant(self, name: str) -> Self:
        """This resource for the tenant `name` (a partition key): its data directory."""
        if check_bound(self.tenant, name):
            return self
        settings = settings_for_partition(name, data_dir=self.data_dir)
        assert settings is not None
        return self.model_copy(update={"data_dir": str(settings.data_dir), "tenant": name})

    def create_resource(self, context: dg.InitResourceContext) -> Self:
        key = run_partition(context)
        return self if key is None else self.for_tenant(key)


def column_schema(
    qualified: str, columns: tuple[tuple[str, str], ...], known: dict[str, list[str]]
) -> dg.TableSchema:
    """Dagster's column schema of one model: names, DuckDB types and `warehouse.catalog`'s
    descriptions (`known` holds every model's columns, for the descriptions carried over)."""
    docs = column_docs(qualified, {**known, qualified: [c for c, _ in columns]})
    return dg.TableSchema(
        columns=[dg.TableColumn(name=c, type=t, description=docs[c]) for c, t in columns]
    )


def _spec(model: Model, models: dict[str, Model]) -> dg.AssetSpec:
    deps = [model_key(models[d]) for d in sorted(model.deps)]
    deps += [lake_key(t) for t in sorted(model.lake_tables)]
    q = model.qualified
    return dg.AssetSpec(
        key=model_key(model),
        deps=deps,
        group_name=f"{WAREHOUSE_PREFIX}_{model.layer}",
        kinds=KINDS,
        description=model.description,
        skippable=True,
        metadata={
            "sql_path": str(model.path),
            # known before any run: the model built empty (`warehouse.probe`)
            "dagster/column_schema": column_schema(q, model_schemas()[q], model_columns()),
        },
    )


def _jsonable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return json.loads(json.dumps(rows, default=str))


def _check_result(
    check: CheckSpec, outcome: CheckResult, key: dg.AssetKey, refused: dict[str, list[str]]
) -> dg.AssetCheckResult:
    """A check's result; on a model that reads a refused optional area it says so, and a
    failure is a warning: the numbers are as complete as the credentials allow."""
    metadata: dict[str, Any] = {
        "failure_count": outcome.failure_count,
        "sample": dg.MetadataValue.json(_jsonable(outcome.rows)),
    }
    reasons = refused.get(check.model)
    if not reasons:
        return dg.AssetCheckResult(
            asset_key=key, check_name=check.name, passed=outcome.passed, metadata=metadata
        )
    metadata["refused_areas"] = "\n".join(reasons)
    verdict = "passed" if outcome.passed else "failed, as a warning"
    return dg.AssetCheckResult(
        asset_key=key,
        check_name=check.name,
        passed=outcome.passed,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{verdict}: {'; '.join(reasons)}",
        metadata=metadata,
    )


def _results(
    context: dg.AssetExecutionContext,
    keys: dict[str, dg.AssetKey],
    selected: set[str],
    result: BuildResult | None,
    con: duckdb.DuckDBPyConnection | None,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """The selected models' materializations, then the selected checks run on `con` (the
    published file); with no file, no check runs."""
    refused = refused_by_model(con) if con is not None else {}  # model -> refused areas it reads
    known = model_columns()
    probed = model_schemas()
    built = result.models if result is not None else {}
    for q, model in built.items():
        if q not in selected:
            continue
        assert result is not None
        # On the materialization only: as the result's metadata it would also ride on its
        # step output event, stored and serialised twice.
        # The column schema only where the build's columns differ from the definition's (the
        # model built empty, `warehouse.probe`): it is two thirds of each event's bytes.
        schema = (
            {}
            if model.columns == probed.get(q)
            else {"dagster/column_schema": column_schema(q, model.columns, known)}
        )
        context.add_asset_metadata(
            {
                "dagster/row_count": model.row_count,
                **schema,
                "build_id": result.build_id,
                "build_seconds": round(model.seconds, 3),
                "path": str(result.path),
                **({"refused_areas": "\n".join(refused[q])} if q in refused else {}),
            },
            asset_key=keys[q],
        )
        yield dg.MaterializeResult(asset_key=keys[q])
    if con is None:
        return
    for c in CHECKS.values():
        if dg.AssetCheckKey(keys[c.model], c.name) in context.selected_asset_check_keys:
            yield _check_result(c, run_check(con, c.name), keys[c.model], refused)


def build_warehouse_assets(
    *, name: str = "warehouse_models", resource_key: str = DEFAULT_RESOURCE_KEY
) -> dg.AssetsDefinition:
    """The multi_asset for all models and checks; needs a `WarehouseResource` at resource_key."""
    models = discover_models()
    keys = {q: model_key(m) for q, m in models.items()}
    check_specs = partitioned_checks(
        lambda: (
            [
                dg.AssetCheckSpec(
                    name=c.name,
                    asset=keys[c.model],
                    description=c.description,
                    partitions_def=TENANTS,
                )
                for c in CHECKS.values()
            ]
            + [tidy_check_spec()]
        )
    )

    @dg.multi_asset(
        name=name,
        specs=[*(_spec(m, models) for m in models.values()), tidy_spec()],
        check_specs=check_specs,
        partitions_def=TENANTS,
        can_subset=True,
        required_resource_keys={resource_key},
    )
    def _warehouse(context) -> Iterator[Any]:  # type: ignore[no-untyped-def]
        # context is an AssetExecutionContext; no annotation because Dagster compares the
        # annotation object and `from __future__ import annotations` turns it into a string
        res: WarehouseResource = getattr(context.resources, resource_key)
        selected = {q for q, k in keys.items() if k in context.selected_asset_keys}
        tidy = TIDY_KEY in context.selected_asset_keys
        as_of = date.fromisoformat(res.as_of) if res.as_of else None
        if not selected:
            result = None  # the tidy alone
        elif selected == set(models):
            # a large lake: in a child process; DuckDB's row-group merges are left to the tidy
            # at the end of this step, after the checks (`pipelines.warehouse_tidy`)
            result = refresh(res.data_dir, as_of=as_of, defer_merges=tidy)
        else:
            result = build_warehouse(Path(res.data_dir), only=selected, as_of=as_of)
        if result is None and selected:
            context.log.info("no lake table changed since the last build: models left as they are")
        published = result.path if result is not None else warehouse_path(Path(res.data_dir))
        # one read-only connection for the refused areas and the checks; none without a file
        con = duckdb.connect(str(published), read_only=True) if published.exists() else None
        try:
            yield from _results(context, keys, selected, result, con)
        finally:
            if con is not None:
                con.close()
        if tidy:  # the marts are published and checked: the merges, where nobody waits
            yield from tidy_results(context, res.data_dir)

    return _warehouse

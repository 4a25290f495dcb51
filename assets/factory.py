"""Endpoint spec -> one Dagster multi-asset (one output per lake table) with its checks.

Every asset gets the key `["lake", <table>]`, its source area as group, kinds python + parquet,
a description, MaterializeResult metadata (rows, quarantine, requests, bytes, unknown fields,
column schema) and two checks: unique keys in the current state, and the quarantine rate.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from assets.extract import ExtractReport, ExtractSettings, QuarantineRateExceeded, run_spec
from assets.specs import CHILD_DESCRIPTIONS, EndpointSpec
from lake.locks import writer_lock
from lake.schema import Table
from pipelines.resources import LakeResource, ReservationServiceResource

KINDS = {"python", "parquet"}
UNIQUE_KEYS = "unique_keys"
QUARANTINE_RATE = "quarantine_rate"


def lake_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["lake", table])


def column_schema(table: Table, include_pii: bool = False) -> dg.TableSchema:
    arrow = table.arrow_schema(include_pii)
    return dg.TableSchema(
        columns=[dg.TableColumn(f.name, str(f.type)) for f in arrow],
        constraints=dg.TableConstraints(other=[f"primary key ({', '.join(table.key)})"]),
    )


def _asset_specs(spec: EndpointSpec) -> list[dg.AssetSpec]:
    out = []
    for table in spec.tables:
        description = spec.description if table is spec.table else CHILD_DESCRIPTIONS[table.name]
        out.append(
            dg.AssetSpec(
                key=lake_key(table.name),
                group_name=spec.group,
                kinds=KINDS,
                description=description,
                deps=[lake_key(d) for d in spec.deps] if table is spec.table else [],
                metadata={
                    "dagster/column_schema": column_schema(table),
                    "primary_key": list(table.key),
                    "parent": table.parent or "",
                },
            )
        )
    return out


def _check_specs(spec: EndpointSpec) -> list[dg.AssetCheckSpec]:
    checks = [
        dg.AssetCheckSpec(
            UNIQUE_KEYS, asset=lake_key(t.name), description="One current row per primary key."
        )
        for t in spec.tables
    ]
    checks.append(
        dg.AssetCheckSpec(
            QUARANTINE_RATE,
            asset=lake_key(spec.table.name),
            description="Share of source records quarantined in this run.",
        )
    )
    return checks


PREVIEW_ROWS = 5
PREVIEW_COLUMNS = 8


def _preview(folder: Path, files: list[str], table: Table) -> str:
    """The first rows of what this run wrote, as a Markdown table for the Dagster UI.

    Personal data never enters Dagster's storage: PII columns are left out even when they land.
    """
    if not files:
        return "_no rows written_"
    batch = pq.ParquetFile(folder / files[0]).read_row_group(0)
    personal = {c.column for c in table.columns if c.pii}
    columns = [c for c in batch.column_names if not c.startswith("_") and c not in personal][
        :PREVIEW_COLUMNS
    ]
    rows = batch.select(columns).slice(0, PREVIEW_ROWS).to_pylist()

    def cell(value: object) -> str:
        return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")[:40]

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def _results(
    spec: EndpointSpec, report: ExtractReport, lake: LakeResource
) -> Iterator[dg.MaterializeResult]:
    store = lake.lake()
    for table in spec.tables:
        tr = report.tables[table.name]
        checks = []
        dupes = store.duplicate_keys(table.name)
        checks.append(
            dg.AssetCheckResult(
                check_name=UNIQUE_KEYS,
                asset_key=lake_key(table.name),
                passed=dupes == 0,
                metadata={"duplicate_keys": dupes},
            )
        )
        if table is spec.table:
            checks.append(
                dg.AssetCheckResult(
                    check_name=QUARANTINE_RATE,
                    asset_key=lake_key(table.name),
                    passed=report.quarantined == 0,
                    severity=dg.AssetCheckSeverity.WARN,
                    metadata={
                        "quarantine_rate": report.quarantine_rate,
                        "threshold": lake.quarantine_threshold,
                        "quarantined": report.quarantined,
                    },
                )
            )
        yield dg.MaterializeResult(
            asset_key=lake_key(table.name),
            metadata={
                "dagster/row_count": tr.rows,
                "quarantined_records": report.quarantined if table is spec.table else 0,
                "source_records": report.records,
                "quarantine_reasons": dg.MetadataValue.json(report.reasons),
                "requests_used": report.requests,
                "calls": report.calls,
                "normalise_workers": report.normalise_workers,
                "bytes_written": tr.bytes_written,
                "files_written": len(tr.files),
                "unknown_fields": dg.MetadataValue.json(tr.unknown_fields),
                "dropped_pii_fields": dg.MetadataValue.json(report.dropped_pii_fields),
                "batch_id": report.batch_id,
                "batch_kind": report.batch_kind,
                "dagster/column_schema": column_schema(table, lake.include_customer_pii),
                "preview": dg.MetadataValue.md(
                    _preview(store.table_dir(table.name), tr.files, table)
                ),
            },
            check_results=checks,
        )


def build_assets(spec: EndpointSpec) -> dg.AssetsDefinition:
    """The multi-asset extracting one spec; all its tables land in one batch of the run."""

    @dg.multi_asset(
        name=f"extract_{spec.name}",
        specs=_asset_specs(spec),
        check_specs=_check_specs(spec),
        description=spec.description,
    )
    def _extract(
        context,  # type: ignore[no-untyped-def]  # dagster checks the annotation by name
        service: ReservationServiceResource,
        lake: LakeResource,
    ) -> Iterator[dg.MaterializeResult]:
        settings = ExtractSettings(
            include_pii=lake.include_customer_pii,
            flush_rows=lake.flush_rows,
            quarantine_threshold=lake.quarantine_threshold,
            today=lake.today(),
            horizon_days=lake.availability_horizon_days,
            normalise_workers=lake.normalise_workers,
        )
        batch_id = lake.batch_id_for(context)
        store = lake.lake()
        try:
            # One writer at a time: a full extract never interleaves with an incremental run.
            with writer_lock(store):
                report = run_spec(
                    spec,
                    lake=store,
                    batch_id=batch_id,
                    settings=settings,
                    open_client=service.open_client,
                )
        except QuarantineRateExceeded as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from exc
        context.log.info(
            f"{spec.name}: {report.records} records, {report.quarantined} quarantined, "
            f"{report.requests} requests, batch {batch_id} ({report.batch_kind})"
        )
        yield from _results(spec, report, lake)

    return _extract


def build_all(specs: Sequence[EndpointSpec]) -> list[dg.AssetsDefinition]:
    return [build_assets(s) for s in specs]

"""What the lake asset records for each table: its materialization's metadata (rows landed,
quarantine, requests, a preview of what was written) and its checks (unique keys in the current
state, the quarantine rate); and the requests those materializations report, for the run's tag
(`pipelines.run_requests`)."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pyarrow.parquet as pq

from assets.catalogue import SPECS
from assets.endpoints import EndpointSpec
from assets.land_report import LandReport
from assets.run_report import RunReport
from lake.column_docs import lake_column_docs
from lake.schema import Table
from lake.store import connect
from pipelines.asset_keys import QUARANTINE_RATE, UNIQUE_KEYS, lake_key
from pipelines.lake_key_counts import KeyCounts
from pipelines.resources import LakeResource

KINDS = {"python", "parquet"}
PREVIEW_ROWS = 5
PREVIEW_COLUMNS = 8


def column_schema(table: Table, include_pii: bool = False) -> dg.TableSchema:
    """The table's columns with their Arrow types and descriptions (`lake.column_docs`)."""
    arrow = table.arrow_schema(include_pii)
    docs = lake_column_docs(table, include_pii)
    return dg.TableSchema(
        columns=[dg.TableColumn(f.name, str(f.type), description=docs[f.name]) for f in arrow],
        constraints=dg.TableConstraints(other=[f"primary key ({', '.join(table.key)})"]),
    )


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


def _table_metadata(
    spec: EndpointSpec,
    table: Table,
    landed: LandReport | None,
    report: RunReport,
    lake: LakeResource,
    run_requests: int,
) -> dict[str, Any]:
    root = table is spec.table
    rows = landed.rows.get(table.name, 0) if landed else 0
    meta: dict[str, Any] = {
        "dagster/row_count": rows,
        "mode": report.mode,
        "batch_id": report.batch_id,
        "batch_kind": landed.batch_kind if landed else "none",
        "tombstones": landed.tombstones if landed and root else 0,
        "quarantined_records": landed.quarantined if landed and root else 0,
        # rows of a last good version kept current instead of a bad one (`assets.lastgood`)
        "last_good_rows_kept": landed.carried.get(table.name, 0) if landed else 0,
        "records_landed_with_last_good_children": landed.partial if landed and root else 0,
        "source_records": landed.records if landed and root else 0,
        # Every table of a stream carries the stream's requests (`stream` names it); requests
        # not made by one stream (event reads, refetch plans) sit once in `run_requests`.
        "stream": spec.name,
        "requests_used": landed.requests if landed else 0,
        "run_requests": run_requests,
        "seconds": round(landed.seconds, 3) if landed and root else 0.0,
    }
    if lake.include_customer_pii and any(c.pii for c in table.columns):
        # The definition's schema leaves personal columns out; a table that lands them says so
        # here. Otherwise the materialization carries none: the asset's definition has the same
        # one (two thirds of each event's bytes, serialised, stored and read back every run).
        meta["dagster/column_schema"] = column_schema(table, include_pii=True)
    if (refusal := report.refused.get(spec.name)) is not None:  # an optional area refused
        meta.update(
            {
                "refused_area": refusal.area,
                "refused": refusal.line(),
                "what_to_do": refusal.what_to_do,
            }
        )
    if landed and landed.files:  # a full extract's file details
        files = landed.files.get(table.name, [])
        meta.update(
            {
                "calls": landed.calls,
                "normalise_workers": landed.normalise_workers,
                "quarantine_reasons": dg.MetadataValue.json(landed.reasons if root else {}),
                "bytes_written": landed.bytes_written.get(table.name, 0),
                "files_written": len(files),
                "unknown_fields": dg.MetadataValue.json(landed.unknown_fields.get(table.name, {})),
                "dropped_pii_fields": dg.MetadataValue.json(
                    landed.dropped_pii_fields if root else {}
                ),
                "preview": dg.MetadataValue.md(
                    _preview(lake.lake().table_dir(table.name), files, table)
                ),
            }
        )
    return meta


def results(
    context: dg.AssetExecutionContext,
    report: RunReport,
    lake: LakeResource,
    selected: set[str],
    counts: KeyCounts | None = None,
) -> Iterator[dg.MaterializeResult]:
    """Each selected table's materialization and checks; `counts` holds the duplicate keys
    counted as the streams committed (`pipelines.lake_key_counts`), else they are counted here."""
    # One DuckDB connection counts every table's duplicate keys (one per table cost ~40 a run).
    with connect() as con:
        yield from _results(context, report, lake, selected, con, counts)


def reported_requests(report: RunReport, selected: set[str]) -> int:
    """The requests the lake materializations of `selected` tables report: each stream with a
    selected table its own, plus the rest of the run's once (`requests_in` of their metadata)."""
    streams = [s.name for s in SPECS if any(t.name in selected for t in s.tables)]
    if not streams:
        return 0
    rest = report.requests - sum(r.requests for r in report.landed.values())
    return rest + sum(report.landed[s].requests for s in streams if s in report.landed)


def _results(
    context: dg.AssetExecutionContext,
    report: RunReport,
    lake: LakeResource,
    selected: set[str],
    con: duckdb.DuckDBPyConnection,
    counts: KeyCounts | None,
) -> Iterator[dg.MaterializeResult]:
    store = lake.lake()
    # Each stream's own requests (every mode), and the rest of the run's (event reads, the
    # reservation-id list) once, on the first table.
    run_requests = report.requests - sum(r.requests for r in report.landed.values())
    wanted_checks = context.selected_asset_check_keys
    first = True
    for spec in SPECS:
        landed = report.landed.get(spec.name)
        for table in spec.tables:
            if table.name not in selected:
                continue
            key = lake_key(table.name)
            checks = []
            if dg.AssetCheckKey(key, UNIQUE_KEYS) in wanted_checks:
                dupes = (
                    counts.get(table.name, con)
                    if counts is not None
                    else store.duplicate_keys(table.name, con)
                )
                checks.append(
                    dg.AssetCheckResult(
                        check_name=UNIQUE_KEYS,
                        asset_key=key,
                        passed=dupes == 0,
                        metadata={"duplicate_keys": dupes},
                    )
                )
            if dg.AssetCheckKey(key, QUARANTINE_RATE) in wanted_checks:
                quarantined = landed.quarantined if landed else 0
                records = landed.records if landed else 0
                checks.append(
                    dg.AssetCheckResult(
                        check_name=QUARANTINE_RATE,
                        asset_key=key,
                        passed=quarantined == 0,
                        severity=dg.AssetCheckSeverity.WARN,
                        metadata={
                            "quarantine_rate": quarantined / records if records else 0.0,
                            "quarantined": quarantined,
                            # what the run could have quarantined before failing the table
                            "allowed": landed.quarantine_allowed if landed else 0,
                        },
                    )
                )
            meta = _table_metadata(spec, table, landed, report, lake, run_requests)
            if first:  # run-level facts once, on the first table
                meta.update(_report_metadata(report))
                first, run_requests = False, 0
            # On the materialization only: as the result's metadata it would also ride on
            # its step output event, stored and serialised twice.
            context.add_asset_metadata(meta, asset_key=key)
            yield dg.MaterializeResult(asset_key=key, check_results=checks)


def _report_metadata(report: RunReport) -> dict[str, Any]:
    summary = report.summary()
    return {
        "cursor_before": report.cursor_before or 0,
        "cursor_after": report.cursor_after or 0,
        "plan": dg.MetadataValue.json(summary["plan"]),
        "differences": dg.MetadataValue.json(summary["diffs"]),
        "notes": dg.MetadataValue.json(report.notes),
        # the run's business date: the service's date (or an override), and where it came from
        "as_of": report.as_of.describe() if report.as_of else "",
        # optional areas the service refused (`assets.refusal`): what was not read, and why
        "refused_areas": dg.MetadataValue.json(
            {name: r.as_dict() for name, r in report.refused.items()}
        ),
    }

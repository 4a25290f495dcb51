"""Compaction keeps the lake's file count bounded: each run adds files; this folds them.

An op, not an asset: it changes no table's contents (the current state before and after is the
same), only how many files hold it. Tables with fewer than `LakeResource.compact_min_files` files
are left alone.

The quarantine (`lake/_quarantine/<table>/`) is folded the same way, under the same threshold, but
keeps every row: it is evidence, not current state. With `LakeResource.quarantine_retention_days`
set, rows older than that are dropped when folding (a quarantine holding such rows is folded even
below the threshold), because quarantined raw records may carry personal data.

The run state (`lake/_state/<name>/`: the event cursor, the sweep mark, pending warehouse tables)
gains one file per run; only the newest is read, and compaction keeps the newest
`LakeResource.state_history` (100) of each.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from lake.compaction import QuarantineCompactionResult, compact, compact_quarantine
from lake.locks import compaction_lock, writer_lock
from lake.store import Lake
from lake.tables import TABLES
from pipelines.resources import LakeResource


@dg.op(
    description=(
        "Rewrite each lake table with many files as one file of its current rows, and fold each "
        "quarantine with many files into one file of all its rows (minus expired ones)."
    )
)
def compact_lake(context, lake: LakeResource) -> dict[str, int]:  # type: ignore[no-untyped-def]  # dagster checks the annotation by name
    store = lake.lake()
    # Writers are kept out by the writer lock, warehouse builds (which list files and read them
    # later) by the compaction lock: compaction deletes the files it has replaced.
    with writer_lock(store), compaction_lock(store, shared=False):
        compacted = _compact_all(context, store, lake.compact_min_files)
        quarantine = _fold_quarantine(
            context, store, lake.compact_min_files, lake.quarantine_retention_days
        )
        pruned = store.prune_state(keep=lake.state_history)
    if pruned:
        context.log.info(
            f"pruned state history to the newest {lake.state_history} files each: "
            + ", ".join(f"{name} -{n}" for name, n in pruned.items())
        )
    metadata = _metadata(compacted, quarantine, lake.quarantine_retention_days)
    metadata["state_files_removed"] = dg.MetadataValue.json(pruned)
    context.add_output_metadata(metadata)
    return compacted


def _compact_all(context: dg.OpExecutionContext, store: Lake, min_files: int) -> dict[str, int]:
    compacted: dict[str, int] = {}
    for table in sorted(TABLES):
        result = compact(store, table, min_files=min_files)
        if result.removed:
            compacted[table] = result.files_before
            context.log.info(
                f"compacted {table}: {result.files_before} files -> 1 ({result.rows} rows)"
            )
    return compacted


def _fold_quarantine(
    context: dg.OpExecutionContext, store: Lake, min_files: int, retention_days: int | None
) -> list[QuarantineCompactionResult]:
    results: list[QuarantineCompactionResult] = []
    for table in store.quarantine_tables():
        result = compact_quarantine(
            store, table, min_files=min_files, retention_days=retention_days
        )
        if result.leftovers:
            context.log.warning(
                f"quarantine {table}: removed {len(result.leftovers)} files an interrupted "
                "compaction had already folded (they were not being read)"
            )
        if result.leftovers or result.folded:
            results.append(result)
        if not result.folded:
            continue
        dropped: list[str] = []
        if result.expired:
            dropped.append(f"{result.expired} older than {retention_days} days dropped")
        if result.replaced:
            dropped.append(f"{result.replaced} superseded by a re-executed run dropped")
        context.log.info(
            f"folded quarantine {table}: {result.files_before} files -> 1 "
            f"({result.rows} of {result.rows_before} rows kept"
            + "".join(f"; {d}" for d in dropped)
            + ")"
        )
    return results


def _metadata(
    compacted: dict[str, int],
    quarantine: list[QuarantineCompactionResult],
    retention_days: int | None,
) -> dict[str, Any]:
    return {
        "tables_compacted": dg.MetadataValue.json(compacted),
        "quarantine_folded": dg.MetadataValue.json(
            {
                r.table: {
                    "files_before": r.files_before,
                    "rows_before": r.rows_before,
                    "rows_kept": r.rows,
                    "rows_expired": r.expired,
                    "rows_replaced": r.replaced,
                    "leftovers_removed": len(r.leftovers),
                }
                for r in quarantine
                if r.folded
            }
        ),
        "quarantine_leftovers_removed": sum(len(r.leftovers) for r in quarantine),
        "quarantine_files_removed": sum(len(r.removed) for r in quarantine),
        "quarantine_rows_kept": sum(r.rows for r in quarantine),
        "quarantine_rows_expired": sum(r.expired for r in quarantine),
        "quarantine_retention_days": (
            dg.MetadataValue.int(retention_days)
            if retention_days is not None
            else dg.MetadataValue.text("keep everything")
        ),
    }

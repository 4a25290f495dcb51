"""Compaction keeps the lake's file count bounded: each run adds files; this folds them.

An op, not an asset: it changes no table's contents (the current state before and after is the
same), only how many files hold it. Tables with fewer than `LakeResource.compact_min_files` files
are left alone.
"""

from __future__ import annotations

import dagster as dg

from assets.lake import Lake, writer_lock
from assets.schema import TABLES
from pipelines.resources import LakeResource


@dg.op(description="Rewrite each lake table with many files as one file of its current rows.")
def compact_lake(context, lake: LakeResource) -> dict[str, int]:
    store = lake.lake()
    compacted: dict[str, int] = {}
    with writer_lock(store):
        compacted = _compact_all(context, store, lake.compact_min_files)
    return compacted


def _compact_all(context, store: Lake, min_files: int) -> dict[str, int]:  # type: ignore[no-untyped-def]
    compacted: dict[str, int] = {}
    for table in sorted(TABLES):
        result = store.compact(table, min_files=min_files)
        if result.removed:
            compacted[table] = result.files_before
            context.log.info(
                f"compacted {table}: {result.files_before} files -> 1 ({result.rows} rows)"
            )
    return compacted

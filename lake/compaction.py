"""Compaction: each table's batch files folded into one file of its current rows, and each
quarantine folder folded into one file (every row kept).

Compaction writes the current rows (lineage columns untouched, so the current state is the same)
to a new file first and deletes the files it read only afterwards; a crash in between leaves
duplicate rows that the current-state rule already tolerates.

Quarantine (`lake/_quarantine/<table>/`) is evidence, not state: no rule removes duplicate rows
there, so its compaction ("folding") has to make the swap itself atomic. A folded file
`<batch_id>-folded.parquet` holds every row of the files it replaced, sorted by `_extracted_at` and
then `_batch_id`, and names those files (name, size, mtime) in its Parquet footer. Renaming it
into place is the commit: from then on `Lake.quarantine_files` skips every file a folded file names,
so a crash before the old files are deleted never counts a row twice, and the next compaction
deletes those leftovers first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lake.parts import (
    FOLDED,
    PART,
    SUPERSEDES_KEY,
    dictionary_columns,
    file_id,
    fsync,
    new_batch_id,
    replace_atomically,
    sweep_tmp,
)
from lake.schema import QUARANTINE_SCHEMA
from lake.sql import quote_ident
from lake.store import Lake, connect


@dataclass
class CompactionResult:
    table: str
    files_before: int
    files_after: int
    rows: int
    removed: list[str] = field(default_factory=list)


@dataclass
class QuarantineCompactionResult:
    """What folding one table's quarantine did (`folded` False: the files were left alone)."""

    table: str
    files_before: int  # visible files (what readers saw)
    files_after: int
    rows_before: int  # rows readers saw
    rows: int  # rows kept in the folded file
    expired: int = 0  # rows older than the retention, dropped
    replaced: int = 0  # rows of a batch a re-executed run wrote again, dropped
    folded: bool = False
    removed: list[str] = field(default_factory=list)  # files folded and deleted
    leftovers: list[str] = field(default_factory=list)  # superseded files of an earlier crash


def compact(lake: Lake, table: str, *, min_files: int = 2) -> CompactionResult:
    """Rewrite the current rows as one file; delete the replaced files after the rename."""
    files = lake.files(table)
    sweep_tmp(lake.table_dir(table))
    if len(files) < min_files:
        return CompactionResult(table, len(files), len(files), 0)
    params: dict[str, Any] = {}
    sql = lake.current_sql(table, params)
    schema = pa.unify_schemas([pq.read_schema(f) for f in files])
    batch_id = new_batch_id()
    folder = lake.table_dir(table)
    tmp = folder / f"{batch_id}-00000.parquet.tmp"
    final = folder / f"{batch_id}-00000.parquet"
    rows = 0
    with (
        connect() as con,
        pq.ParquetWriter(tmp, schema, use_dictionary=dictionary_columns(schema)) as out,
    ):
        if sql is not None:
            reader = con.sql(f"select * from {sql}", params=params).to_arrow_reader(100_000)
            for batch in reader:
                data = pa.Table.from_batches([batch]).select(schema.names).cast(schema)
                out.write_table(data)
                rows += data.num_rows
    if lake.remote is not None:  # one overwrite commit on the store, then the cache follows
        lake.remote.replace_all(table, tmp)
        tmp.unlink(missing_ok=True)
        lake.remote.sync(table, folder)
        lake.remote.vacuum(table)  # what earlier compactions replaced, past the retention
        return CompactionResult(table, len(files), 1, rows, [f.name for f in files])
    replace_atomically(tmp, final)
    for f in files:
        f.unlink(missing_ok=True)
    return CompactionResult(table, len(files), 1, rows, [f.name for f in files])


def compact_quarantine(
    lake: Lake,
    table: str,
    *,
    min_files: int = 2,
    retention_days: int | None = None,
    now: datetime | None = None,
) -> QuarantineCompactionResult:
    """Fold a table's quarantine files into one, keeping every row (minus expired ones).

    Folds when at least `min_files` files are visible, or when `retention_days` is set and
    some row is older than that. Leftovers of an interrupted fold are deleted first, always.
    The folded file is renamed into place before the files it replaces are deleted; its footer
    names them, so readers skip them from the rename on (see the module docstring).
    """
    if retention_days is not None and retention_days < 1:
        raise ValueError(
            f"quarantine retention must be at least 1 day, got {retention_days}; "
            "leave it unset to keep every quarantined record"
        )
    folder = lake.quarantine_dir(table)
    sweep_tmp(folder)
    leftovers = lake.quarantine_layout(table).hidden
    for f in leftovers:
        f.unlink(missing_ok=True)
    layout = lake.quarantine_layout(table)
    files = layout.visible
    rows_before = sum(pq.read_metadata(f).num_rows for f in files)
    result = QuarantineCompactionResult(
        table,
        len(files),
        len(files),
        rows_before,
        rows_before,
        leftovers=[f.name for f in leftovers],
    )
    # A batch with its own file again (a re-executed run rewrote it after a fold): its rows
    # in folded files are the earlier attempt's, which the re-run replaces.
    folded = [str(f) for f in files if FOLDED.match(f.name)]
    rewritten = sorted({m["batch"] for f in files if (m := PART.match(f.name))})
    may_drop = retention_days is not None or bool(folded and rewritten)
    if not files or (len(files) < min_files and not may_drop):
        return result
    params: dict[str, Any] = {"files": [str(f) for f in files]}
    stale = "false"
    if folded and rewritten:
        params |= {"folded": folded, "rewritten": rewritten}
        stale = "list_contains($folded, filename) and list_contains($rewritten, _batch_id)"
    expired = "false"
    if retention_days is not None:
        now = (now or datetime.now(UTC)).astimezone(UTC)
        params["cutoff"] = now - timedelta(days=retention_days)
        expired = "coalesce(_extracted_at < $cutoff, false)"
    source = "read_parquet($files, filename = true, file_row_number = true)"
    with connect() as con:
        ((replaced_rows, expired_rows),) = con.execute(
            f"select count(*) filter (where {stale}), "
            f"count(*) filter (where not ({stale}) and {expired}) from {source}",
            params,
        ).fetchall()  # all: the next query needs the connection free
        result.replaced, result.expired = int(replaced_rows), int(expired_rows)
        if len(files) < min_files and not (result.expired or result.replaced):
            return result
        batch_id = new_batch_id()
        tmp = folder / f"{batch_id}-folded.parquet.tmp"
        final = folder / f"{batch_id}-folded.parquet"
        replaced = [i for f in files if (i := file_id(f)) is not None] + layout.hidden_ids
        columns = ", ".join(quote_ident(n) for n in QUARANTINE_SCHEMA.names)
        reader = con.sql(
            f"select {columns} from {source} where not ({stale}) and not ({expired}) "
            "order by _extracted_at nulls last, _batch_id nulls last, filename, "
            "file_row_number",
            params=params,
        ).to_arrow_reader(100_000)
        rows = 0
        try:
            with pq.ParquetWriter(
                tmp, QUARANTINE_SCHEMA, use_dictionary=dictionary_columns(QUARANTINE_SCHEMA)
            ) as out:
                for batch in reader:
                    data = pa.Table.from_batches([batch]).cast(QUARANTINE_SCHEMA)
                    out.write_table(data)
                    rows += data.num_rows
                out.add_key_value_metadata({SUPERSEDES_KEY: json.dumps(sorted(replaced))})
            fsync(tmp)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    if lake.remote is not None:  # one overwrite commit on the store, then the cache follows
        lake.remote.replace_all(f"_quarantine/{table}", tmp)
        tmp.unlink(missing_ok=True)
        lake.remote.sync(f"_quarantine/{table}", folder)
        lake.remote.vacuum(f"_quarantine/{table}")
        result.rows, result.folded, result.files_after = rows, True, 1
        result.removed = [f.name for f in files]
        return result
    replace_atomically(tmp, final)  # the commit: from here on readers skip `replaced`
    fsync(folder)
    for f in files:
        f.unlink(missing_ok=True)
    for name, _, _ in layout.hidden_ids:
        (folder / name).unlink(missing_ok=True)
    result.rows, result.folded, result.files_after = rows, True, 1
    result.removed = [f.name for f in files]
    return result

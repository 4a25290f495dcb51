"""Normaliser workers that write a landing's rows as lake parts themselves.

A full extract streams its rows to the lake (`Landing(hold=False)`): the run's process would
receive every page's tables from a worker only to write them as Parquet parts, ~10 % of its CPU
at the large scale (docs/benchmarks.md, session 22). Here a worker keeps a part writer per table
of the landing (`PartWriter(stage=...)`: temp files of the batch under a name of its own) and
sends back, instead of the good rows, the parts it staged (`Written`), with the page's counters,
quarantine rows and the rows the last-good rule decides on (few; they stay with the landing, as
before). The landing's writers adopt those parts (`PartWriter.adopt`) and commit them with their
own: renamed to the batch's part names when the batch commits, deleted when it does not, sent to
the object store by its commit. Nothing is visible before the commit, as with any part.

Each page of a landing goes to one worker (`assets.page_queue.PageQueue` picks it); at the end,
each worker that got pages writes what it still buffers (`flush_in_worker`); a landing that
fails has its workers drop what they buffer and staged (`drop_in_worker`). A worker that dies
leaves its temp files to the sweep of stale ones (`lake.parts.sweep_tmp`), as a crashed run does.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from assets.workers import (
    SPECS_BY_NAME,
    Job,
    PageResult,
    Record,
    Written,
    check_sendable,
    normalise_page,
    shipped,
    table_bytes,
    worker_normaliser,
)
from lake.parts import PartWriter
from lake.tables import TABLES

# This worker's part writers, per landing (its `Job`) and table.
_writers: dict[Job, dict[str, PartWriter]] = {}


def _writer(job: Job, table: str) -> PartWriter:
    per_job = _writers.setdefault(job, {})
    writer = per_job.get(table)
    if writer is None:
        writer = per_job[table] = PartWriter(
            Path(dict(job.folders)[table]),
            job.batch_id,
            TABLES[table].arrow_schema(job.include_pii),
            flush_rows=job.flush_rows,
            stage=f"w{os.getpid()}",
        )
    return writer


def _staged(writer: PartWriter, before: int) -> list[tuple[str, int]]:
    staged = zip(writer.staged[before:], writer.part_rows[before:], strict=True)
    return [(str(path), rows) for path, rows in staged]


def land_in_worker(job: Job, page: Sequence[Record], extracted_at: datetime) -> PageResult:
    """Runs in a worker: normalise a page as `normalise_in_worker` does and add its good rows
    to this worker's part writers; send back the parts that filled, not the rows."""
    try:
        spec = SPECS_BY_NAME[job.spec]
        cursor, normalised, _ = normalise_page(spec, worker_normaliser(job), page, extracted_at)
        if normalised is None:
            return PageResult(cursor, None)
        parts: dict[str, list[tuple[str, int]]] = {}
        keys = None
        for name, table in normalised.tables.items():
            if not table.num_rows:
                continue
            if job.guard and name == spec.table.name:
                keys = table_bytes(table.select(list(job.guard)))
            writer = _writer(job, name)
            before = len(writer.part_rows)
            writer.add(table)
            if len(writer.part_rows) > before:
                parts[name] = _staged(writer, before)
        rest = dataclasses.replace(normalised, tables={})
        return shipped(PageResult(cursor, rest, Written(parts, keys)))
    except Exception as exc:
        check_sendable(exc)
        raise


def flush_in_worker(job: Job) -> PageResult:
    """Runs in a worker, after the landing's last page: write what is still buffered."""
    parts: dict[str, list[tuple[str, int]]] = {}
    for name, writer in _writers.pop(job, {}).items():
        before = len(writer.part_rows)
        writer.flush()
        if len(writer.part_rows) > before:
            parts[name] = _staged(writer, before)
    return PageResult(None, None, Written(parts))


def drop_in_worker(job: Job) -> None:
    """Runs in a worker, for a landing that failed: forget its rows, delete its temp parts."""
    for writer in _writers.pop(job, {}).values():
        writer.abort()

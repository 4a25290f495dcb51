"""The landing engine: one stream's rows into a run's batch, the same in every run mode.

A `Landing` takes pages (normalised in this thread, or by the worker pool once a stream has
brought `WORKER_MIN_BYTES` of undecoded JSON, applied in page order: `assets.page_queue`) and
tombstones, and commits the stream's tables with one set of rules:

* **quarantine**: bad records go to `lake/_quarantine/<table>/` (kept even when the landing
  fails: they are evidence); above the larger of `quarantine_threshold` x records and
  `quarantine_floor` records nothing of the stream is committed (`assets.quarantine`);
* **last good version**: what is bad stays current as it was; a record with bad children lands
  with those children at their last good version, or not at all (`assets.lastgood`);
* **full -> delta**: a full batch missing quarantined records would make the current-state rule
  drop their keys, so it lands as a delta instead, keeping their last good version;
* **children first**: until the parent commits, new children are not current, so a reader never
  sees a new parent with its old children.

Rows stream into the part writers as they come (bounded memory: a full extract), or, with
`hold=True`, are held so that the run can compare them with the lake and keep only what differs
(`fresh`, `keep_only`) before they land.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from assets import progress
from assets.endpoints import EndpointSpec
from assets.guard import check_removals, guard_columns
from assets.land_report import LandReport
from assets.lastgood import keep_last_good, keys_of, rows_matching
from assets.page_queue import PageQueue
from assets.quarantine import QuarantineRateExceeded, allowed, exceeded_message
from assets.settings import EVENTS_SOURCE, IngestSettings, Record
from assets.workers import PageResult, bytes_table
from lake.schema import Table
from lake.store import Lake
from lake.tables import TABLES


def tombstones(
    table: Table,
    keys: Iterable[tuple[Any, ...]],
    *,
    batch_id: str,
    batch_kind: str = "delta",
    source: str = EVENTS_SOURCE,
    include_pii: bool = False,
    extracted_at: datetime | None = None,
) -> pa.Table:
    """Rows that say "this key no longer exists": key columns set, `_is_deleted` true."""
    schema = table.arrow_schema(include_pii)
    at = extracted_at or datetime.now(UTC)
    rows = [
        {
            **dict(zip(table.key, key, strict=True)),
            "_batch_id": batch_id,
            "_batch_kind": batch_kind,
            "_extracted_at": at,
            "_source": source,
            "_is_deleted": True,
        }
        for key in keys
    ]
    return pa.Table.from_pylist(rows, schema=schema)


class Landing:
    """One stream's writers in the run's batch: pages and tombstones in, children committed first.

    Every run mode lands through this class: the full extract (`assets.extract.run_spec`) and
    every landing of an incremental run, webhook refresh, sweep or id reconciliation
    (`assets.run.ChangeRun.landing`).
    """

    def __init__(
        self,
        lake: Lake,
        spec: EndpointSpec,
        batch_id: str,
        kind: str,
        settings: IngestSettings,
        *,
        hold: bool = True,
    ) -> None:
        self.lake, self.spec, self.batch_id, self.kind = lake, spec, batch_id, kind
        self.settings, self.hold = settings, hold
        self.report = LandReport(spec.name, kind)
        self.seen: set[tuple[Any, ...]] = set()  # root keys received (held landings)
        self.buffer: dict[str, list[pa.Table]] = {t.name: [] for t in spec.tables}
        # Good rows of records with bad children, and the keys of what is bad (`assets.lastgood`).
        self._partial: dict[str, list[pa.Table]] = {t.name: [] for t in spec.tables}
        self._lost: dict[str, list[pa.Table]] = {t.name: [] for t in spec.tables}
        self._tombstones: list[pa.Table] = []
        self._root_keys: list[pa.Table] = []  # for the removal guard of a full batch
        self._writers = {
            t.name: lake.writer(
                t, batch_id, include_pii=settings.include_pii, flush_rows=settings.flush_rows
            )
            for t in spec.tables
        }
        self._quarantine = lake.quarantine_writer(spec.table.name, batch_id, settings.flush_rows)
        # Rows that stream to the lake are written by the normaliser workers, if any, as parts
        # these writers adopt (`assets.worker_writes`); held rows come here first.
        folders = None if hold else {name: w.folder for name, w in self._writers.items()}
        self._pages = PageQueue(
            spec, batch_id, kind, settings, self._apply, folders=folders, guard=guard_columns(spec)
        )
        self._unknown: dict[str, Counter[str]] = {t.name: Counter() for t in spec.tables}
        self._reasons: Counter[str] = Counter()
        self._dropped: Counter[str] = Counter()

    @property
    def root(self) -> Table:
        return self.spec.table

    # -- pages ------------------------------------------------------------------------------

    def add_page(self, page: Sequence[Record], extracted_at: datetime | None = None) -> None:
        """Normalise one page here or in the worker pool; results apply in page order."""
        self._pages.add(page, extracted_at or datetime.now(UTC))
        self.report.normalise_workers = self._pages.workers

    def add_pages(self, pages: Iterable[tuple[Sequence[Record], datetime]]) -> None:
        """Every page of a stream; on any failure nothing of it is committed."""
        try:
            for page, extracted_at in pages:
                self.add_page(page, extracted_at)
            self.finish()
        except BaseException:
            self.abort()
            raise

    def finish(self) -> None:
        """Apply the pages still in the worker pool."""
        self._pages.finish()

    def _apply(self, done: PageResult) -> None:
        top, result, written = done
        report = self.report
        if top is not None:
            report.cursor = top if report.cursor is None or top > report.cursor else report.cursor
        if written is not None:  # a worker wrote the good rows (`assets.worker_writes`)
            for name, parts in written.parts.items():
                for path, rows in parts:
                    self._writers[name].adopt(Path(path), rows)
            if written.keys is not None and self.kind == "full":
                self._root_keys.append(bytes_table(written.keys))
        if result is None:
            return
        report.records += result.records
        report.quarantined += result.quarantined
        self._reasons.update(result.reasons)
        self._dropped.update(result.dropped_pii_fields)
        for key, n in result.unknown_fields.items():
            table, name = key.split(".", 1)
            self._unknown[table][name] += n
        for name, table in result.tables.items():
            if not table.num_rows:
                continue
            if name == self.root.name and self.kind == "full":
                self._root_keys.append(table.select(guard_columns(self.spec)))
            if self.hold:
                self.buffer[name].append(table)
            else:
                self._writers[name].add(table)
        for name, table in result.partial.items():
            if table.num_rows:
                self._partial[name].append(table)
        for name, table in result.lost.items():
            self._lost[name].append(table)
        if result.quarantine.num_rows:
            self._quarantine.add(result.quarantine)
        if self.hold:
            self.seen.update(keys_of(result.tables[self.root.name], self.root.key))
            if self.root.name in result.partial:  # served; only some children are bad
                self.seen.update(keys_of(result.partial[self.root.name], self.root.key))
        progress.report(self.root.name, result.records, result.quarantined)

    # -- held rows --------------------------------------------------------------------------

    def fresh(self, name: str | None = None) -> pa.Table:
        """Rows held so far for one of the spec's tables (the root by default)."""
        table = TABLES[name or self.root.name]
        parts = self.buffer[table.name] + self._partial[table.name]
        schema = table.arrow_schema(self.settings.include_pii)
        return pa.concat_tables(parts).cast(schema) if parts else schema.empty_table()

    def keep_only(self, keys: set[tuple[Any, ...]], columns: Sequence[str] | None = None) -> None:
        """Drop held rows (root and children) whose root key is not in `keys`.

        `columns` names other root columns the keys refer to (journal entries by `report_id`).
        """
        for table in self.spec.tables:
            if table is self.root:
                cols = list(columns or self.root.key)
            else:  # children link to the root through their parent key columns
                cols = list(table.parent_key) if table.parent == self.root.name else []
            if not cols:
                continue
            for held in (self.buffer, self._partial, self._lost):
                kept = []
                for part in held[table.name]:
                    # a bad row whose link cannot be read is kept: it may be any root's
                    unread = held is self._lost
                    mask = [k in keys or (unread and None in k) for k in keys_of(part, cols)]
                    kept.append(part.filter(pa.array(mask, type=pa.bool_())))
                held[table.name] = [p for p in kept if p.num_rows]

    def keep_keys(self, keys: pa.Table) -> None:
        """`keep_only` for many rows: `keys` holds the root key columns of the records to keep
        (a semi join in DuckDB rather than a tuple per row: the availability horizon)."""
        root_key = list(self.root.key)
        kept: set[tuple[Any, ...]] | None = None
        for table in self.spec.tables:
            if table is self.root:
                link = {k: k for k in root_key}
            elif table.parent == self.root.name:
                link = dict(table.parent_key)
            else:
                continue
            wanted = keys.select(list(link.values())).rename_columns(list(link))
            self.buffer[table.name] = rows_matching(self.buffer[table.name], wanted)
            self._partial[table.name] = rows_matching(self._partial[table.name], wanted)
            if self._lost[table.name]:  # few; one whose link cannot be read is kept
                kept = kept if kept is not None else set(keys_of(keys, root_key))
                cols = list(link)
                self._lost[table.name] = [
                    part.filter(
                        pa.array([k in kept or None in k for k in keys_of(part, cols)], pa.bool_())
                    )
                    for part in self._lost[table.name]
                ]

    def add_tombstones(self, keys: Iterable[tuple[Any, ...]], source: str = EVENTS_SOURCE) -> None:
        keys = sorted(set(keys) - self.seen)
        if not keys:
            return
        self._tombstones.append(
            tombstones(
                self.root,
                keys,
                batch_id=self.batch_id,
                batch_kind=self.kind,
                source=source,
                include_pii=self.settings.include_pii,
            )
        )
        self.report.tombstones += len(keys)

    # -- commit -----------------------------------------------------------------------------

    def abort(self) -> None:
        """Nothing of the stream lands; what was found bad so far is kept as evidence."""
        self._pages.cancel()
        for w in self._writers.values():
            w.abort()
        self.report.quarantine_files = [p.name for p in self._quarantine.commit()]

    def skip(self) -> LandReport:
        """Land nothing (the rows equal the lake); quarantine is kept."""
        self.abort()
        self.report.skipped = True
        return self.report

    def commit(self) -> LandReport:
        """Write the batch (children first); raise when too much was quarantined."""
        self.finish()
        report = self.report
        report.reasons = dict(self._reasons.most_common())
        report.dropped_pii_fields = dict(self._dropped)
        report.quarantine_files = [p.name for p in self._quarantine.commit()]
        share, floor = self.settings.quarantine_threshold, self.settings.quarantine_floor
        report.quarantine_allowed = allowed(report.records, share, floor)
        if report.quarantined > report.quarantine_allowed:
            for w in self._writers.values():
                w.abort()
            raise QuarantineRateExceeded(
                exceeded_message(
                    self.root.name,
                    report.quarantined,
                    report.records,
                    share,
                    floor,
                    report.reasons,
                    self.lake.quarantine_dir(self.root.name),
                )
            )
        kind = self.kind
        if report.quarantined and kind == "full":
            kind = "delta"  # a full batch missing records would drop their keys
        report.batch_kind = kind
        if kind == "full":
            try:
                check_removals(
                    self.lake, self.spec, self._root_keys, self.settings.max_removed_share
                )
            except BaseException:
                for w in self._writers.values():
                    w.abort()
                raise
        for name, parts in self.buffer.items():
            for part in parts:
                self._writers[name].add(part)
        for t in self._tombstones:
            self._writers[self.root.name].add(t)
        try:
            self._keep_last_good()
            for table in reversed(self.spec.tables):
                w = self._writers[table.name]
                files = w.commit(kind if kind != self.kind else None)
                report.rows[table.name] = w.rows
                report.bytes_written[table.name] = w.bytes_written
                report.files[table.name] = [p.name for p in files]
                report.unknown_fields[table.name] = dict(self._unknown[table.name].most_common())
        except BaseException:
            for w in self._writers.values():
                w.abort()
            raise
        progress.report(self.root.name, 0, 0, done=True)
        return report

    def _keep_last_good(self) -> None:
        """Records with bad children, and bad children of another stream's parents: keep what
        is bad at its last good version (`assets.lastgood`)."""
        if not any((*self._partial.values(), *self._lost.values())):
            return
        kept = keep_last_good(
            self.lake,
            self.spec,
            (self.batch_id, self.kind),
            self.settings.include_pii,
            self._partial,
            self._lost,
            lambda name, columns: self._writers[name].columns(columns),
        )
        for name, parts in kept.tables.items():
            for part in parts:
                self._writers[name].add(part)
        self.report.partial, self.report.carried = kept.records, dict(kept.carried)

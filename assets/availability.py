"""The availability horizon compared with the lake before it lands: only what differs lands.

An AVAILABILITY_EVENT names an accommodation type whose prices or availability changed in the
service's availability index (interface "Events"); the endpoint answers per arrival window, for
one `resourceId` or for every type (real-service-notes 6.1). A run re-reads the changed types'
horizon (or the whole horizon: a new business date, or many types changed) and compares it here
with the lake's current rows of the same scope, record by record with their prices:

* records new or changed land (with all their prices) in the run's delta batch;
* current records of the scope that the read lacks are tombstoned: for the whole horizon every
  current record it lacks (a day's arrivals that passed, a type gone), so the current state is
  the one a full batch of the same read would leave; that removal is checked by the removal
  guard exactly as a full batch would be (`assets.guard`: only the arrival dates read count);
* unchanged records do not land: they keep their batch, so the warehouse's refresh (by arrival
  date) touches only the dates that changed.

With quarantined records nothing is tombstoned (a bad record is not a removed one), as before.
A full run still lands the horizon as a full batch (`assets.full`).
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from assets.diff import keyed_diff
from assets.guard import check_removals, guard_columns
from assets.landing import Landing
from assets.lastgood import keys_of
from lake.store import Lake


def _in_scope(
    table: pa.Table, scope: set[int] | None, gone: set[int], window: tuple[date, date]
) -> pa.Table:
    """The current rows a read of `scope`'s types over `window` answers for (all with `scope`
    None: the whole horizon), and every row of the types `gone`."""
    if scope is None or not table.num_rows:
        return table
    start, end = window
    ids = table.column("resource_id")
    dates = table.column("arrival_date")
    mask = pc.or_(
        pc.and_(
            pc.is_in(ids, pa.array(sorted(scope), pa.int64())),
            pc.and_(
                pc.greater_equal(dates, pa.scalar(start, pa.date32())),
                pc.less_equal(dates, pa.scalar(end, pa.date32())),
            ),
        ),
        pc.is_in(ids, pa.array(sorted(gone), pa.int64())),
    )
    return table.filter(mask)


def _current(lake: Lake, table: str, scope: set[int] | None, gone: set[int]) -> pa.Table:
    """The lake's current rows of the types in scope (all with `scope` None), reading only
    theirs: a few types' records out of the whole horizon's."""
    if scope is None:
        return lake.current(table)
    return lake.current_where(table, "resource_id", sorted(scope | gone))


def keep_what_differs(
    lake: Lake,
    landing: Landing,
    *,
    scope: set[int] | None,
    gone: set[int],
    window: tuple[date, date],
    max_removed_share: float,
) -> dict[str, Any]:
    """Keep in `landing` only the records that differ from the lake and tombstone the scope's
    current records it lacks; return what differed (for the run report).

    `scope`: the types read (None: the whole horizon, every type); `gone`: types removed in
    this run, all of whose records go.
    """
    spec = landing.spec
    tables = [t for t in spec.tables if t is spec.table or t.parent == spec.table.name]
    # a record of a type not asked for (a service ignoring `resourceId`) is not compared: it
    # does not land
    fresh = {t.name: _in_scope(landing.fresh(t.name), scope, set(), window) for t in tables}
    current = {
        t.name: _in_scope(_current(lake, t.name, scope, gone), scope, gone, window) for t in tables
    }
    differing, removed = keyed_diff(tables, fresh, current)
    quarantined = bool(landing.report.quarantined)
    if scope is None and not quarantined:
        # what a full batch of this read would remove, under the same guard
        root = fresh[spec.table.name]
        check_removals(lake, spec, [root.select(guard_columns(spec))], max_removed_share)
    landing.keep_keys(differing)
    if not quarantined and removed.num_rows:
        landing.add_tombstones(keys_of(removed, list(spec.table.key)))
    read = fresh[spec.table.name].num_rows
    return {
        "read": read,
        "differing": differing.num_rows,
        "unchanged": read - differing.num_rows,
        "removed": 0 if quarantined else removed.num_rows,
        "scope": "horizon" if scope is None else len(scope),
    }

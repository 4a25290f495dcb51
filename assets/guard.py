"""The removal guard: a full batch that would drop too much of a table is not landed.

A full batch replaces its table's current state, so every current key it lacks is removed. A
service that lies (a wrong `totalElements` that ends paging early, a 204 or empty pages during
an outage, pages that overlap) or credentials of another concern produce exactly such a batch,
and the run would end with exit 0 and most of a table gone. The guard compares the batch's root
keys with the lake's current keys before anything is committed and refuses when more than
`max_removed_share` of them would go: the run fails naming the table, the numbers and the
setting that confirms a real deletion. The same rule holds in every run mode, because every
full batch commits through `Landing`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from assets.endpoints import EndpointSpec
from lake.sql import quote_ident
from lake.store import Lake, connect

SAMPLE = 5


class RemovalRefused(Exception):
    """A full batch would remove more than the guard share of a table's current records."""


def current_keys(lake: Lake, table: str, columns: Sequence[str]) -> pa.Table | None:
    """The key columns (and any others named) of a table's current state; None when empty."""
    params: dict[str, object] = {}
    sql = lake.current_sql(table, params)
    if sql is None:
        return None
    names = ", ".join(quote_ident(c) for c in columns)
    with connect() as con:
        return con.sql(f"select {names} from {sql}", params=params).to_arrow_table()


def guard_columns(spec: EndpointSpec) -> list[str]:
    """The root key columns and the spec's window column: what the guard compares."""
    return list(dict.fromkeys([*spec.table.key, *([spec.window] if spec.window else [])]))


def check_removals(
    lake: Lake, spec: EndpointSpec, batch_keys: Sequence[pa.Table], max_share: float
) -> int:
    """Raise `RemovalRefused` when the batch lacks too many current keys; else how many it lacks.

    `batch_keys` are the root table's key columns (plus the spec's `window` column) of every
    row the batch holds. A windowed spec (availability by arrival date) only answers for keys
    inside the dates it read: older ones leave by the current-state rule as the window moves.
    """
    if max_share >= 1:
        return 0
    table = spec.table
    columns = guard_columns(spec)
    current = current_keys(lake, table.name, columns)
    if current is None or current.num_rows == 0:
        return 0
    fresh = _concat(batch_keys, current.schema)
    if spec.window and fresh.num_rows:
        low, high = pc.min_max(fresh.column(spec.window)).values()
        window = current.column(spec.window)
        current = current.filter(
            pc.and_(pc.greater_equal(window, low), pc.less_equal(window, high))
        )
        if current.num_rows == 0:
            return 0
    keys = list(table.key)
    gone = current.select(keys).join(
        fresh.select(keys).group_by(keys).aggregate([]), keys=keys, join_type="left anti"
    )
    share = gone.num_rows / current.num_rows
    if share > max_share:
        raise RemovalRefused(_message(spec, gone, current.num_rows, fresh.num_rows, max_share))
    return gone.num_rows


def _concat(parts: Sequence[pa.Table], schema: pa.Schema) -> pa.Table:
    tables = [p.select(schema.names).cast(schema) for p in parts if p.num_rows]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _message(
    spec: EndpointSpec, gone: pa.Table, current: int, received: int, max_share: float
) -> str:
    sample = ", ".join(str(row if len(row) > 1 else row[0]) for row in _rows(gone, SAMPLE))
    return (
        f"table {spec.table.name!r}: this full read of {spec.source} would remove "
        f"{gone.num_rows:,} of the lake's {current:,} current records "
        f"({gone.num_rows / current:.1%}; it received {received:,} rows), above the removal "
        f"guard of {max_share:.0%} (RESERVOIR_MAX_REMOVED_SHARE); nothing was committed for "
        f"this table (e.g. missing: {sample}). A service that reports wrong totals, answers "
        "204 or empty pages during an outage, or credentials of another concern (check "
        "RESERVOIR_BASE_URL, RESERVOIR_CLIENT_ID and RESERVOIR_SCOPE) look like this. If the "
        "records really were deleted, confirm by running once with "
        "RESERVOIR_MAX_REMOVED_SHARE=1 (or the lake asset's config max_removed_share: 1.0)."
    )


def _rows(table: pa.Table, limit: int) -> list[tuple[object, ...]]:
    head = table.slice(0, limit)
    columns = [head.column(i).to_pylist() for i in range(head.num_columns)]
    return list(zip(*columns, strict=True))

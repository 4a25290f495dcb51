"""Answer the metrics feed: any metric by any allowed dimensions over a slice of the marts.

The request only picks names out of `warehouse.semantic`'s definitions; every identifier in the
SQL comes from those definitions and every value is bound as a parameter, so no text of the
request reaches DuckDB. A ratio is recomputed from the sums of its measures in the slice (money
per night to the cent, half away from zero, as the marts round), money always per currency.
Bad requests raise `FeedError`, whose message says what is allowed (the web app answers 400).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import duckdb
import pyarrow as pa

from warehouse.macros import _per
from warehouse.semantic import MEASURES, METRICS, SOURCES, TIME_DIMENSIONS, Metric, Source

MAX_DAYS = 1500  # about four years of nights: more is a mistake or an attack, not a question
MAX_VALUES = 200  # values of one filter
MAX_BY = 4
MAX_ROWS = 100_000
EARLIEST, LATEST = date(1990, 1, 1), date(2100, 12, 31)
BOOKING_WINDOWS = (
    "0-6 days",
    "7-13 days",
    "14-29 days",
    "30-59 days",
    "60-89 days",
    "90-179 days",
    "180+ days",
)
_ID = re.compile(r"^[0-9]{1,12}$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")
FILTERS = ("park", "accommodation_type", "channel", "booking_window", "currency", "weekday")


class FeedError(ValueError):
    """The request asks for something the feed does not have; the message says what it has."""


@dataclass(frozen=True)
class Slice:
    """Which nights and which values of each dimension a query covers."""

    start: date | None = None
    end: date | None = None
    filters: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    @classmethod
    def parse(cls, pairs: Iterable[tuple[str, str]], *, ignore: Sequence[str] = ()) -> Slice:
        """From query parameters (`from`, `to`, and repeated dimension values); anything else
        but the names in `ignore` is refused."""
        start = end = None
        values: dict[str, list[Any]] = {}
        for key, raw in pairs:
            if key in ignore:
                continue
            if key in ("from", "to"):
                day = _date(key, raw)
                start, end = (day, end) if key == "from" else (start, day)
            elif key in FILTERS:
                if raw == "":
                    continue
                values.setdefault(key, []).append(_value(key, raw))
                if len(values[key]) > MAX_VALUES:
                    raise FeedError(f"at most {MAX_VALUES} values of {key!r}")
            else:
                raise FeedError(
                    f"unknown parameter {key!r}; filters are from, to, {', '.join(FILTERS)}"
                )
        if start and end:
            if end < start:
                raise FeedError(f"'to' ({end}) is before 'from' ({start})")
            if (end - start).days + 1 > MAX_DAYS:
                raise FeedError(f"the range {start} to {end} is over {MAX_DAYS} nights; narrow it")
        return cls(start, end, {k: tuple(dict.fromkeys(v)) for k, v in values.items()})


def _date(key: str, raw: str) -> date:
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        raise FeedError(f"{key!r} must be a date as YYYY-MM-DD, not {raw[:40]!r}") from None
    if not EARLIEST <= day <= LATEST:
        raise FeedError(f"{key!r} must lie between {EARLIEST} and {LATEST}")
    return day


def _value(key: str, raw: str) -> Any:
    if key in ("park", "accommodation_type", "channel"):
        if not _ID.match(raw):
            raise FeedError(f"{key!r} takes a numeric id, not {raw[:40]!r}")
        return int(raw)
    if key == "weekday":
        if raw not in tuple("1234567"):
            raise FeedError(f"'weekday' takes 1 (Monday) to 7 (Sunday), not {raw[:40]!r}")
        return int(raw)
    if key == "currency":
        if not _CURRENCY.match(raw):
            raise FeedError(f"'currency' takes a three-letter code such as EUR, not {raw[:40]!r}")
        return raw
    if raw not in BOOKING_WINDOWS:
        raise FeedError(f"'booking_window' takes one of {', '.join(BOOKING_WINDOWS)}")
    return raw


def metric(name: str) -> Metric:
    found = METRICS.get(name)
    if found is None:
        raise FeedError(f"unknown metric {name[:60]!r}; GET /api/metrics lists them")
    return found


def _time(dim: str, column: str) -> str:
    return {
        "night": column,
        "month": f"cast(date_trunc('month', {column}) as date)",
        "year": f"year({column})",
        "weekday": f"isodow({column})",
    }[dim]


def _key(source: Source, dim: str) -> str:
    return _time(dim, source.date) if dim in TIME_DIMENSIONS else source.dims[dim]


def _part(source: Source, column: str, keys: Sequence[str], where: Slice, params: list[Any]) -> str:
    """One measure's sum over the slice, grouped by `keys` (all present in `source`)."""
    selected = [f"{_key(source, k)} as {k}" for k in keys] + [f"sum({column}) as v"]
    conds = ["true"]
    if where.start:
        conds.append(f"{source.date} >= ?")
        params.append(where.start)
    if where.end:
        conds.append(f"{source.date} <= ?")
        params.append(where.end)
    for dim, values in where.filters.items():
        if dim in source.dims or dim in source.time_dims:
            conds.append(f"{_key(source, dim)} in ({', '.join('?' for _ in values)})")
            params.extend(values)
    group = f" group by {', '.join(keys)}" if keys else ""
    return f"select {', '.join(selected)} from {source.table} where {' and '.join(conds)}{group}"


def _from_as_of(con: duckdb.DuckDBPyConnection, source: Source, where: Slice) -> Slice:
    """`where` starting no earlier than `source`'s first night (its as-of date)."""
    (first,) = con.execute(f"select min({source.date}) from {source.table}").fetchone() or (None,)
    if first is None or (where.start is not None and where.start >= first):
        return where
    return Slice(first, where.end, where.filters)


@dataclass(frozen=True)
class Answer:
    metric: Metric
    columns: list[str]
    rows: list[tuple[Any, ...]]


def query_metric(
    con: duckdb.DuckDBPyConnection, name: str, by: Sequence[str], where: Slice
) -> Answer:
    """`name` by the dimensions `by` over `where`: one row per key, the value last (with its
    numerator and denominator for a ratio)."""
    found = metric(name)
    keys = list(dict.fromkeys(by))
    if len(keys) > MAX_BY:
        raise FeedError(f"at most {MAX_BY} dimensions in 'by'")
    if found.per_currency and "currency" not in keys:
        keys.append("currency")
    allowed = found.dimensions
    for dim in [*keys, *where.filters]:
        if dim not in allowed:
            raise FeedError(
                f"metric {found.name!r} has no dimension {dim[:60]!r}; it has {', '.join(allowed)}"
            )
    num = MEASURES[found.numerator]
    if SOURCES[num.source].from_as_of:
        where = _from_as_of(con, SOURCES[num.source], where)
    params: list[Any] = []
    sql = f"with n as ({_part(SOURCES[num.source], num.column, keys, where, params)})"
    if found.denominator is None:
        cols = [*keys, found.name]
        body = f"select {', '.join([*keys, 'coalesce(n.v, 0)'])} from n"
    else:
        den = MEASURES[found.denominator]
        den_source = SOURCES[den.source]
        den_keys = [k for k in keys if k in den_source.time_dims or k in den_source.dims]
        sql += f", d as ({_part(den_source, den.column, den_keys, where, params)})"
        if den_keys and den_keys == keys:
            join = f"n full outer join d using ({', '.join(keys)})"
        elif den_keys:
            join = f"n left join d using ({', '.join(den_keys)})"
        else:
            join = "n cross join d"
        n, d = "coalesce(n.v, 0)", "coalesce(d.v, 0)"
        ratio = (
            _per(n, d)
            if found.kind == "money"
            else f"case when {d} <> 0 then cast({n} as double) / cast({d} as double) end"
        )
        cols = [*keys, found.numerator, found.denominator, found.name]
        body = f"select {', '.join([*keys, n, d, ratio])} from {join}"
    order = (
        f" order by {', '.join(f'{i + 1} nulls first' for i in range(len(keys)))}" if keys else ""
    )
    rows = con.execute(f"{sql} {body}{order} limit {MAX_ROWS + 1}", params).fetchall()
    if len(rows) > MAX_ROWS:
        raise FeedError(f"over {MAX_ROWS} rows; narrow the range or use fewer dimensions")
    if "booking_window" in keys:  # buckets in their order, not alphabetically
        at = keys.index("booking_window")
        rank = {w: i for i, w in enumerate(BOOKING_WINDOWS)}
        rows.sort(key=lambda r: (rank.get(r[at], -1), *(str(v) for v in r[:at])))
    return Answer(found, cols, rows)


def export_slice(con: duckdb.DuckDBPyConnection, source_name: str, where: Slice) -> pa.Table:
    """The rows of one source mart in the slice, every column (for Parquet, CSV, JSON)."""
    source = SOURCES.get(source_name)
    if source is None:
        raise FeedError(f"unknown mart {source_name[:60]!r}; exportable: {', '.join(SOURCES)}")
    for dim in where.filters:
        if dim not in source.dims and dim not in source.time_dims:
            raise FeedError(
                f"{source.table} has no dimension {dim!r}; it has "
                f"{', '.join([*source.time_dims, *source.dims])}"
            )
    params: list[Any] = []
    conds = ["true"]
    if where.start:
        conds.append(f"{source.date} >= ?")
        params.append(where.start)
    if where.end:
        conds.append(f"{source.date} <= ?")
        params.append(where.end)
    for dim, values in where.filters.items():
        conds.append(f"{_key(source, dim)} in ({', '.join('?' for _ in values)})")
        params.extend(values)
    sql = (
        f"select * from {source.table} where {' and '.join(conds)} "
        f"order by all limit {MAX_ROWS + 1}"
    )
    table = con.sql(sql, params=params).to_arrow_table()
    if table.num_rows > MAX_ROWS:
        raise FeedError(f"over {MAX_ROWS} rows; narrow the range or filter")
    return table


def labels(con: duckdb.DuckDBPyConnection) -> dict[str, dict[Any, str]]:
    """Names for the id dimensions, from the core dimensions (empty where they are missing)."""
    out: dict[str, dict[Any, str]] = {"park": {}, "accommodation_type": {}, "channel": {}}
    queries = {
        "park": "select location_id, coalesce(location_name, location_code) from core.dim_locations",
        "accommodation_type": (
            "select t.accommodation_type_id, coalesce(l.location_name, t.location_code) || ' · ' "
            "|| coalesce(t.accommodation_type_name, t.accommodation_type_code) "
            "from core.dim_accommodation_types as t "
            "left join core.dim_locations as l on t.location_id = l.location_id"
        ),
        "channel": "select distribution_channel_id, "
        "coalesce(distribution_channel_name, distribution_channel_code) "
        "from core.dim_distribution_channels",
    }
    for dim, sql in queries.items():
        try:
            out[dim] = dict(con.execute(sql).fetchall())
        except (duckdb.CatalogException, duckdb.BinderException):
            continue
    return out

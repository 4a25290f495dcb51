"""The data of the page's area sections: sellable supply, orphan nights, allotment pickup, owner
statements, ancillary revenue, channel net revenue and guest mix, each for the page's filters.

Supply and orphan nights are metrics of the feed (`warehouse.semantic_query`), like the rest of
the page. The other marts have grains the feed's dimensions do not carry (owner and unit, add-on
category, allotment snapshot, guest-mix bucket), so their sums are read here, every value bound
as a parameter; ratios are recomputed from those sums, never averaged. Each area says which of
the page's filters its mart has (`APPLIES`); the others are ignored there and the page says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import duckdb

from pipelines.dashboard.views import Filters
from warehouse.semantic_query import Answer, Slice, query_metric

ORPHAN_DAYS = 180  # marts.orphan_nights covers the as-of date and the 179 nights after it

# area -> the page filters its mart has (dates always apply, except to orphan nights)
APPLIES: dict[str, tuple[str, ...]] = {
    "supply": ("park", "accommodation_type"),
    "orphans": ("park", "accommodation_type"),
    "allotments": ("park", "accommodation_type", "channel"),
    "owners": ("park", "accommodation_type", "currency"),
    "ancillary": ("park", "currency"),
    "channel_net": ("channel", "currency"),
    "guest_mix": (),
}
FILTER_NAMES = {
    "park": "park",
    "accommodation_type": "type",
    "channel": "channel",
    "currency": "currency",
}
SUPPLY_METRICS = (
    "occupancy",
    "sellable_occupancy",
    "nights_available",
    "out_of_order_nights",
    "owner_hold_nights",
    "allotment_held_nights",
    "sellable_nights",
)
ORPHAN_METRICS = ("unsold_nights", "orphan_nights", "orphan_share")

Row = tuple[Any, ...]


@dataclass
class AreaData:
    """One page's area figures: feed answers for supply and orphans, summed rows for the rest."""

    supply: dict[str, Answer] = field(default_factory=dict)
    orphans_by_night: dict[str, Answer] = field(default_factory=dict)
    orphans_by_type: dict[str, Answer] = field(default_factory=dict)
    allotments: list[Row] = field(default_factory=list)
    allotment_as_of: Any = None
    owners_by_month: list[Row] = field(default_factory=list)
    owners_by_unit: list[Row] = field(default_factory=list)
    ancillary: list[Row] = field(default_factory=list)
    channel_net: list[Row] = field(default_factory=list)
    guest_mix: list[Row] = field(default_factory=list)


def ignored(area: str, filters: Filters) -> list[str]:
    """The filters the reader picked that `area`'s mart does not have."""
    picked = {
        "park": filters.parks,
        "accommodation_type": filters.types,
        "channel": filters.channels,
        "currency": filters.currency,
    }
    return [FILTER_NAMES[k] for k, v in picked.items() if v and k not in APPLIES[area]]


def _slice(filters: Filters, area: str, start: Any = None, end: Any = None) -> Slice:
    full = filters.slice(start, end)
    kept = {k: v for k, v in full.filters.items() if k in APPLIES[area]}
    return Slice(full.start, full.end, kept)


class _Where:
    """A `where` clause over one mart with its bound parameters."""

    def __init__(self) -> None:
        self.conds: list[str] = []
        self.params: list[Any] = []

    def add(self, cond: str, *values: Any) -> None:
        self.conds.append(cond)
        self.params.extend(values)

    def any_of(self, column: str, values: tuple[Any, ...]) -> None:
        if values:
            self.add(f"{column} in ({', '.join('?' for _ in values)})", *values)

    def sql(self) -> str:
        return " and ".join(self.conds) or "true"


def _months(filters: Filters) -> _Where:
    """Months whose first day lies in the range (the feed's rule for monthly marts)."""
    where = _Where()
    where.add("month_start between ? and ?", filters.start, filters.end)
    return where


def _dims(where: _Where, filters: Filters, area: str) -> _Where:
    columns = {
        "park": ("location_id", filters.parks),
        "accommodation_type": ("accommodation_type_id", filters.types),
        "channel": ("distribution_channel_id", filters.channels),
        "currency": ("currency_code", (filters.currency,) if filters.currency else ()),
    }
    for dim in APPLIES[area]:
        column, values = columns[dim]
        where.any_of(column, values)
    return where


def _rows(con: duckdb.DuckDBPyConnection, sql: str, where: _Where) -> list[Row]:
    return con.execute(sql.format(where=where.sql()), where.params).fetchall()


def load_areas(con: duckdb.DuckDBPyConnection, filters: Filters) -> AreaData:
    """Every area figure for `filters`."""
    data = AreaData()
    supply = _slice(filters, "supply")
    data.supply = {m: query_metric(con, m, ["month"], supply) for m in SUPPLY_METRICS}
    orphans = _slice(filters, "orphans", filters.today, filters.today + timedelta(ORPHAN_DAYS - 1))
    data.orphans_by_night = {m: query_metric(con, m, ["night"], orphans) for m in ORPHAN_METRICS}
    data.orphans_by_type = {
        m: query_metric(con, m, ["accommodation_type"], orphans) for m in ORPHAN_METRICS
    }
    _allotments(con, filters, data)
    _owners(con, filters, data)
    data.ancillary = _rows(
        con,
        "select addon_category_code, currency_code, sum(extra_revenue_gross), "
        "sum(extra_revenue_net), sum(stays_with_addon), sum(stays) "
        "from marts.ancillary_revenue_monthly where {where} group by all order by 1, 2",
        _dims(_months(filters), filters, "ancillary"),
    )
    data.channel_net = _rows(
        con,
        "select distribution_channel_id, currency_code, sum(nights_sold), sum(room_revenue_net), "
        "sum(commission_net), sum(net_room_revenue_net) "
        "from marts.channel_net_revenue_monthly where {where} group by all order by 1, 2",
        _dims(_months(filters), filters, "channel_net"),
    )
    data.guest_mix = _rows(
        con,
        "select dimension, bucket, min(bucket_order), sum(stays), sum(nights), sum(guests) "
        "from marts.guest_mix_monthly where {where} group by all order by 1, 3, 2",
        _months(filters),
    )
    return data


def _allotments(con: duckdb.DuckDBPyConnection, filters: Filters, data: AreaData) -> None:
    """Per channel, the stay dates of the range as the latest snapshot sees them."""
    (latest,) = con.execute("select max(as_of_date) from marts.allotment_pickup").fetchone() or (
        None,
    )
    data.allotment_as_of = latest
    if latest is None:
        return
    where = _Where()
    where.add("as_of_date = ?", latest)
    where.add("stay_date between ? and ?", filters.start, filters.end)
    data.allotments = _rows(
        con,
        "select distribution_channel_id, sum(held_nights), sum(picked_up_nights), "
        "sum(released_nights), sum(still_held_nights) "
        "from marts.allotment_pickup where {where} group by all order by 1",
        _dims(where, filters, "allotments"),
    )


def _owners(con: duckdb.DuckDBPyConnection, filters: Filters, data: AreaData) -> None:
    data.owners_by_month = _rows(
        con,
        "select month_start, currency_code, sum(nights_rented), sum(owner_use_nights), "
        "sum(room_revenue_net), sum(owner_share), sum(journal_owner_share), "
        "sum(owner_share_difference) "
        "from marts.owner_statement_monthly where {where} group by all order by 1, 2",
        _dims(_months(filters), filters, "owners"),
    )
    data.owners_by_unit = _rows(
        con,
        "select s.owner_id, s.unit_id, coalesce(u.unit_name, u.unit_code, cast(s.unit_id as "
        "varchar)), s.currency_code, sum(s.nights_rented), sum(s.owner_use_nights), "
        "sum(s.room_revenue_net), sum(s.owner_share), sum(s.journal_owner_share), "
        "sum(s.owner_share_difference) "
        "from (select * from marts.owner_statement_monthly where {where}) as s "
        "left join core.dim_units as u on s.unit_id = u.unit_id "
        "group by s.owner_id, s.unit_id, 3, s.currency_code order by 1, 2, 4",
        _dims(_months(filters), filters, "owners"),
    )

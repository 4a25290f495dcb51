"""The data layer of the dashboard and of `reservoir serve`: what the page shows, as data.

Every figure is a metric of the feed (`warehouse.semantic_query`) over the marts, so a tile, a
chart point and `GET /api/metrics/{name}` agree by construction: nothing here divides or
averages. `Filters` is the page's state (park, type, channel, currency, range, drilled month);
`load` reads one page's worth of figures from an open read-only connection.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

import duckdb

from warehouse.semantic_query import Answer, FeedError, Slice, labels, query_metric

MONTHS_BACK = 12  # default range: the 12 months before the as-of month ...
MONTHS_AHEAD = 3  # ... to the end of the third month after it
PACE_DAYS = 365
PAGE_FILTERS = ("park", "accommodation_type", "channel", "currency")


def month_start(d: date) -> date:
    return d.replace(day=1)


def add_months(d: date, n: int) -> date:
    y, m = divmod(d.month - 1 + n, 12)
    return date(d.year + y, m + 1, 1)


def month_end(d: date) -> date:
    return add_months(d, 1) - timedelta(days=1)


def year_before(d: date) -> date:
    """The same calendar day a year earlier (29 February -> 28 February)."""
    return d.replace(year=d.year - 1, day=min(d.day, 28 if d.month == 2 else d.day))


@dataclass(frozen=True)
class Filters:
    """What the reader picked; ids for parks, types and channels, names shown by the page."""

    today: date
    start: date
    end: date
    parks: tuple[int, ...] = ()
    types: tuple[int, ...] = ()
    channels: tuple[int, ...] = ()
    currency: str | None = None
    month: date | None = None  # drilled into: the nights of this month

    @classmethod
    def default(cls, today: date) -> Filters:
        start = add_months(month_start(today), -MONTHS_BACK)
        return cls(today, start, month_end(add_months(today, MONTHS_AHEAD)))

    @classmethod
    def parse(cls, today: date, pairs: Iterable[tuple[str, str]]) -> Filters:
        """From the page's query string; bad values raise `FeedError` (a 400 page)."""
        pairs = list(pairs)
        base = cls.default(today)
        drill = [v for k, v in pairs if k == "month" and v]
        where = Slice.parse(pairs, ignore=("month",))
        if set(where.filters) - set(PAGE_FILTERS):
            raise FeedError(f"the page filters by {', '.join(PAGE_FILTERS)}, from and to")
        currency = where.filters.get("currency", ())
        if len(currency) > 1:
            raise FeedError("pick one currency (or none for all)")
        month = None
        if drill:
            try:
                month = date.fromisoformat(drill[-1][:7] + "-01")
            except ValueError:
                raise FeedError("'month' takes YYYY-MM") from None
        return cls(
            today,
            where.start or base.start,
            where.end or base.end,
            where.filters.get("park", ()),
            where.filters.get("accommodation_type", ()),
            where.filters.get("channel", ()),
            currency[0] if currency else None,
            month,
        )

    def slice(self, start: date | None = None, end: date | None = None) -> Slice:
        filters: dict[str, tuple[Any, ...]] = {}
        for dim, values in (
            ("park", self.parks),
            ("accommodation_type", self.types),
            ("channel", self.channels),
            ("currency", (self.currency,) if self.currency else ()),
        ):
            if values:
                filters[dim] = values
        return Slice(start or self.start, end or self.end, filters)

    def query(self, **change: Any) -> list[tuple[str, str]]:
        """The query string of these filters (with `change` applied), for links."""
        f = replace(self, **change)
        out = [("from", f.start.isoformat()), ("to", f.end.isoformat())]
        out += [("park", str(v)) for v in f.parks]
        out += [("accommodation_type", str(v)) for v in f.types]
        out += [("channel", str(v)) for v in f.channels]
        if f.currency:
            out.append(("currency", f.currency))
        if f.month:
            out.append(("month", f.month.strftime("%Y-%m")))
        return out


@dataclass(frozen=True)
class Options:
    """What each filter offers: ids with names, read from the dimensions."""

    parks: dict[int, str]
    types: dict[int, str]
    channels: dict[int, str]
    currencies: tuple[str, ...]

    @classmethod
    def load(cls, con: duckdb.DuckDBPyConnection) -> Options:
        names = labels(con)
        currencies = tuple(
            r[0]
            for r in con.execute(
                "select distinct currency_code from marts.sales_daily "
                "where currency_code is not null order by 1"
            ).fetchall()
        )
        return cls(names["park"], names["accommodation_type"], names["channel"], currencies)


@dataclass
class PageData:
    """One page's figures: each an `Answer` of the feed (rows of keys, measures, value)."""

    filters: Filters
    options: Options
    tiles: dict[str, Answer] = field(default_factory=dict)
    tiles_ly: dict[str, Answer] = field(default_factory=dict)
    monthly: dict[str, Answer] = field(default_factory=dict)
    monthly_ly: dict[str, Answer] = field(default_factory=dict)
    nightly: dict[str, Answer] = field(default_factory=dict)
    nightly_ly: dict[str, Answer] = field(default_factory=dict)
    pace: dict[str, Answer] = field(default_factory=dict)
    channels: dict[str, Answer] = field(default_factory=dict)
    weekdays: dict[str, Answer] = field(default_factory=dict)
    windows: dict[str, Answer] = field(default_factory=dict)
    bookings: dict[str, Answer] = field(default_factory=dict)
    bookings_ly: dict[str, Answer] = field(default_factory=dict)


TILE_METRICS = (
    "occupancy",
    "room_revenue_net",
    "adr_net",
    "revpar_net",
    "adr_after_commission_net",
    "commission_net",
)
MONTHLY_METRICS = ("occupancy", "room_revenue_net", "adr_net", "revpar_net")
NIGHTLY_METRICS = ("occupancy", "adr_net")
PACE_METRICS = (
    "otb_occupancy",
    "stly_occupancy",
    "forecast_occupancy",
    "otb_room_revenue",
    "stly_otb_room_revenue",
    "forecast_room_revenue",
)
CHANNEL_METRICS = ("nights_sold", "room_revenue_net", "adr_net", "commission_share")
SPLIT_METRICS = ("occupancy", "adr_net")
WINDOW_METRICS = ("nights_sold", "adr_net")
BOOKING_METRICS = ("cancellation_rate", "alos")


def load(con: duckdb.DuckDBPyConnection, filters: Filters) -> PageData:
    """Every figure the page shows, for `filters`, from the marts."""
    data = PageData(filters, Options.load(con))
    now = filters.slice()
    ly = filters.slice(year_before(filters.start), year_before(filters.end))

    def run(metrics: Iterable[str], by: list[str], where: Slice) -> dict[str, Answer]:
        return {m: query_metric(con, m, by, where) for m in metrics}

    data.tiles = run(TILE_METRICS, [], now)
    data.tiles_ly = run(TILE_METRICS, [], ly)
    data.monthly = run(MONTHLY_METRICS, ["month"], now)
    data.monthly_ly = run(MONTHLY_METRICS, ["month"], ly)
    if filters.month is not None:
        first, last = filters.month, month_end(filters.month)
        data.nightly = run(NIGHTLY_METRICS, ["night"], filters.slice(first, last))
        # last year's same weekday: 364 days back, as booking_pace's STLY
        data.nightly_ly = run(
            NIGHTLY_METRICS,
            ["night"],
            filters.slice(first - timedelta(364), last - timedelta(364)),
        )
    # The forecast mart has no park, type or channel split: only the currency applies.
    pace_where = Slice(
        filters.today,
        filters.today + timedelta(PACE_DAYS - 1),
        {"currency": (filters.currency,)} if filters.currency else {},
    )
    data.pace = run(PACE_METRICS, ["month"], pace_where)
    data.channels = run(CHANNEL_METRICS, ["channel"], now)
    data.weekdays = run(SPLIT_METRICS, ["weekday"], now)
    data.windows = run(WINDOW_METRICS, ["booking_window"], now)

    # cancellations_monthly splits by park and currency only
    def bookings(where: Slice) -> Slice:
        kept = {k: v for k, v in where.filters.items() if k in ("park", "currency")}
        return Slice(where.start, where.end, kept)

    data.bookings = run(BOOKING_METRICS, ["month"], bookings(now))
    data.bookings_ly = run(BOOKING_METRICS, ["month"], bookings(ly))
    return data

"""The metrics feed's contract: every metric as data (measures, dimensions, grain, how to
aggregate, per currency), generated from the metric dictionary.

What a BI tool or a web page needs to read the marts without knowing their SQL (the role of a
Rill metrics view or dbt's semantic layer): a measure is one additive mart column summed, a
metric is a measure or the ratio of two measures recomputed from their sums (never an average of
stored ratios), money is always split by currency. Descriptions are the dictionary's column
texts (`warehouse.dictionary`), so the feed says what docs/metrics.md and the `COMMENT`s say.
`definitions()` is what `GET /api/metrics` serves; `warehouse.semantic_query` answers them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from warehouse.dictionary import MARTS

Kind = Literal["count", "money"]

# Time dimensions every source has, from its date column.
TIME_DIMENSIONS: dict[str, str] = {
    "night": "The stay night (date).",
    "month": "First day of the stay night's month.",
    "year": "Calendar year of the stay night.",
    "weekday": "ISO day of the week of the stay night: 1 = Monday ... 7 = Sunday.",
}

# Dimensions carried by columns, public name -> (description, label source).
DIMENSIONS: dict[str, str] = {
    "park": "Location (park), by id; the feed adds its name (core.dim_locations).",
    "accommodation_type": "Accommodation type, by id; the feed adds its name.",
    "channel": "Distribution channel, by id; the feed adds its name.",
    "booking_window": "Days from reservation to arrival, bucketed ('0-6 days' ... '180+ days').",
    "currency": "Currency code of the money; money is never summed across currencies.",
}


@dataclass(frozen=True)
class Source:
    """One mart the feed reads: its date column and which dimensions its columns carry."""

    table: str
    date: str
    dims: dict[str, str]
    note: str = ""
    # a grid from the build's as-of date on: a ratio over another source covers those nights only
    from_as_of: bool = False
    time_dims: tuple[str, ...] = tuple(TIME_DIMENSIONS)


SOURCES: dict[str, Source] = {
    "sales": Source(
        "marts.sales_daily",
        "date_day",
        {
            "park": "location_id",
            "accommodation_type": "accommodation_type_id",
            "channel": "distribution_channel_id",
            "booking_window": "booking_window",
            "currency": "currency_code",
        },
    ),
    "supply": Source(
        "marts.occupancy_daily",
        "date_day",
        {"park": "location_id", "accommodation_type": "accommodation_type_id"},
        "Supply does not vary by channel, booking window or currency: filtered or split by "
        "those, a ratio over it is that slice's contribution.",
    ),
    "revenue": Source(
        "marts.revenue_daily",
        "date_day",
        {
            "park": "location_id",
            "accommodation_type": "accommodation_type_id",
            "currency": "currency_code",
        },
    ),
    "forecast": Source(
        "marts.forecast_daily",
        "stay_date",
        {"currency": "currency_code"},
        "Stay dates from the build's as-of date on (docs/forecast.md); no park or type split.",
        from_as_of=True,
    ),
    "bookings": Source(
        "marts.cancellations_monthly",
        "month_start",
        {"park": "location_id", "currency": "currency_code"},
        "Monthly: the month is the booking month of reservations_created and _cancelled, the "
        "arrival month of arrivals, the cancellation month of cancellations and their money; "
        "from/to select months by their first day.",
        time_dims=("month", "year"),
    ),
    "orphans": Source(
        "marts.orphan_nights",
        "date_day",
        {"park": "location_id", "accommodation_type": "accommodation_type_id"},
        "Unsold nights from the build's as-of date to 180 days on; an orphan night is one no "
        "stay the rules allow can fill.",
    ),
}


@dataclass(frozen=True)
class Measure:
    name: str
    source: str
    column: str
    kind: Kind

    @property
    def description(self) -> str:
        return MARTS.get(SOURCES[self.source].table, {}).get(self.column, "")


def _m(name: str, source: str, kind: Kind, column: str | None = None) -> Measure:
    return Measure(name, source, column or name, kind)


MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        _m("nights_sold", "sales", "count"),
        _m("nights_available", "supply", "count"),
        _m("owner_hold_nights", "supply", "count"),
        _m("out_of_order_nights", "supply", "count"),
        _m("allotment_held_nights", "supply", "count"),
        _m("sellable_nights", "supply", "count"),
        _m("unsold_nights", "orphans", "count"),
        _m("orphan_nights", "orphans", "count"),
        _m("room_revenue_net", "sales", "money"),
        _m("room_revenue_gross", "sales", "money"),
        _m("commission_net", "sales", "money"),
        _m("commission_gross", "sales", "money"),
        _m("room_revenue_after_commission_net", "sales", "money"),
        _m("room_revenue_after_commission_gross", "sales", "money"),
        _m("total_revenue_net", "revenue", "money"),
        _m("total_revenue_gross", "revenue", "money"),
        _m("cancellation_revenue", "revenue", "money"),
        _m("otb_nights", "forecast", "count"),
        _m("otb_room_revenue", "forecast", "money"),
        _m("stly_otb_nights", "forecast", "count"),
        _m("stly_otb_room_revenue", "forecast", "money"),
        _m("ly_nights_sold", "forecast", "count"),
        _m("ly_room_revenue", "forecast", "money"),
        _m("forecast_nights", "forecast", "count"),
        _m("forecast_room_revenue", "forecast", "money"),
        _m("reservations_created", "bookings", "count"),
        _m("reservations_cancelled", "bookings", "count"),
        _m("arrivals", "bookings", "count"),
        _m("arrival_stay_nights", "bookings", "count"),
        _m("cancellations", "bookings", "count"),
        _m("cancelled_value", "bookings", "money"),
        _m("retained_cancellation_revenue", "bookings", "money"),
    )
}


@dataclass(frozen=True)
class Metric:
    """A measure summed, or numerator / denominator recomputed from their sums."""

    name: str
    label: str
    numerator: str
    denominator: str | None = None
    definition: str = ""

    @property
    def kind(self) -> Literal["count", "money", "ratio"]:
        num = MEASURES[self.numerator].kind
        if self.denominator is None:
            return num
        den = MEASURES[self.denominator].kind
        return "money" if num == "money" and den == "count" else "ratio"

    @property
    def per_currency(self) -> bool:
        """Money involved: every row is of one currency (the feed always splits by it)."""
        return any(MEASURES[m].kind == "money" for m in self.measures)

    @property
    def measures(self) -> tuple[str, ...]:
        return (self.numerator,) + ((self.denominator,) if self.denominator else ())

    @property
    def source(self) -> Source:
        """The source that sets the metric's dimensions (the numerator's)."""
        return SOURCES[MEASURES[self.numerator].source]

    @property
    def dimensions(self) -> tuple[str, ...]:
        return (*self.source.time_dims, *self.source.dims)


def _ratio(name: str, label: str, num: str, den: str, definition: str) -> Metric:
    return Metric(name, label, num, den, definition)


METRICS: dict[str, Metric] = {
    **{n: Metric(n, n.replace("_", " "), n) for n in MEASURES},
    **{
        m.name: m
        for m in (
            _ratio(
                "occupancy",
                "Occupancy",
                "nights_sold",
                "nights_available",
                "nights sold / nights available",
            ),
            _ratio(
                "sellable_occupancy",
                "Sellable occupancy",
                "nights_sold",
                "sellable_nights",
                "nights sold / nights sellable (available less out of order, owner-blocked and "
                "allotment-held)",
            ),
            _ratio(
                "orphan_share",
                "Orphan share of unsold nights",
                "orphan_nights",
                "unsold_nights",
                "orphan nights / unsold nights, from the as-of date on",
            ),
            _ratio(
                "adr_net",
                "ADR excl. VAT",
                "room_revenue_net",
                "nights_sold",
                "room revenue excl. VAT / nights sold, to the cent",
            ),
            _ratio(
                "adr_gross",
                "ADR incl. VAT",
                "room_revenue_gross",
                "nights_sold",
                "room revenue incl. VAT / nights sold, to the cent",
            ),
            _ratio(
                "adr_after_commission_net",
                "Net ADR (after commission, excl. VAT)",
                "room_revenue_after_commission_net",
                "nights_sold",
                "(room revenue - commission), excl. VAT / nights sold, to the cent",
            ),
            _ratio(
                "revpar_net",
                "RevPAR excl. VAT",
                "room_revenue_net",
                "nights_available",
                "room revenue excl. VAT / nights available, to the cent",
            ),
            _ratio(
                "revpar_gross",
                "RevPAR incl. VAT",
                "room_revenue_gross",
                "nights_available",
                "room revenue incl. VAT / nights available, to the cent",
            ),
            _ratio(
                "trevpar_net",
                "TRevPAR excl. VAT",
                "total_revenue_net",
                "nights_available",
                "total revenue excl. VAT / nights available, to the cent",
            ),
            _ratio(
                "commission_share",
                "Commission share",
                "commission_net",
                "room_revenue_net",
                "commission / room revenue, both excl. VAT, in one currency",
            ),
            _ratio(
                "otb_occupancy",
                "Occupancy on the books",
                "otb_nights",
                "nights_available",
                "nights on the books now / nights available",
            ),
            _ratio(
                "forecast_occupancy",
                "Forecast occupancy",
                "forecast_nights",
                "nights_available",
                "forecast nights / nights available (docs/forecast.md)",
            ),
            _ratio(
                "stly_occupancy",
                "Occupancy on the books same time last year",
                "stly_otb_nights",
                "nights_available",
                "last year's nights on the books at the same days before arrival / this "
                "year's nights available",
            ),
            _ratio(
                "cancellation_rate",
                "Cancellation rate",
                "reservations_cancelled",
                "reservations_created",
                "reservations now cancelled / reservations created, by booking month",
            ),
            _ratio(
                "alos",
                "Average length of stay",
                "arrival_stay_nights",
                "arrivals",
                "stay nights / arrivals, by arrival month",
            ),
            _ratio(
                "retained_share",
                "Retained share of cancelled value",
                "retained_cancellation_revenue",
                "cancelled_value",
                "cancellation compensation kept / value cancelled, by cancellation month",
            ),
        )
    },
}


def definitions() -> dict[str, Any]:
    """The whole feed contract as JSON-ready data (`GET /api/metrics`)."""
    return {
        "version": 1,
        "grain": "one row per combination of the requested dimensions (`by`), plus currency "
        "for every metric involving money",
        "money": "decimal strings with two decimals, in the row's currency; never summed across "
        "currencies",
        "dimensions": {**TIME_DIMENSIONS, **DIMENSIONS},
        "sources": {
            name: {
                "table": s.table,
                "date_column": s.date,
                "dimensions": [*s.time_dims, *s.dims],
                "note": s.note,
            }
            for name, s in SOURCES.items()
        },
        "measures": {
            m.name: {
                "source": m.source,
                "table": SOURCES[m.source].table,
                "column": m.column,
                "kind": m.kind,
                "aggregation": "sum",
                "description": m.description,
            }
            for m in MEASURES.values()
        },
        "metrics": {name: metric_definition(metric) for name, metric in METRICS.items()},
    }


def metric_definition(metric: Metric) -> dict[str, Any]:
    aggregation = (
        "sum"
        if metric.denominator is None
        else f"sum({metric.numerator}) / sum({metric.denominator})"
        + (", rounded half away from zero to the cent" if metric.kind == "money" else "")
    )
    return {
        "label": metric.label,
        "kind": metric.kind,
        "measures": list(metric.measures),
        "aggregation": aggregation,
        "per_currency": metric.per_currency,
        "dimensions": list(metric.dimensions),
        "definition": metric.definition or MEASURES[metric.numerator].description,
    }

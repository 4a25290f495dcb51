"""A small warehouse.duckdb with the marts tables, and the figures the dashboard must show."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from warehouse.macros import KPI_WINDOW

TODAY = date(2025, 6, 15)
FIRST, LAST = date(2025, 5, 1), date(2025, 7, 31)
LOCATION = "DUNE<&>"  # markup in a code must come out escaped
TYPES = (("BUNG4", "Bungalow <b>4p</b>", 10), ("CHAL6", "Chalet 6p", 5))

DDL = {
    "marts.occupancy_daily": """
        date_day date, location_id integer, location_code varchar, accommodation_type_id integer,
        accommodation_type_code varchar, nights_available bigint, nights_sold bigint,
        owner_hold_nights bigint, held_nights bigint, occupancy double,
        available_occupancy double
    """,
    "marts.revenue_daily": """
        date_day date, location_id integer, accommodation_type_id integer, currency_code varchar,
        room_revenue_gross decimal(18, 2), room_revenue_net decimal(18, 2),
        room_vat decimal(18, 2), total_revenue_gross decimal(18, 2),
        total_revenue_net decimal(18, 2), total_vat decimal(18, 2),
        commission_gross decimal(18, 2), commission_net decimal(18, 2),
        room_revenue_after_commission_gross decimal(18, 2),
        room_revenue_after_commission_net decimal(18, 2), nights_sold bigint,
        nights_available bigint, adr_gross decimal(18, 2), adr_net decimal(18, 2),
        revpar_gross decimal(18, 2), revpar_net decimal(18, 2), trevpar_gross decimal(18, 2),
        trevpar_net decimal(18, 2), adr_after_commission_gross decimal(18, 2),
        adr_after_commission_net decimal(18, 2), revpar_after_commission_gross decimal(18, 2),
        revpar_after_commission_net decimal(18, 2)
    """,
    "marts.channel_mix_monthly": """
        month_start date, distribution_channel_id integer, distribution_channel_code varchar,
        channel_type varchar, currency_code varchar, nights_sold bigint,
        room_revenue_gross decimal(18, 2), room_revenue_net decimal(18, 2),
        total_revenue_gross decimal(18, 2), total_revenue_net decimal(18, 2),
        commission_gross decimal(18, 2), commission_net decimal(18, 2),
        nights_share double, room_revenue_share double
    """,
    "marts.booking_pace": """
        stay_date date, as_of_date date, currency_code varchar, days_before_arrival integer,
        otb_nights bigint, otb_room_revenue decimal(18, 2), pickup_nights bigint,
        pickup_room_revenue decimal(18, 2), stly_stay_date date, stly_as_of_date date,
        stly_otb_nights bigint, stly_otb_room_revenue decimal(18, 2), pace_nights bigint,
        pace_room_revenue decimal(18, 2)
    """,
    "marts.cancellations_monthly": """
        month_start date, location_id integer, reservations_created bigint,
        reservations_cancelled bigint, reservations_declined bigint, reservations_expired bigint,
        reservations_on_the_books bigint, cancellation_rate double, decline_rate double,
        expiry_rate double, avg_lead_time_days double, arrivals bigint,
        arrival_stay_nights bigint, alos double
    """,
    "marts.rate_availability_daily": """
        date_day date, accommodation_type_id integer, location_id integer, rate_type_id integer,
        currency_code varchar, list_price decimal(18, 2), nights_sold bigint,
        room_revenue decimal(18, 2), realised_adr decimal(18, 2),
        adr_vs_list_price decimal(18, 2), nights_available bigint, remaining_units bigint,
        service_available_units integer
    """,
}
DIMENSIONS_DDL = {
    "core.dim_accommodation_types": """
        accommodation_type_id integer, accommodation_type_code varchar,
        accommodation_type_name varchar, location_id integer, location_code varchar
    """,
    "staging.stg_rate_types": "rate_type_id integer, rate_type_code varchar, rate_type_name varchar",
}
RATE_TYPES = ((1, "STD", "Standard"), (2, "EARLY", "Early booker"))


def sold(code: str, day: date) -> int:
    """Nights sold per type and night: full at weekends, less before today than after."""
    capacity = dict((c, n) for c, _name, n in TYPES)[code]
    if day.weekday() in (4, 5):
        return capacity
    return capacity * (8 if day < TODAY else 5) // 10


def hold(code: str, day: date) -> int:
    return 1 if code == "CHAL6" and day.weekday() not in (4, 5) else 0


def eur_price(day: date) -> Decimal:
    return Decimal("120.00") if day.weekday() in (4, 5) else Decimal("99.50")


GBP_PRICE = Decimal("85.25")


def gross(net: Decimal) -> Decimal:
    """A net amount with 9 % VAT on top (the marts' _gross figures; the dashboard shows net)."""
    return (net * Decimal("1.09")).quantize(Decimal("0.01"))


def days(first: date, last: date) -> Iterator[date]:
    for n in range((last - first).days + 1):
        yield first + timedelta(n)


@dataclass(frozen=True)
class Expected:
    occupancy_last_30: Decimal
    occupancy_next_30: Decimal
    adr_eur_last_30: Decimal
    adr_gbp_last_30: Decimal
    revpar_eur_next_30: Decimal


def expected() -> Expected:
    """The KPI figures, computed here from the generator functions, not from the marts."""
    past = list(days(TODAY - timedelta(30), TODAY - timedelta(1)))
    future = list(days(TODAY, TODAY + timedelta(29)))
    capacity = sum(n for *_x, n in TYPES)

    def occ(period: list[date]) -> Decimal:
        total = sum(sold(code, d) for code, _n, _c in TYPES for d in period)
        return Decimal(total) / (capacity * len(period))

    eur_rev = sum(
        (eur_price(d) * (sold(code, d) - 1) for code, _n, _c in TYPES for d in past), Decimal(0)
    )
    eur_sold = sum(sold(code, d) - 1 for code, _n, _c in TYPES for d in past)
    eur_rev_next = sum(
        (eur_price(d) * (sold(code, d) - 1) for code, _n, _c in TYPES for d in future),
        Decimal(0),
    )
    return Expected(
        occupancy_last_30=occ(past),
        occupancy_next_30=occ(future),
        adr_eur_last_30=eur_rev / eur_sold,
        adr_gbp_last_30=GBP_PRICE,
        revpar_eur_next_30=eur_rev_next / (capacity * len(future)),
    )


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict[str, object]]) -> None:
    if rows:
        batch = pa.Table.from_pylist(rows)  # noqa: F841 (read by name in the query)
        con.execute(f"insert into {table} by name select * from batch")


def make_warehouse(path: Path, *, empty: bool = False, dimensions: bool = True) -> Path:
    con = duckdb.connect(str(path))
    try:
        for schema in ("staging", "core", "marts"):
            con.execute(f"create schema {schema}")
        for table, ddl in (DDL | (DIMENSIONS_DDL if dimensions else {})).items():
            con.execute(f"create table {table} ({ddl})")
        if dimensions:
            _insert(
                con,
                "core.dim_accommodation_types",
                [
                    {
                        "accommodation_type_id": type_id,
                        "accommodation_type_code": code,
                        "accommodation_type_name": name,
                        "location_id": 1,
                        "location_code": LOCATION,
                    }
                    for type_id, (code, name, _n) in enumerate(TYPES, start=1)
                ],
            )
            _insert(
                con,
                "staging.stg_rate_types",
                [
                    {"rate_type_id": i, "rate_type_code": c, "rate_type_name": n}
                    for i, c, n in RATE_TYPES
                ],
            )
        if {"marts.occupancy_daily", "marts.revenue_daily"} <= set(DDL):
            con.execute(KPI_WINDOW)  # published with the marts, as the warehouse build does
        if not empty:
            _fill(con)
    finally:
        con.close()
    return path


def _fill(con: duckdb.DuckDBPyConnection) -> None:
    occupancy, revenue, pace, rates = [], [], [], []
    for type_id, (code, _name, capacity) in enumerate(TYPES, start=1):
        key = {"location_id": 1, "accommodation_type_id": type_id}
        for d in days(FIRST, LAST):
            s, h = sold(code, d), hold(code, d)
            occupancy.append(
                {
                    "date_day": d,
                    **key,
                    "location_code": LOCATION,
                    "accommodation_type_code": code,
                    "nights_available": capacity,
                    "nights_sold": s,
                    "owner_hold_nights": h,
                    "held_nights": 0,
                }
            )
            eur = eur_price(d) * (s - 1)
            for currency, room, n in (("EUR", eur, s - 1), ("GBP", GBP_PRICE, 1)):
                revenue.append(
                    {
                        "date_day": d,
                        **key,
                        "currency_code": currency,
                        # the dashboard shows net of VAT: gross carries 9 % on top
                        "room_revenue_gross": gross(room),
                        "room_revenue_net": room,
                        "total_revenue_gross": gross(room + 10),
                        "total_revenue_net": room + 10,
                        "commission_gross": 0,
                        "commission_net": 0,
                        "nights_sold": n,
                        "nights_available": capacity,
                    }
                )
            for rate_id, *_r in RATE_TYPES:
                # the early-booker rate sells one night at 10 below list; standard the rest
                n = 1 if rate_id == 2 else s - 2
                rates.append(
                    {
                        "date_day": d,
                        **key,
                        "rate_type_id": rate_id,
                        "currency_code": "EUR",
                        "list_price": eur_price(d) + (0 if rate_id == 1 else 10),
                        "nights_sold": n,
                        "room_revenue": eur_price(d) * n,
                        "nights_available": capacity,
                        "remaining_units": capacity - s - h,
                    }
                )
            if d < TODAY:
                continue
            for as_of, share in ((TODAY, 1.0), (TODAY - timedelta(7), 0.75)):
                otb = int((s - 1) * share)
                for currency, nights, price in (("EUR", otb, eur_price(d)), ("GBP", 1, GBP_PRICE)):
                    pace.append(
                        {
                            "stay_date": d,
                            "as_of_date": as_of,
                            "currency_code": currency,
                            "otb_nights": nights,
                            "otb_room_revenue": price * nights,
                            "pickup_nights": nights - int((s - 1) * 0.75)
                            if currency == "EUR"
                            else 0,
                            "stly_otb_nights": max(nights - 2, 0),
                            "stly_otb_room_revenue": price * max(nights - 2, 0),
                        }
                    )
    _insert(con, "marts.occupancy_daily", occupancy)
    _insert(con, "marts.revenue_daily", revenue)
    _insert(con, "marts.booking_pace", pace)
    _insert(con, "marts.rate_availability_daily", rates)
    _insert(
        con,
        "marts.channel_mix_monthly",
        [
            {
                "month_start": date(2025, m, 1),
                "distribution_channel_id": ch_id,
                "distribution_channel_code": code,
                "currency_code": cur,
                "nights_sold": nights,
                "room_revenue_gross": gross(Decimal(revenue_)),
                "room_revenue_net": Decimal(revenue_),
            }
            for m in (4, 5, 6, 7)
            for ch_id, code, cur, nights, revenue_ in (
                (1, "DIRECT", "EUR", 300 + 10 * m, "30000.00"),
                (2, "PORTAL", "EUR", 150, "14000.00"),
                (3, "UKTRAVEL", "GBP", 60, "5100.00"),
            )
        ],
    )
    # two locations a month: the page must re-weight lead time and ALOS, not average them
    _insert(
        con,
        "marts.cancellations_monthly",
        [
            {
                "month_start": date(2025, m, 1),
                "location_id": loc,
                "reservations_created": created,
                "reservations_cancelled": cancelled,
                "reservations_declined": 2,
                "reservations_expired": 1,
                "reservations_on_the_books": booked,
                "avg_lead_time_days": lead,
                "arrivals": arrivals,
                "arrival_stay_nights": nights,
            }
            for m in range(1, 8)
            for loc, created, cancelled, booked, lead, arrivals, nights in (
                (1, 40 + m, 4 + m % 3, 40, 30.0, 40, 260),
                (2, 10, 3, 10, 60.0, 10, 40),
            )
        ],
    )


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    return make_warehouse(tmp_path / "warehouse.duckdb")

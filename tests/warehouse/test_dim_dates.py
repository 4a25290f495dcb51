"""`core.dim_dates` spans the booking dates by the earliest and the latest booking instant, cast
once each: a date is monotone in its instant, so the cast of the min is the min of the casts,
and casting each of a million reservations' instants cost ~0.08 CPU s of every refresh (the
model is rebuilt whole each hour; docs/benchmarks.md, session 19)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import duckdb

from warehouse.macros import MACROS
from warehouse.models import discover_models

N = 3_000


def _warehouse(booked: list[datetime]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    for macro in MACROS:
        con.execute(macro)
    for schema in ("meta", "staging", "core"):
        con.execute(f"create schema {schema}")
    con.execute("create table meta.build_settings (as_of date, range_start date, range_end date)")
    con.execute("insert into meta.build_settings values ('2026-06-01', null, null)")
    con.execute(
        "create table staging.stg_reservations "
        "(arrival_date date, departure_date date, reserved_at timestamptz)"
    )
    con.executemany(
        "insert into staging.stg_reservations values (?, ?, ?)",
        [(date(2026, 7, 1), date(2026, 7, 8), at) for at in booked],
    )
    con.execute("create table staging.stg_journal_entries (mutation_date date)")
    con.execute("insert into staging.stg_journal_entries values ('2026-05-02'), (null)")
    con.execute("create table staging.stg_cash_clearances (clearance_date date)")
    con.execute("insert into staging.stg_cash_clearances values ('2026-05-03')")
    return con


def _booked() -> list[datetime]:
    first = datetime(2025, 12, 31, 23, 59, 59, tzinfo=UTC)  # the last second of a day
    return [first + timedelta(hours=7 * i) for i in range(N)] + [None]  # type: ignore[list-item]


def test_the_calendar_spans_the_booking_dates_the_journal_and_the_stays() -> None:
    con = _warehouse(_booked())
    sql = discover_models()["core.dim_dates"].sql
    first, last, days, in_range = (
        con.execute(
            f"select min(date_day), max(date_day), count(*), "
            f"count(*) filter (where is_in_reporting_range) from ({sql})"
        ).fetchone()
        or ()
    )
    # the same bounds as every booking instant cast on its own
    (booked_first, booked_last) = (
        con.execute(
            "select min(cast(reserved_at as date)), max(cast(reserved_at as date)) "
            "from staging.stg_reservations"
        ).fetchone()
        or ()
    )
    assert (first, booked_first) == (date(2025, 12, 31), date(2025, 12, 31))
    assert (
        last
        == booked_last
        == (datetime(2025, 12, 31, 23, 59, 59) + timedelta(hours=7 * (N - 1))).date()
    )
    assert days == (last - first).days + 1
    assert in_range == 7  # the stays' nights, 1 to 7 July


def test_the_bookings_give_the_calendar_two_dates_not_one_each() -> None:
    """The dates the calendar spans besides the stays (`other_dates`): the bookings' first and
    last, the journal's and the clearances', not a cast date per reservation."""
    con = _warehouse(_booked())
    sql = discover_models()["core.dim_dates"].sql
    body = sql[: sql.rindex("select * from final")]
    (rows,) = con.execute(f"{body} select count(*) from other_dates").fetchone() or ()
    assert rows == 2 + 2 + 1  # journal entries 2 (one null), clearances 1

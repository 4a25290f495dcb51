"""The marts read by night x accommodation type narrow an input keyed the same way to the
affected pairs, not to every affected night crossed with every affected type: an hour's 3,364
pairs span 322 nights x 424 types, whose cross takes ~40 times the rows (docs/benchmarks.md,
session 19). A row of another pair reaches only output rows of that pair (each model groups the
input by night x type and joins it on both), which the refresh's filter on the key drops."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from lake.sql import narrow_cte
from warehouse.maintain_keys import _AFFECTED, _QUERY
from warehouse.models import discover_models

D1, D2 = date(2026, 7, 1), date(2026, 7, 2)


@pytest.mark.parametrize(
    ("model", "source", "night"),
    [
        ("marts.rate_availability_daily", "core.fct_availability", "arrival_date"),
        ("marts.occupancy_daily", "core.fct_allotment_pickup_weeks", "stay_date"),
    ],
)
def test_an_input_by_night_and_type_is_read_for_the_affected_pairs(
    model: str, source: str, night: str
) -> None:
    inc = discover_models()[model].incremental
    assert inc is not None and inc.keys == ("date_day", "accommodation_type_id")
    condition = dict(inc.narrows)[source]
    con = duckdb.connect()
    con.execute("create schema core")
    con.execute(f"create table {source} ({night} date, accommodation_type_id bigint, n int)")
    con.execute(
        f"insert into {source} values "
        "(?, 1, 11), (?, 2, 12), (?, 1, 21), (?, 2, 22), (?, null, 13), (null, 1, 31)",
        [D1, D1, D2, D2, D1],
    )
    con.execute("create temp table keys (k0 date, k1 bigint)")
    con.execute("insert into keys values (?, 1), (?, 2), (?, null)", [D1, D2, D2])
    # as the refresh names them (`warehouse.maintain`: one column per key column)
    affected = '(select k0 as "date_day", k1 as "accommodation_type_id" from keys)'
    on = _AFFECTED.sub(affected, condition)
    narrowed = f"({on})" if _QUERY.match(on) else f"(select * from {source} where {on})"
    rows = con.execute(f"select n from {narrowed} order by n").fetchall()
    assert rows == [(11,), (22,)]  # (D1, 1) and (D2, 2); not (D1, 2) nor (D2, 1), nor nulls


def _narrowed_rows(model: str, source: str, table: str, keys: str, affected: str) -> list[int]:
    """The `n` of the rows `model`'s narrows line for `source` reads from `table` (rows) for the
    affected keys `keys` (rows of `k0`, `k1`), named as the refresh names them."""
    inc = discover_models()[model].incremental
    assert inc is not None
    condition = dict(inc.narrows)[source]
    con = duckdb.connect()
    con.execute("create schema core")
    con.execute(f"create table {source} as {table}")
    con.execute(f"create temp table keys as {keys}")
    on = _AFFECTED.sub(affected, condition)
    narrowed = f"({on})" if _QUERY.match(on) else f"(select * from {source} where {on})"
    return [n for (n,) in con.execute(f"select n from {narrowed} order by n").fetchall()]


def test_the_owner_statement_reads_the_stay_nights_of_its_units_months_by_a_range() -> None:
    """By unit, then the nights within each affected month: no month computed per stay night
    (an hour's read 0.110 -> 0.047 CPU s; docs/benchmarks.md, session 21)."""
    inc = discover_models()["marts.owner_statement_monthly"].incremental
    assert inc is not None
    assert "date_trunc" not in dict(inc.narrows)["core.fct_stay_nights"]
    rows = _narrowed_rows(
        "marts.owner_statement_monthly",
        "core.fct_stay_nights",
        "select * from (values (1, date '2026-06-30', 1), (1, date '2026-07-01', 2), "
        "(1, date '2026-07-31', 3), (1, date '2026-08-01', 4), (2, date '2026-07-15', 5), "
        "(null, date '2026-07-15', 6), (3, date '2026-07-15', 7)) as t(unit_id, night_date, n)",
        "select * from (values (1, date '2026-07-01'), (3, date '2026-06-01')) as t(k0, k1)",
        '(select k0 as "unit_id", k1 as "month_start" from keys)',
    )
    assert rows == [2, 3]  # unit 1's July nights; not June's or August's, not unit 2's or 3's


def test_the_unit_nights_read_the_stay_nights_of_their_units_first() -> None:
    """The affected units first, then the pairs: the
    same rows as by the pairs alone, ~20 % less CPU (docs/benchmarks.md, session 21)."""
    rows = _narrowed_rows(
        "core.fct_unit_nights",
        "core.fct_stay_nights",
        "select * from (values (date '2026-07-01', 1, 1), (date '2026-07-02', 1, 2), "
        "(date '2026-07-01', 2, 3), (date '2026-07-02', 2, 4), (date '2026-07-01', null, 5)) "
        "as t(night_date, unit_id, n)",
        "select * from (values (date '2026-07-01', 1), (date '2026-07-02', 2)) as t(k0, k1)",
        '(select k0 as "night_date", k1 as "unit_id" from keys)',
    )
    assert rows == [1, 4]


def test_a_cte_is_narrowed_where_its_own_query_is_not_found_in_comments_or_strings() -> None:
    sql = (
        "-- grid as (a comment)\n"
        "with a as (select 1 as x -- ) in a comment\n"
        "), grid as (\n"
        "    select ')' as q, (x + 1) * 2 as y, x from a -- (\n"
        ")\n"
        "select * from grid"
    )
    narrowed = narrow_cte(sql, "grid", "grid.y = 4")
    assert narrowed.startswith("-- grid as (a comment)\nwith a as (select 1 as x -- )")
    assert duckdb.sql(narrowed).fetchall() == [(")", 4, 1)]
    assert duckdb.sql(narrow_cte(sql, "grid", "grid.y = 5")).fetchall() == []
    # a query stands for the CTE's rows
    assert duckdb.sql(narrow_cte(sql, "a", "select 7 as x")).fetchall() == [(")", 16, 7)]
    with pytest.raises(ValueError, match="no common table expression"):
        narrow_cte(sql, "b", "true")


def test_allotment_pickup_computes_only_the_affected_snapshots_of_a_night() -> None:
    """A night x type's 13 snapshots are not all computed when one is affected (a moved date
    reaches a night at one snapshot, mostly): the grid of allotment nights x snapshots is read
    for the affected keys, with their weeks back (docs/benchmarks.md, session 21)."""
    model = discover_models()["core.fct_allotment_pickup_weeks"]
    inc = model.incremental
    assert inc is not None and inc.keys == ("stay_date", "accommodation_type_id", "weeks_back")
    con = duckdb.connect()
    for schema in ("meta", "core", "staging"):
        con.execute(f"create schema {schema}")
    con.execute("create table meta.build_settings as select date '2026-07-10' as as_of")
    con.execute(
        "create table core.dim_dates as select cast(d as date) as date_day, "
        "true as is_in_reporting_range from generate_series(date '2026-06-01', "
        "date '2026-08-31', interval 1 day) as t(d)"
    )
    con.execute(
        "create table staging.stg_allotments as select * from (values "
        "(1, 7, 3, date '2026-07-01', date '2026-07-04', 2, 5), "
        "(2, 8, 3, date '2026-07-01', date '2026-07-03', 1, 0)) "
        "as t(allotment_id, accommodation_type_id, distribution_channel_id, start_date, "
        "end_date, quantity, release_days)"
    )
    con.execute(
        "create table core.dim_accommodation_types as select * from (values (7, 70), (8, 80)) "
        "as t(accommodation_type_id, location_id)"
    )
    con.execute(
        "create table core.fct_allotment_stay_nights as select * from (values "
        "(9, date '2026-07-02', 7, 3, date '2026-06-20', null, true)) as t(reservation_id, "
        "night_date, accommodation_type_id, distribution_channel_id, booking_date, "
        "cancelled_on, is_on_the_books)"
    )
    con.execute("create temp table keys (k0 date, k1 bigint, k2 integer)")
    con.execute("insert into keys values ('2026-07-02', 7, 3), ('2026-07-02', 8, 0)")
    affected = (
        '(select k0 as "stay_date", k1 as "accommodation_type_id", k2 as "weeks_back" from keys)'
    )
    condition = _AFFECTED.sub(affected, dict(inc.narrows)["grid"])
    narrowed = narrow_cte(model.sql, "grid", condition)
    assert narrowed.rstrip().endswith("select * from final")
    grid = narrowed.rstrip().removesuffix("select * from final")
    read = con.execute(
        f"{grid} select distinct stay_date, accommodation_type_id, weeks_back from grid order by all"
    ).fetchall()
    assert read == [(D2, 7, 3), (D2, 8, 0)]  # not the night's other 12 snapshots each
    whole = con.execute(
        f"select * from ({model.sql}) as m semi join keys as k on k.k0 = m.stay_date "
        "and k.k1 = m.accommodation_type_id and k.k2 = m.weeks_back order by all"
    ).fetchall()
    assert con.execute(f"select * from ({narrowed}) order by all").fetchall() == whole
    assert len(whole) == 2

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

"""The marts read by night x accommodation type narrow an input keyed the same way to the
affected pairs, not to every affected night crossed with every affected type: an hour's 3,364
pairs span 322 nights x 424 types, whose cross takes ~40 times the rows (docs/benchmarks.md,
session 19). A row of another pair reaches only output rows of that pair (each model groups the
input by night x type and joins it on both), which the refresh's filter on the key drops."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

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

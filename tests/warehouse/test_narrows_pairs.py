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

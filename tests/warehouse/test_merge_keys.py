"""A changed customer merge keys the reservations of the customer it names, directly or through
one or two merges (`core.fct_reservations`' header). Written as one query over all the changed
rows: the former expression, a correlated subquery per changed row over every reservation
joined to the merges twice, cost ~0.03 CPU s of an hour with one changed merge
(docs/benchmarks.md, session 19). The keys are the same: checked here against it."""

from __future__ import annotations

import random

import duckdb

from warehouse.maintain_keys import _QUERY
from warehouse.models import discover_models

SOURCE = "staging.stg_customer_merges"
# main's expression before session 19 (one changed row at a time)
FORMER = (
    "unnest((select list(r.reservation_id) from staging.stg_reservations as r "
    "left join staging.stg_customer_merges as m1 on r.customer_id = m1.old_customer_id "
    "left join staging.stg_customer_merges as m2 on m1.customer_id = m2.old_customer_id "
    "where changed.old_customer_id in (r.customer_id, m1.customer_id, m2.customer_id)))"
)


def _keys(con: duckdb.DuckDBPyConnection, expr: str) -> list[int]:
    """The keys as `warehouse.maintain` computes them from `changed` (the changed rows)."""
    rows = "with changed_rows as (select * from changed)"
    if _QUERY.match(expr):
        sql = f"select * from ({rows} {expr}) as q(k)"
    else:
        sql = f"select * from ({rows} select {expr} from changed_rows as changed) as q(k)"
    return [k for (k,) in con.execute(f"select distinct k from ({sql}) order by k").fetchall()]


def _con(
    reservations: list[tuple], merges: list[tuple], changed: list[tuple]
) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create schema staging")
    con.execute("create table staging.stg_reservations (reservation_id bigint, customer_id bigint)")
    con.execute(f"create table {SOURCE} (old_customer_id bigint, customer_id bigint)")
    con.execute("create table changed (old_customer_id bigint, customer_id bigint)")
    if reservations:
        con.executemany("insert into staging.stg_reservations values (?, ?)", reservations)
    if merges:
        con.executemany(f"insert into {SOURCE} values (?, ?)", merges)
    if changed:
        con.executemany("insert into changed values (?, ?)", changed)
    return con


def _expression() -> str:
    inc = discover_models()["core.fct_reservations"].incremental
    assert inc is not None
    expr = inc.expression(SOURCE)
    assert expr is not None
    return expr


def test_a_changed_merge_keys_its_customers_reservations_through_two_merges() -> None:
    expr = _expression()
    assert _QUERY.match(expr)  # one query over every changed row, not one per row
    con = _con(
        # 1 of customer 30 (the changed merge's old customer), 2 of 20 (merged into 30), 3 of
        # 10 (into 20, into 30), 4 of 5 (three merges away), 5 of 99, 6 of no customer
        [(1, 30), (2, 20), (3, 10), (4, 5), (5, 99), (6, None)],
        [(30, 40), (20, 30), (10, 20), (5, 10)],
        [(30, 40), (None, 41)],
    )
    assert _keys(con, expr) == [1, 2, 3] == _keys(con, FORMER)


def test_the_keys_are_the_former_expressions_on_random_merges() -> None:
    expr = _expression()
    rng = random.Random(19)
    for _ in range(40):
        ids = [None, *range(1, 13)]
        reservations = [(r, rng.choice(ids)) for r in range(1, 41)]
        merges = [(rng.choice(ids), rng.choice(ids)) for _ in range(rng.randint(0, 10))]
        changed = [(rng.choice(ids), rng.choice(ids)) for _ in range(rng.randint(0, 4))]
        con = _con(reservations, merges, changed)
        assert _keys(con, expr) == _keys(con, FORMER)

"""The lake's current state narrowed to a few reservations (`lake.sql.narrowed_current_sql`,
what a refresh by reservation reads): the same rows as the whole current state filtered, with
the parent's files read once rather than once per mention of the parent in the rule."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import duckdb
import pyarrow.parquet as pq

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch, two_batches
from warehouse.lake import attach_lake, narrowed_current_sql

MATCH = "(reservation_id in (select k from keys))"


def _by_reservation(columns: tuple[str, ...]) -> str:
    """The rows whose one column holds a key of the temp table `keys`."""
    return f"({columns[0]} in (select k from keys))"


def _scans(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    """How many Parquet scans the physical plan of `sql` holds."""
    plan = "\n".join(row[1] for row in con.execute(f"explain {sql}").fetchall())
    return plan.upper().count("READ_PARQUET")


def test_a_narrowed_child_equals_the_current_state_and_reads_each_table_once(lake: Lake) -> None:
    two_batches(lake)
    con = duckdb.connect()
    attach_lake(con, lake.root)
    con.execute("create temp table keys as select unnest([2, 3]) as k")
    for table in ("reservations", "bill_lines"):
        narrowed = narrowed_current_sql(table, ("reservation_id",), _by_reservation)
        got = sorted(con.execute(f"select * from ({narrowed})").fetchall(), key=repr)
        whole = f"select * from lake_current.{table} where {MATCH}"
        assert got == sorted(con.execute(whole).fetchall(), key=repr), table
        assert got, table
    # the child's rows, the parent's rows and the parent's last full batch: one scan each (the
    # rule names its candidates, and a child its parent, several times: inlined, 21 scans)
    child = narrowed_current_sql("bill_lines", ("reservation_id",), _by_reservation)
    assert _scans(con, f"select * from ({child})") == 3
    con.close()


def test_a_column_only_a_later_file_has_is_read(lake: Lake) -> None:
    """The views reference a column when any file has it (the footers are read until every
    column is found): a first file written without one leaves its rows null there, and the
    later file's values are read."""
    Batch().reference(units=1).reservation(1, "2025-01-01", "2025-01-04", unit_id=1000).flush(
        lake, kind="full"
    )
    Batch().reservation(2, "2025-01-02", "2025-01-05", unit_id=1000).flush(lake)
    first, _ = sorted((lake.root / "reservations").glob("*.parquet"))
    pq.write_table(pq.read_table(first).drop_columns(["reservation_number"]), first)
    con = duckdb.connect()
    attach_lake(con, lake.root)
    numbers = con.execute(
        "select reservation_id, reservation_number is null from lake.reservations order by 1"
    ).fetchall()
    assert numbers == [(1, True), (2, False)], numbers
    con.close()


def _record(type_id: int, day: int, price: str) -> dict[str, list[dict[str, Any]]]:
    key = {"resource_id": type_id, "arrival_date": f"2025-01-{day:02d}", "duration": 2}
    return {
        "availability": [{**key, "location_id": 1, "available_units": 3}],
        "availability_prices": [
            {**key, "rate_type_id": 1, "currency_code": "EUR", "price": Decimal(price)}
        ],
    }


def test_availability_narrowed_by_type_and_arrival_date(lake: Lake) -> None:
    """Narrowed by two columns of the lake's key (accommodation type x arrival date, as the
    availability models are maintained): the same rows as the current state filtered, the
    parent (availability) narrowed by both as well, so each table is read once."""
    first, later = Batch(), Batch()
    for type_id in (10, 11):
        for day in (1, 2, 3):
            for table, rows in _record(type_id, day, "100.00").items():
                first.tables[table] += rows
    first.flush(lake, kind="full")
    for table, rows in _record(10, 2, "120.00").items():  # changed: new prices replace the old
        later.tables[table] += rows
    later.tables["availability"].append(  # gone
        {"resource_id": 11, "arrival_date": "2025-01-03", "duration": 2, "_is_deleted": True}
    )
    later.flush(lake)
    con = duckdb.connect()
    attach_lake(con, lake.root)
    con.execute(
        "create temp table keys as select * from (values (10, date '2025-01-02'), "
        "(11, date '2025-01-03'), (11, date '2025-01-01')) as k(k0, k1)"
    )
    match = (
        "exists (select 1 from keys as _k where _k.k0 is not distinct from resource_id "
        "and _k.k1 is not distinct from arrival_date)"
    )

    def matching(columns: tuple[str, ...]) -> str:
        assert columns == ("resource_id", "arrival_date"), columns  # the parent's names too
        return match

    for table in ("availability", "availability_prices"):
        narrowed = narrowed_current_sql(table, ("resource_id", "arrival_date"), matching)
        got = sorted(con.execute(f"select * from ({narrowed})").fetchall(), key=repr)
        whole = f"select * from lake_current.{table} where {match}"
        assert got == sorted(con.execute(whole).fetchall(), key=repr), table
        assert len(got) == 2, (table, got)  # 10 on the 2nd (its new price), 11 on the 1st
    prices = narrowed_current_sql("availability_prices", ("resource_id", "arrival_date"), matching)
    assert con.execute(f"select price from ({prices}) where resource_id = 10").fetchall() == [
        (Decimal("120.00"),)
    ]
    assert _scans(con, f"select * from ({prices})") == 3
    con.close()


def test_a_narrowed_child_reads_only_its_parents_current_batches(lake: Lake) -> None:
    """A child's current rows come from its parent's current batch: its narrowed read skips
    the files of every other batch (a file holds one batch: its statistics), with the same
    rows. Reservation 2 changed in the later batch: its lines are read from that batch's file
    only; reservation 1, current in the full batch, needs the full batch's file too."""
    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-04", unit_id=1000).reservation(
        2, "2025-01-02", "2025-01-05", unit_id=1001
    ).flush(lake, kind="full")
    Batch().reservation(2, "2025-01-02", "2025-01-06", unit_id=1001, nightly="90.00").flush(lake)
    assert len(list((lake.root / "bill_lines").glob("*.parquet"))) == 2
    con = duckdb.connect()
    attach_lake(con, lake.root)
    for keys, scanned in (([2], ["1 / 2"]), ([1, 2], ["2 / 2"])):
        con.execute(f"create or replace temp table keys as select unnest({keys}) as k")
        # the parent's narrowed state at hand (as a refresh shares it): the one Parquet scan
        # left is the bill lines'
        parent = narrowed_current_sql("reservations", ("reservation_id",), _by_reservation)
        con.execute(f"create or replace temp table parent as {parent}")
        narrowed = narrowed_current_sql(
            "bill_lines",
            ("reservation_id",),
            _by_reservation,
            lambda table, _: "parent" if table == "reservations" else None,
        )
        got = sorted(con.execute(f"select * from ({narrowed})").fetchall(), key=repr)
        whole = f"select * from lake_current.bill_lines where {MATCH}"
        assert got == sorted(con.execute(whole).fetchall(), key=repr), keys
        assert {row[2] for row in got} == set(keys), got  # each reservation's lines
        plan = con.execute(f"explain analyze select * from ({narrowed})").fetchall()[0][1]
        assert re.findall(r"Row Groups Scanned: *(\d+ */ *2)\b", plan) == scanned, (keys, plan)
    con.close()

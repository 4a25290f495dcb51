"""A whole build (and a whole rebuild in a refresh) stores each model maintained by key in the
order of its key (`warehouse.models.Model.table_sql`): a refresh's reads of an hour's keys then
skip the row groups and vectors no affected key is in (docs/benchmarks.md, session 17); all but
those whose header says `-- incremental stored as built` (their sort costs the build more than
it saves: `core.fct_bill_lines`); a header's `-- incremental stored by <columns>` orders by those
(`core.fct_rate_nights`, by night for `marts.rate_availability_daily`: session 18;
`core.fct_stay_nights`, by night for the marts by night x type: session 23)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch, src_model
from tests.warehouse.test_inplace import AS_OF
from warehouse.build import build_warehouse
from warehouse.headers import Incremental
from warehouse.models import discover_models
from warehouse.rebuild import rebuild


def _out_of_order(con: duckdb.DuckDBPyConnection, table: str, keys: tuple[str, ...]) -> int:
    """How many rows of `table` (in storage order, by row id) hold a key below the row before."""
    key = f"row({', '.join(keys)})"
    (count,) = con.execute(
        f"select count(*) from (select {key} as key, lag({key}) over (order by rowid) as before "
        f"from {table}) where before > key"
    ).fetchone() or (0,)
    return int(count)


def test_a_build_stores_every_model_maintained_by_key_in_its_key_order(
    lake: Lake, tmp_path: Path
) -> None:
    batch = Batch().reference(units=40)
    ids = list(range(1, 41))
    random.Random(7).shuffle(ids)  # landed out of key order
    for n, rid in enumerate(ids):
        day = 1 + n % 20
        batch.reservation(rid, f"2025-01-{day:02d}", f"2025-01-{day + 3:02d}", unit_id=rid)
    batch.flush(lake, kind="full")
    path = build_warehouse(tmp_path, as_of=AS_OF).path
    checked = 0
    with duckdb.connect(str(path), read_only=True) as con:
        for model in discover_models().values():
            inc = model.incremental
            if inc is None or model.view or not inc.storage_order:
                continue
            (rows,) = con.execute(f"select count(*) from {model.relation}").fetchone() or (0,)
            checked += rows > 1
            assert _out_of_order(con, model.relation, inc.storage_order) == 0, model.qualified
    assert checked >= 15  # the reservations' models hold rows of many keys


def test_a_whole_rebuild_stores_a_model_by_key_in_its_key_order(tmp_path: Path) -> None:
    con = duckdb.connect()
    con.execute("create schema staging")
    con.execute("create table src as select (i * 7919) % 1000 as k, i as v from range(1000) t(i)")
    con.execute("create table staging.m as select * from src")
    assert _out_of_order(con, "staging.m", ("k",)) > 0
    model = src_model(tmp_path, incremental=Incremental(keys=("k",)))
    rebuild(con, model, compare=False)
    assert _out_of_order(con, "staging.m", ("k",)) == 0
    assert con.execute("select count(*), sum(v) from staging.m").fetchone() == (1000, 499500)


def test_a_model_stored_by_other_columns_is_stored_in_their_order(tmp_path: Path) -> None:
    """`-- incremental stored by <columns>`: a whole rebuild orders by those, not by the key
    (`core.fct_rate_nights`, keyed by type, is stored by night for its reader)."""
    con = duckdb.connect()
    con.execute("create schema core")
    con.execute(
        "create table src as select i % 10 as k, (i * 7919) % 1000 as night from range(1000) t(i)"
    )
    con.execute("create table core.m as select * from src")
    model = src_model(tmp_path, "core", Incremental(keys=("k",), stored_by=("night", "k")))
    rebuild(con, model, compare=False)
    assert _out_of_order(con, "core.m", ("night", "k")) == 0
    assert _out_of_order(con, "core.m", ("k",)) > 0
    assert con.execute("select count(*), sum(night) from core.m").fetchone() == (1000, 499500)
    stored_by = {q: m.incremental.stored_by for q, m in discover_models().items() if m.incremental}
    assert {q: by for q, by in stored_by.items() if by} == {
        "core.fct_rate_nights": ("night_date", "accommodation_type_id", "rate_type_id"),
        # keyed by reservation, read by night x type by four marts (session 23)
        "core.fct_stay_nights": ("night_date", "accommodation_type_id"),
        # by its key, its bill lines sorted before they are spread over nights (session 25)
        "core.fct_bill_line_nights": ("reservation_id",),
    }


def test_a_model_stored_by_its_key_in_a_cte_keeps_that_order_through_an_unnest(
    tmp_path: Path,
) -> None:
    """`-- incremental stored by <columns> in <cte>`: the CTE's rows sorted, then each spread
    over rows of its own by `unnest` (as `core.fct_bill_line_nights` spreads its bill lines over
    their nights), are stored in that order, on several threads and without insertion order kept
    (the build's settings): 400,000 rows out of key order, 1.2 million stored, ten row groups."""
    con = duckdb.connect()
    con.execute("set threads = 4")
    con.execute("set preserve_insertion_order = false")
    con.execute("create schema core")
    con.execute(
        "create table src as select (i * 7919) % 400000 as k, i as v from range(400000) t(i)"
    )
    con.execute("create table core.m as select * from src")
    sql = (
        "with lines as (\n    select k, v from src\n),\n"
        "spread as (\n    select *, unnest(range(0, 3)) as i from lines\n)\n"
        "select k, v + i as v from spread"
    )
    keyed = Incremental(keys=("k",), stored_in="lines")
    model = replace(src_model(tmp_path, "core", keyed), sql=sql)
    rebuild(con, model, compare=False)
    assert _out_of_order(con, "core.m", ("k",)) == 0
    assert con.execute("select count(*), sum(v) from core.m").fetchone() == (
        1_200_000,
        240_000_600_000,
    )
    unsorted = replace(model, incremental=Incremental(keys=("k",), stored_as_built=True))
    rebuild(con, unsorted, compare=False)
    assert _out_of_order(con, "core.m", ("k",)) > 0  # the same query, its rows as they come

"""Booking pace maintained by adding what changed (`warehouse.additive`): a refresh in place
goes by reservation for the pace nights (`core.fct_pace_night_spans`), adds the changed
reservations' new nights to the on-the-books cells (`core.fct_pace_on_the_books`) and subtracts
their old ones, and equals a whole rebuild of the same lake: a stay moved, one cancelled, one
added, one whose currency changed; cells left without nights are gone."""

from __future__ import annotations

import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from tests.incremental.helpers import mart_differences, reference_build
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import GBP_CHANNEL, Batch
from warehouse.build import build_warehouse
from warehouse.headers import Sums
from warehouse.inplace import update_warehouse
from warehouse.models import Model, discover_models

AS_OF = date(2025, 1, 20)
CELLS = "core.fct_pace_on_the_books"
GROUPS = "core.fct_pace_span_groups"
CURRENCIES = "core.dim_pace_currencies"


def _booked(batch: Batch, rid: int, arrival: str, departure: str, **kw: Any) -> Batch:
    modified = kw.pop("modified", "2025-01-05T09:00:00")
    batch.reservation(rid, arrival, departure, unit_id=1000 + rid, **kw)
    batch.tables["reservations"][-1]["modified_date"] = modified
    return batch


def _cells(path: Path, where: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "select as_of_date, stay_date, currency_code, nights_from_history, "
            f"nights_by_current_status, room_revenue_from_history from {CELLS} where {where} "
            "order by all"
        ).fetchall()
    finally:
        con.close()


def _currencies(path: Path) -> list[tuple[Any, ...]]:
    """The grid's currencies with their spans' count, checked against the spans themselves."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        got = con.execute(f"select * from {CURRENCIES} order by all").fetchall()
        spans = con.execute(
            "select currency_code, count(*) from core.fct_pace_night_spans group by all order by all"
        ).fetchall()
    finally:
        con.close()
    assert got == spans
    return got


def _assert_equals_a_whole_rebuild(data_dir: Path, as_of: date = AS_OF) -> None:
    """The refreshed file's core and marts, table by table, against a new build of its lake."""
    reference = data_dir.with_name(f"{data_dir.name}-whole")
    reference.mkdir()
    (reference / "lake").symlink_to(data_dir / "lake")
    whole = reference_build(reference, as_of=as_of)
    for schema in ("core", "marts"):
        assert mart_differences(data_dir / "warehouse.duckdb", whole.path, schema) == {}, schema


def _assert_a_currency_come_or_gone_keys_the_whole_grid(path: Path) -> None:
    """Booking pace's keys from the currencies' changed rows (old and new versions, as a reader
    gets them): a count's move (both versions of EUR) keys nothing; a currency gone or come (one
    version alone) keys every as-of date x stay date of the grid."""
    expr = discover_models()["marts.booking_pace"].incremental.expression(CURRENCIES)
    assert expr is not None
    con = duckdb.connect(str(path), read_only=True)
    try:
        grid = con.execute(
            "select distinct as_of_date, stay_date from marts.booking_pace order by all"
        ).fetchall()
        assert grid
        for rows, want in (
            ("values ('EUR', 3), ('EUR', 5)", []),
            ("values ('EUR', 3), ('EUR', 5), ('GBP', 2)", grid),
            ("values ('USD', 1)", grid),
        ):
            got = con.execute(
                f"with changed_rows as (select * from ({rows}) as c(currency_code, night_spans)) "
                f"select distinct * from ({expr}) order by all"
            ).fetchall()
            assert got == want, rows
    finally:
        con.close()


def test_the_cells_follow_stays_moved_cancelled_added_and_in_another_currency(
    lake: Lake, tmp_path: Path
) -> None:
    first = Batch().reference(units=8)
    _booked(first, 1, "2025-01-25", "2025-01-28", booked="2025-01-02T09:00:00")
    _booked(first, 2, "2025-02-10", "2025-02-12", booked="2025-01-03T09:00:00")
    _booked(first, 3, "2025-03-01", "2025-03-03", booked="2025-01-04T09:00:00", channel=GBP_CHANNEL)
    _booked(first, 4, "2025-02-10", "2025-02-11", booked="2024-12-20T09:00:00", nightly="80.00")
    first.flush(lake, kind="full")
    built = build_warehouse(tmp_path, as_of=AS_OF).path
    # as of 2025-01-20, reservation 1 alone holds 2025-01-25, and 3 alone is in GBP
    assert _cells(built, "as_of_date = date '2025-01-20' and stay_date = date '2025-01-25'") == [
        (date(2025, 1, 20), date(2025, 1, 25), "EUR", 1, 1, 100)
    ]
    assert _cells(built, "currency_code = 'GBP'") != []
    assert [c for c, _ in _currencies(built)] == ["EUR", "GBP"]

    second = Batch()
    # 1 moved to February on Jan 19; 2 cancelled on Jan 19; 5 booked on Jan 19; 3 now in EUR
    # (its history keeps the version before, in today's currency: the GBP cells all go)
    _booked(
        second,
        1,
        "2025-02-01",
        "2025-02-04",
        booked="2025-01-02T09:00:00",
        modified="2025-01-19T10:00:00",
    )
    _booked(
        second,
        2,
        "2025-02-10",
        "2025-02-12",
        status=-12,
        booked="2025-01-03T09:00:00",
        cancelled="2025-01-19T10:00:00",
        modified="2025-01-19T10:00:00",
    )
    _booked(
        second,
        5,
        "2025-02-10",
        "2025-02-13",
        booked="2025-01-19T10:00:00",
        modified="2025-01-19T10:00:00",
    )
    _booked(
        second,
        3,
        "2025-03-01",
        "2025-03-03",
        booked="2025-01-04T09:00:00",
        modified="2025-01-19T10:00:00",
    )
    second.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    how = {q: result.refreshed.get(q) for q in ("core.fct_pace_night_spans", GROUPS, CELLS)}
    assert how == {"core.fct_pace_night_spans": "keys", GROUPS: "sums", CELLS: "sums"}, how
    # the grid's currencies add the changed spans too (not the 8.8 million at large read again):
    # GBP's spans all gone, its row is gone; EUR's count moves with the spans
    assert result.refreshed.get(CURRENCIES) == "sums", result.refreshed
    assert [c for c, _ in _currencies(tmp_path / "warehouse.duckdb")] == ["EUR"]
    _assert_a_currency_come_or_gone_keys_the_whole_grid(tmp_path / "warehouse.duckdb")

    # the cell 1 held alone as of Jan 20 is gone; as of Jan 6 and 13 its old version still
    # counts (with today's allocation of its revenue: none on a night it no longer holds)
    assert _cells(tmp_path / "warehouse.duckdb", "stay_date = date '2025-01-25'") == [
        (date(2025, 1, 6), date(2025, 1, 25), "EUR", 1, 0, 0),
        (date(2025, 1, 13), date(2025, 1, 25), "EUR", 1, 0, 0),
    ]
    assert _cells(tmp_path / "warehouse.duckdb", "currency_code = 'GBP'") == []
    # 2 cancelled and 5 added on 2025-02-10: 4 and 5 on the books as of Jan 20
    assert _cells(
        tmp_path / "warehouse.duckdb",
        "as_of_date = date '2025-01-20' and stay_date = date '2025-02-10'",
    ) == [(date(2025, 1, 20), date(2025, 2, 10), "EUR", 2, 2, 180)]

    _assert_equals_a_whole_rebuild(tmp_path)


def test_a_new_business_date_shifts_the_cells_and_adds_what_the_move_changes(
    lake: Lake, tmp_path: Path
) -> None:
    """Across midnight every snapshot moves: the stored cells move with the date and the groups
    with a bound between a snapshot's old and new date add their difference (`-- incremental
    shifts`, by sums, not rebuilt whole). The nights are grouped by the as-of dates they count
    over (free of the as-of date): with nothing booked the groups stay as they are, with a
    booking they add it at the old date before the move; each equals a whole rebuild at the new
    date (a snapshot now on a Tuesday, the nights of the history's start and of a cancellation
    counted in the right weeks), and so does a move of nine days and one back."""
    first = Batch().reference(units=6)
    _booked(first, 1, "2025-01-25", "2025-01-28", booked="2025-01-02T09:00:00")
    _booked(first, 2, "2025-02-10", "2025-02-12", booked="2024-11-20T09:00:00")
    _booked(
        first,
        3,
        "2025-02-10",
        "2025-02-13",
        status=-12,
        booked="2024-12-03T09:00:00",
        cancelled="2025-01-14T10:00:00",
        modified="2025-01-14T10:00:00",
    )
    first.flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=AS_OF)
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        (groups,) = con.execute(f"select count(*) from {GROUPS}").fetchone() or (0,)
    assert groups > 0

    day = date(2025, 1, 21)
    result = update_warehouse(tmp_path, as_of=day)
    assert GROUPS not in result.refreshed, result.refreshed  # nothing it reads moved
    assert result.refreshed.get(CELLS) == "sums", result.refreshed
    _assert_equals_a_whole_rebuild(tmp_path, day)
    assert _cells(tmp_path / "warehouse.duckdb", "stay_date = date '2025-02-11'") != []

    second = Batch()
    _booked(
        second,
        4,
        "2025-02-11",
        "2025-02-12",
        booked="2025-01-22T01:00:00",
        modified="2025-01-22T01:00:00",
    )
    second.flush(lake)
    later = date(2025, 1, 22)
    result = update_warehouse(tmp_path, as_of=later)
    assert result.refreshed.get(GROUPS) == "sums", result.refreshed
    assert result.refreshed.get(CELLS) == "sums", result.refreshed
    shutil.rmtree(tmp_path.with_name(f"{tmp_path.name}-whole"))
    _assert_equals_a_whole_rebuild(tmp_path, later)

    # more than a week on (every snapshot crosses a bound), then a day back
    for moved in (date(2025, 1, 31), date(2025, 1, 30)):
        result = update_warehouse(tmp_path, as_of=moved)
        assert result.refreshed.get(CELLS) == "sums", result.refreshed
        shutil.rmtree(tmp_path.with_name(f"{tmp_path.name}-whole"))
        _assert_equals_a_whole_rebuild(tmp_path, moved)


def test_a_move_of_more_than_two_years_and_back_equals_a_whole_rebuild(
    lake: Lake, tmp_path: Path
) -> None:
    """The move lists the dates it reaches for each weekly snapshot, however far the date
    moved: 800 days on, a snapshot's old and new dates are more than the snapshots' 742 days
    apart, and the bounds between them (a booking and a cancellation in the weeks after the
    old date) still add their difference; then back to the day after the first date."""
    first = Batch().reference(units=6)
    _booked(
        first,
        1,
        "2025-03-01",
        "2025-03-03",
        status=-12,
        booked="2024-12-03T09:00:00",
        cancelled="2025-02-14T10:00:00",
        modified="2025-02-14T10:00:00",
    )
    _booked(first, 2, "2025-06-10", "2025-06-12", booked="2025-02-01T09:00:00")
    first.flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=AS_OF)
    for moved in (date(2027, 3, 31), date(2025, 1, 21)):
        result = update_warehouse(tmp_path, as_of=moved)
        assert result.refreshed.get(CELLS) == "sums", result.refreshed
        shutil.rmtree(tmp_path.with_name(f"{tmp_path.name}-whole"), ignore_errors=True)
        _assert_equals_a_whole_rebuild(tmp_path, moved)


def test_the_sums_form_is_parsed_and_declared_by_the_cells() -> None:
    models = discover_models()
    cells: Model = models[CELLS]
    assert cells.sums is not None and cells.sums.moved is not None
    assert cells.sums == Sums(
        GROUPS, ("as_of_date", "stay_date", "currency_code"), "as_of_date", cells.sums.moved
    )
    assert cells.sums.moved.startswith("with moved as (") and "\n" not in cells.sums.moved
    assert cells.incremental is None
    groups = models[GROUPS].sums
    assert groups is not None and groups.source == "core.fct_pace_night_spans"
    assert "meta.build_settings" not in models[GROUPS].sql  # a new date leaves the groups
    assert models["core.fct_pace_night_spans"].incremental is not None


def _sums_model(tmp_path: Path, sql: str) -> Model:
    """A model of sums over `core.src` by its column `g` (the engine alone, without a build)."""
    return Model(
        layer="core",
        name="sums",
        path=tmp_path / "sums.sql",
        sql=sql,
        description="",
        deps=frozenset({"core.src"}),
        lake_tables=frozenset(),
        sums=Sums("core.src", ("g",)),
    )


def test_adding_what_changed_equals_the_sums_of_the_new_rows(tmp_path: Path) -> None:
    """The engine alone on a model of sums over a table: a group whose rows all go is removed, a
    new group is added, a null key is a key like any other, and money stays exact."""
    from warehouse.additive import add_sums

    con = duckdb.connect()
    con.execute("create schema core")
    con.execute("create table core.src (id integer, g varchar, v decimal(18, 2))")
    con.execute(
        "insert into core.src values (1, 'a', 1.10), (2, 'a', 2.20), (3, 'b', 0.01), "
        "(4, null, 5.00), (5, null, 0.02)"
    )
    sql = (
        "select g, count(*) as n, cast(sum(v) as decimal(38, 2)) as total "
        "from core.src group by all"
    )
    model = _sums_model(tmp_path, sql)
    con.execute(f"create table core.sums as {sql}")
    # 3 (all of b) and 5 go, 1 changes its amount, 6 starts group c, 7 joins the null group
    con.execute("create temp table removed as select * from core.src where id in (1, 3, 5)")
    con.execute("delete from core.src where id in (1, 3, 5)")
    con.execute("insert into core.src values (1, 'a', 1.15), (6, 'c', 9.99), (7, null, 0.30)")
    con.execute("create temp table added as select * from core.src where id in (1, 6, 7)")
    done = add_sums(
        con, model, sql.replace("core.src", "removed"), sql.replace("core.src", "added")
    )
    assert done.keys == 4  # a, b, c and null moved
    got = con.execute("select * from core.sums order by all").fetchall()
    assert got == con.execute(f"{sql} order by all").fetchall()
    assert [g for g, _, _ in got] == ["a", "c", None]
    # its changed rows: the old and the new version of every row it touched (b's old only)
    assert con.execute(f"select count(*) from {done.changed}").fetchone() == (3 + 3,)


def test_a_changed_key_is_deleted_and_inserted_so_its_row_group_is_not_rewritten(
    tmp_path: Path,
) -> None:
    """The touched keys' rows are deleted and inserted anew, not updated: an update makes the
    checkpoint rewrite the updated columns of every row group a touched key is in (at large ~1.9
    million values an hour, docs/benchmarks.md session 20), a delete+insert only marks the old
    row deleted and writes the new one. Four full row groups, so DuckDB's vacuum (it merges up
    to four neighbours into three) has nothing to merge either."""
    from warehouse.additive import add_sums

    con = duckdb.connect(str(tmp_path / "sums.duckdb"))
    con.execute("create schema core")
    rows = 4 * 122_880  # DuckDB's row group size
    con.execute(
        f"create table core.src as select i as id, i % {rows} as g, "
        f"cast(i % 1000 as decimal(18, 2)) as v from range({rows}) t(i)"
    )
    sql = (
        "select g, count(*) as n, cast(sum(v) as decimal(38, 2)) as total "
        "from core.src group by all"
    )
    con.execute(f"create table core.sums as {sql} order by g")
    con.execute("checkpoint")
    info = "select column_id, segment_id, block_id, block_offset from pragma_storage_info"
    first = f"{info}('core.sums') where row_group_id = 0 order by all"
    stored = con.execute(first).fetchall()
    assert con.execute(
        "select count(distinct row_group_id) from pragma_storage_info('core.sums')"
    ).fetchone() == (4,)
    (g,) = con.execute("select g from core.sums where rowid = 7").fetchone() or (None,)
    con.execute("begin")
    con.execute(f"create temp table removed as select * from core.src where g = {g}")
    con.execute(f"update core.src set v = v + 0.05 where g = {g}")
    con.execute(f"create temp table added as select * from core.src where g = {g}")
    done = add_sums(
        con,
        _sums_model(tmp_path, sql),
        sql.replace("core.src", "removed"),
        sql.replace("core.src", "added"),
    )
    con.execute("commit")
    con.execute("checkpoint")
    assert done is not None and done.keys == 1
    assert con.execute(first).fetchall() == stored  # the first row group as it was written
    got = con.execute("select * from core.sums order by all").fetchall()
    assert got == con.execute(f"{sql} order by all").fetchall()


def test_a_null_sum_is_no_difference_and_leaves_the_model_to_a_whole_rebuild(
    tmp_path: Path,
) -> None:
    """A group whose values are all null sums to null over one side: `x + null` would wipe its
    total, so the engine declines (None), writes nothing, and the refresh rebuilds it whole."""
    from warehouse.additive import add_sums

    con = duckdb.connect()
    con.execute("create schema core")
    con.execute("create table core.src (id integer, g varchar, v decimal(18, 2))")
    con.execute("insert into core.src values (1, 'a', 1.10), (2, 'a', 2.20), (3, 'b', 4.00)")
    sql = "select g, cast(sum(v) as decimal(38, 2)) as total from core.src group by all"
    model = _sums_model(tmp_path, sql)
    con.execute(f"create table core.sums as {sql}")
    before = con.execute("select * from core.sums order by all").fetchall()
    # 3 loses its amount: b's new sum is null, a difference cannot say what b's total becomes
    con.execute("create temp table removed as select * from core.src where id = 3")
    con.execute("update core.src set v = null where id = 3")
    con.execute("create temp table added as select * from core.src where id = 3")
    done = add_sums(
        con, model, sql.replace("core.src", "removed"), sql.replace("core.src", "added")
    )
    assert done is None
    assert con.execute("select * from core.sums order by all").fetchall() == before


def test_a_declined_sum_is_rebuilt_whole_in_the_refresh(
    lake: Lake, tmp_path: Path, monkeypatch: Any
) -> None:
    """When the engine declines (a null sum, as above), the refresh rebuilds the cells whole in
    the same transaction, and they equal a whole rebuild of the same lake."""
    import warehouse.maintain

    first = Batch().reference(units=4)
    _booked(first, 1, "2025-01-25", "2025-01-28", booked="2025-01-02T09:00:00")
    _booked(first, 2, "2025-02-10", "2025-02-12", booked="2025-01-03T09:00:00")
    first.flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=AS_OF)
    second = Batch()
    _booked(
        second,
        1,
        "2025-02-01",
        "2025-02-04",
        booked="2025-01-02T09:00:00",
        modified="2025-01-19T10:00:00",
    )
    second.flush(lake)
    monkeypatch.setattr(warehouse.maintain, "add_sums", lambda *a, **k: None)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed["core.fct_pace_night_spans"] == "keys"
    assert result.refreshed[CELLS] == "whole", result.refreshed

    _assert_equals_a_whole_rebuild(tmp_path)


def _changed_source(sql: str, before: str, gone: str, after: str) -> duckdb.DuckDBPyConnection:
    """`core.src` (id, g, v) holding the rows `before`, `core.sums` built by `sql` over them;
    then the ids `gone` removed (kept in the temp table `removed`) and the rows `after`
    inserted (the temp table `added` holds them)."""
    con = duckdb.connect()
    con.execute("create schema core")
    con.execute("create table core.src (id integer, g varchar, v decimal(18, 2))")
    con.execute(f"insert into core.src values {before}")
    con.execute(f"create table core.sums as {sql}")
    con.execute(f"create temp table removed as select * from core.src where id in {gone}")
    con.execute(f"delete from core.src where id in {gone}")
    con.execute("create temp table added as select * from core.src limit 0")
    con.execute(f"insert into added values {after}")
    con.execute("insert into core.src select * from added")
    return con


class _Recording:
    """A connection that lists the statements it executes."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seen: list[str]) -> None:
        self._con, self._seen = con, seen

    def execute(self, statement: str, *args: Any) -> Any:
        self._seen.append(statement)
        return self._con.execute(statement, *args)


def test_adding_reads_the_table_twice_and_reports_the_rows_it_wrote(tmp_path: Path) -> None:
    """The touched keys' rows are read once (copied out: the old sums, the removed rows) and
    once more by the delete; their new rows come from the copy and the difference, and are the
    added rows as inserted (session 22: four reads of the table before). The same sums as the
    model's SQL over the new rows."""
    from warehouse.additive import add_sums

    sql = "select g, count(*) as n, cast(sum(v) as decimal(38, 2)) as total from core.src group by all"
    con = _changed_source(
        sql,
        "(1, 'a', 1.10), (2, 'a', 2.20), (3, 'b', 0.01)",
        "(1, 3)",
        "(1, 'a', 1.15), (4, 'c', 9.99)",
    )
    seen: list[str] = []

    done = add_sums(
        _Recording(con, seen),  # type: ignore[arg-type]
        _sums_model(tmp_path, sql),
        sql.replace("core.src", "removed"),
        sql.replace("core.src", "added"),
    )
    assert done is not None and done.keys == 3  # a moved, b gone, c new
    table = '"core"."sums"'
    reads = [s for s in seen if table in s and not s.startswith(("describe", "insert"))]
    assert len(reads) == 2 and reads[1].startswith("delete from"), reads
    assert all(s.count(table) == 1 for s in reads), reads
    got = con.execute("select * from core.sums order by all").fetchall()
    assert got == con.execute(f"{sql} order by all").fetchall()
    # the added rows are the table's rows of the touched keys now, in its columns and types
    assert con.execute(f"select * from {done.added} order by all").fetchall() == [
        ("a", 2, Decimal("3.35")),
        ("c", 1, Decimal("9.99")),
    ]
    assert (
        con.execute(f"describe {done.added}").fetchall()
        == con.execute("describe core.sums").fetchall()
    )
    assert con.execute(f"select count(*) from {done.removed}").fetchone() == (2,)


def test_adding_without_rows_copies_none_of_the_table(tmp_path: Path) -> None:
    """Without `rows` (a date's shift: many keys touched, nobody told them) no touched row is
    copied out: the new sums read the table itself, then the delete. The same sums."""
    from warehouse.additive import add_sums

    sql = "select g, cast(sum(v) as decimal(38, 2)) as total from core.src group by all"
    con = _changed_source(sql, "(1, 'a', 1.10), (2, 'b', 2.20)", "(2)", "(2, 'c', 2.20)")
    seen: list[str] = []

    done = add_sums(
        _Recording(con, seen),  # type: ignore[arg-type]
        _sums_model(tmp_path, sql),
        sql.replace("core.src", "removed"),
        sql.replace("core.src", "added"),
        rows=False,
    )
    assert done is not None and done.keys == 2 and done.changed is None
    assert not [s for s in seen if "_removed_" in s], seen
    got = con.execute("select * from core.sums order by all").fetchall()
    assert got == con.execute(f"{sql} order by all").fetchall()

"""Publish first, tidy after: a refresh with `defer_merges` commits without DuckDB's row-group
merges, and `warehouse.tidy.tidy_warehouse` does them afterwards with the same rows; Dagster's
warehouse step runs it last (the `warehouse_tidy` spec of its multi_asset)."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb

from pipelines.warehouse_assets import WarehouseResource, build_warehouse_assets
from pipelines.warehouse_tidy import ROWS_CHECK, TIDY_KEY
from tests.partitioned import materialize
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from warehouse.build import build_warehouse
from warehouse.inplace import update_warehouse
from warehouse.tidy import tidy_warehouse

ROW_GROUP = 122_880
BIG = "meta.big"  # a table of four row groups, two thirds of the first three deleted


def _row_groups(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        (n,) = con.execute(
            f"select count(distinct row_group_id) from pragma_storage_info('{BIG}')"
        ).fetchone() or (0,)
        return int(n)
    finally:
        con.close()


def _big_with_deletes(path: Path) -> None:
    """Add `BIG` to the file: its deleted rows fit the first three groups' live rows in one,
    left unmerged (as a refresh with `defer_merges` leaves them)."""
    con = duckdb.connect(str(path))
    con.execute("create schema if not exists meta")
    con.execute(f"create table {BIG} as select range as i from range({4 * ROW_GROUP})")
    con.execute("checkpoint")
    con.execute("set max_vacuum_tasks = 0")
    con.execute(f"delete from {BIG} where i < {3 * ROW_GROUP} and i % 3 <> 0")
    con.execute("checkpoint")
    con.close()


def _live(path: Path) -> tuple[int, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute(f"select count(*), sum(i) from {BIG}").fetchone()
        assert row is not None
        return int(row[0]), int(row[1])
    finally:
        con.close()


def test_the_tidy_merges_the_row_groups_with_the_same_rows(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    _big_with_deletes(path)
    assert _row_groups(path) == 4
    live = _live(path)

    # a checkpoint with nothing in the log does nothing, forced or not: nothing merges
    con = duckdb.connect(str(path))
    con.execute("checkpoint")
    con.execute("force checkpoint")
    con.close()
    assert _row_groups(path) == 4

    result = tidy_warehouse(tmp_path)
    assert result.merged and not result.skipped
    assert _row_groups(path) == 2
    assert _live(path) == live
    assert result.rows_unchanged and result.rows_before[BIG] == live[0]
    assert result.deleted_rows_before == 2 * ROW_GROUP
    assert result.deleted_rows_after == 0
    assert not (tmp_path / "warehouse.duckdb.wal").exists()
    # the probe that made the checkpoint run is gone
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("select count(*) from duckdb_tables()").fetchone() == (1,)
    con.close()


def test_the_tidy_leaves_a_file_a_reader_holds(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    _big_with_deletes(path)
    reader = duckdb.connect(str(path), read_only=True)
    try:
        result = tidy_warehouse(tmp_path)
    finally:
        reader.close()
    assert not result.merged and result.skipped.startswith("file in use")
    assert _row_groups(path) == 4
    assert tidy_warehouse(tmp_path).merged  # the next tidy merges them
    assert _row_groups(path) == 2


def test_a_refresh_that_defers_leaves_the_merges_to_the_tidy(lake: Lake, tmp_path: Path) -> None:
    Batch().reference(units=2).reservation(1, "2025-01-02", "2025-01-09", unit_id=1000).flush(
        lake, kind="full"
    )
    build_warehouse(tmp_path, as_of=date(2025, 1, 5))
    _big_with_deletes(tmp_path / "warehouse.duckdb")
    Batch().reservation(1, "2025-01-02", "2025-01-10", unit_id=1000).flush(lake)
    main = tmp_path / "main"
    main.mkdir()
    shutil.copytree(tmp_path / "lake", main / "lake")
    shutil.copyfile(tmp_path / "warehouse.duckdb", main / "warehouse.duckdb")

    update_warehouse(main, as_of=date(2025, 1, 6))  # merges in its commit, as before
    assert _row_groups(main / "warehouse.duckdb") == 2
    deferred = update_warehouse(tmp_path, as_of=date(2025, 1, 6), defer_merges=True)
    assert _row_groups(tmp_path / "warehouse.duckdb") == 4
    assert deferred.refreshed  # the marts are refreshed and published before the tidy
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    assert con.execute("select current_setting('max_vacuum_tasks')").fetchone() == (100,)
    con.close()

    assert tidy_warehouse(tmp_path).merged
    assert _row_groups(tmp_path / "warehouse.duckdb") == 2
    assert _live(tmp_path / "warehouse.duckdb") == _live(main / "warehouse.duckdb")


def test_the_tidy_runs_at_the_end_of_every_warehouse_step_with_its_cost_and_check(
    lake: Lake, tmp_path: Path
) -> None:
    assets = build_warehouse_assets()
    assert TIDY_KEY in assets.keys
    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-03", unit_id=1000).flush(
        lake, kind="full"
    )

    def run(as_of: str) -> dg.ExecuteInProcessResult:
        resource = WarehouseResource(data_dir=str(tmp_path), as_of=as_of)
        return materialize([assets], resources={"warehouse": resource})

    first = run("2025-01-01")
    # a refresh that leaves most models as they are (a new date): an asset downstream of the
    # models would be skipped
    _big_with_deletes(tmp_path / "warehouse.duckdb")
    second = run("2025-01-02")
    for result in (first, second):
        assert result.success
        (mat,) = [m for m in result.get_asset_materialization_events() if m.asset_key == TIDY_KEY]
        meta = mat.materialization.metadata
        assert meta["merged"].value is True
        assert meta["cpu_seconds"].value >= 0 and meta["tables"].value > 50
        (check,) = [c for c in result.get_asset_check_evaluations() if c.asset_key == TIDY_KEY]
        assert check.check_name == ROWS_CHECK and check.passed
    refreshed = {
        m.asset_key for m in second.get_asset_materialization_events() if m.asset_key != TIDY_KEY
    }
    assert 0 < len(refreshed) < len(assets.keys) - 1  # only some models were refreshed
    assert meta["deleted_rows_stored_before"].value >= 2 * ROW_GROUP
    assert (
        _row_groups(tmp_path / "warehouse.duckdb") == 2
    )  # the step's refresh deferred, its tidy merged

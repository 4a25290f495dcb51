"""The warehouse refresh of a large lake runs in a child process (pipelines/build_process.py):
same result as in the run's process, the same exceptions, and the same lake state after."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest

from lake.state import AsOf, pending_tables, write_as_of
from lake.store import Lake as StoreLake
from pipelines.build_process import lake_bytes, refresh, refresh_in_child
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from warehouse.refresh import refresh_warehouse


def _lake(data_dir: Path) -> Lake:
    lake = Lake(data_dir)
    batch = Batch().reference(units=3)
    batch.reservation(1, "2025-03-01", "2025-03-04").reservation(2, "2025-03-02", "2025-03-06")
    batch.flush(lake, kind="full")
    moment = datetime(2025, 3, 2, 6, tzinfo=UTC)
    write_as_of(
        StoreLake(data_dir / "lake"),
        "20990101T000000Z-00000001",
        AsOf(date(2025, 3, 2), moment, "h"),
    )
    return lake


def _tables(path: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = con.execute(
            "select table_schema || '.' || table_name from information_schema.tables"
            " where table_schema in ('staging', 'core', 'marts') order by 1"
        ).fetchall()
        return {n: sorted(con.execute(f"select * from {n}").fetchall(), key=repr) for (n,) in names}
    finally:
        con.close()


def test_a_refresh_in_a_child_equals_one_in_process(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    _lake(here), _lake(there)
    assert lake_bytes(here) == lake_bytes(there) > 0
    inline = refresh_warehouse(here)
    child = refresh_in_child(there)
    assert child is not None and inline is not None
    assert child.as_of == inline.as_of == date(2025, 3, 2)
    assert child.row_counts == inline.row_counts
    assert sum(child.row_counts.values()) > 0
    assert _tables(child.path) == _tables(inline.path)
    # the child cleared the pending tables as the run's process would: nothing to do now
    assert pending_tables(StoreLake(there / "lake")) == pending_tables(StoreLake(here / "lake"))
    assert refresh(there, child_from=0) is None


def test_a_small_lake_is_refreshed_in_process_and_errors_cross_over(tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    _lake(data_dir)
    assert refresh(data_dir) is not None  # far below CHILD_BUILD_LAKE_BYTES
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(Exception) as inline:
        refresh_warehouse(not_a_dir)
    with pytest.raises(Exception) as child:
        refresh_in_child(not_a_dir)
    assert type(child.value) is type(inline.value)
    assert str(child.value) == str(inline.value)

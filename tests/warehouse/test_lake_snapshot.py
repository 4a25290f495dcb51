"""A refresh looks at the lake's folders once (`warehouse.lake.lake_snapshot`): its changes, its
views and its record of the files it read (`meta.lake_files`) name the same files. A file that
lands while it runs is not recorded as read, so the next refresh reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

import warehouse.inplace
import warehouse.lake
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_inplace import (
    AS_OF,
    _differences_from_a_whole_rebuild,
    _first_state_copy,
)
from warehouse.inplace import update_warehouse


def _recorded(data_dir: Path) -> set[str]:
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"), read_only=True)
    try:
        return {name for (name,) in con.execute("select file_name from meta.lake_files").fetchall()}
    finally:
        con.close()


def _files(data_dir: Path) -> set[str]:
    return {p.name for p in (data_dir / "lake").glob("*/*.parquet")}


def test_a_file_landing_mid_refresh_is_read_by_the_next_one(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _first_state_copy(first_state, lake, tmp_path)
    Batch().reservation(2, "2025-01-02", "2025-01-07", unit_id=2).flush(lake)
    before = _files(tmp_path)
    describe = warehouse.inplace.describe_models
    landed: list[set[str]] = []

    def land_then_describe(*args: Any, **kwargs: Any) -> Any:
        # after the walk read the lake, before the refresh records what it read
        Batch().reservation(4, "2025-01-03", "2025-01-04", unit_id=4, nightly="80.00").flush(lake)
        landed.append(_files(tmp_path) - before)
        return describe(*args, **kwargs)

    monkeypatch.setattr(warehouse.inplace, "describe_models", land_then_describe)
    update_warehouse(tmp_path, as_of=AS_OF)
    assert landed and landed[0], "the second batch landed no file"
    recorded = _recorded(tmp_path)
    assert before <= recorded
    assert not recorded & landed[0], sorted(recorded & landed[0])  # not read: not recorded
    monkeypatch.setattr(warehouse.inplace, "describe_models", describe)
    second = update_warehouse(tmp_path, as_of=AS_OF)
    assert second.refreshed.get("staging.stg_reservations") == "keys", second.refreshed
    assert _recorded(tmp_path) == _files(tmp_path)
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_the_snapshot_lists_a_folder_and_reads_a_file_version_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "reservations"
    folder.mkdir()
    for name in ("b.parquet", "a.parquet", ".tmp.parquet", "c.txt"):
        (folder / name).write_bytes(b"x")
    stats: list[str] = []
    file_id = warehouse.lake.file_id

    def counted(path: Path) -> tuple[str, int, int] | None:
        stats.append(path.name)
        return file_id(path)

    monkeypatch.setattr(warehouse.lake, "file_id", counted)
    with warehouse.lake.lake_snapshot():
        first = warehouse.lake.table_files(tmp_path, "reservations")
        (folder / "d.parquet").write_bytes(b"x")  # not seen within the snapshot
        assert warehouse.lake.table_files(tmp_path, "reservations") == first
        ids = [warehouse.lake.lake_file_id(p) for p in first + first]
    assert [p.name for p in first] == ["a.parquet", "b.parquet"]
    assert stats == ["a.parquet", "b.parquet"] and ids[:2] == ids[2:]
    # outside a snapshot every call looks again
    assert [p.name for p in warehouse.lake.table_files(tmp_path, "reservations")] == [
        "a.parquet",
        "b.parquet",
        "d.parquet",
    ]

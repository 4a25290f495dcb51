"""The published file records each lake file's columns (`meta.lake_file_columns`), so a
refresh's views of the lake bind tables whose files share their columns from one footer
(`union_by_name = false`) and read only its new files' footers; a file with other columns keeps
the union by name (`warehouse.lake.raw_view_sql`; docs/benchmarks.md, session 18)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

import warehouse.build
import warehouse.lake
from lake.parts import file_id
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_inplace import AS_OF, _differences_from_a_whole_rebuild, _first_state_copy
from warehouse.inplace import update_warehouse
from warehouse.lake import raw_view_sql, table_files


def test_files_of_one_schema_bind_from_one_footer_and_a_new_column_is_read_by_name(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake.write("units", [{"unit_id": 1, "resource_id": 7, "code": "A"}], kind="full")
    lake.write("units", [{"unit_id": 2, "resource_id": 7, "code": "B", "cleaning_status": "OK"}])
    first, second = table_files(lake.root, "units")
    # the first file written before the table had `cleaning_status`
    pq.write_table(pq.read_table(first).drop_columns(["cleaning_status"]), first)
    assert "union_by_name = false" in raw_view_sql("units", [second], {})
    assert "union_by_name = true" in raw_view_sql("units", [second])  # a build: as before
    mixed = raw_view_sql("units", [first, second], {})
    assert "union_by_name = true" in mixed
    with duckdb.connect() as con:  # its own: the module's default connection is shared
        rows = con.execute(f"select unit_id, code, cleaning_status from ({mixed}) order by 1")
        assert rows.fetchall() == [(1, "A", None), (2, "B", "OK")]
    # the columns recorded of a file are taken as they are: its footer is not read
    recorded = {
        ("units", *ident): ("unit_id int64",) for f in (first, second) if (ident := file_id(f))
    }
    monkeypatch.setattr(warehouse.lake, "_footer_schema", None)  # any footer read fails
    both = raw_view_sql("units", [first, second], recorded)
    assert "union_by_name = false" in both and 'null as VARCHAR) as "code"' in both


def test_files_of_other_columns_recorded_are_read_by_name_without_their_footers(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files with other columns, all recorded: the union by name takes the columns present from
    the record (`file_schema`), as the files of one schema do; no footer is read again."""
    lake.write("units", [{"unit_id": 1, "resource_id": 7, "code": "A"}], kind="full")
    lake.write("units", [{"unit_id": 2, "resource_id": 7, "code": "B"}])
    first, second = table_files(lake.root, "units")
    recorded = {
        ("units", *ident): columns
        for f, columns in ((first, ("unit_id int64",)), (second, ("unit_id int64", "code string")))
        if (ident := file_id(f))
    }

    def no_footer(*args: object, **kwargs: object) -> object:
        raise AssertionError("a footer was read")

    monkeypatch.setattr(pq, "read_schema", no_footer)
    monkeypatch.setattr(warehouse.lake, "_footer_schema", no_footer)
    mixed = raw_view_sql("units", [first, second], recorded)
    assert "union_by_name = true" in mixed
    assert 'cast("code" as VARCHAR) as "code"' in mixed
    assert 'null as BIGINT) as "resource_id"' in mixed


def test_a_refresh_reads_the_footers_of_its_new_files_only(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _first_state_copy(first_state, lake, tmp_path)
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        (unrecorded,) = con.execute(
            "select count(*) from meta.lake_files as f anti join meta.lake_file_columns as c "
            "using (lake_table, file_name, size, mtime_ns)"
        ).fetchone() or (1,)
        lake_files = [c for (c, *_) in con.execute("describe meta.lake_files").fetchall()]
    assert unrecorded == 0  # a build records every file's columns
    # in a table of their own: the file list keeps its columns, which older code inserts
    assert lake_files == ["lake_table", "file_name", "size", "mtime_ns"]
    before = {f for t in warehouse.lake.TABLES for f in table_files(lake.root, t)}
    Batch().reservation(2, "2025-01-02", "2025-01-07", unit_id=2).flush(lake)
    new = {f for t in warehouse.lake.TABLES for f in table_files(lake.root, t)} - before
    read: list[Path] = []
    read_schema = pq.read_schema

    def spy(path: str | Path, *args: object, **kwargs: object) -> object:
        read.append(Path(path))
        return read_schema(path, *args, **kwargs)  # type: ignore[arg-type]

    views: list[str] = []
    attach = warehouse.build.attach_lake

    def attach_spy(con: duckdb.DuckDBPyConnection, *args: object) -> dict[str, int]:
        counts = attach(con, *args)  # type: ignore[arg-type]
        found = con.execute("select sql from duckdb_views() where database_name = 'lake'")
        views.extend(sql for (sql,) in found.fetchall())
        return counts

    warehouse.lake._footer_schema.cache_clear()  # the first state's build read them here
    monkeypatch.setattr(pq, "read_schema", spy)
    monkeypatch.setattr(warehouse.build, "attach_lake", attach_spy)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    monkeypatch.undo()
    assert result.refreshed.get("core.fct_bill_lines") == "keys", result.refreshed
    assert read and set(read) <= new, sorted(set(read) - new)
    reservations = next(v for v in views if "reservations" in v and "_batch_id" in v)
    assert "union_by_name = false" in reservations
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}

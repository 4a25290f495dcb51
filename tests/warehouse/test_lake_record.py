"""The record of the lake files a build read (`meta.lake_files`, `meta.lake_file_columns`): a
refresh writes only the rows of the files that came or went, and the record then holds what a
whole build's record of the same lake holds."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.changes import (
    LAKE_COLUMNS_TABLE,
    LAKE_FILES_TABLE,
    record_build,
    recorded_columns,
)


def _write(lake_dir: Path, table: str, name: str, columns: dict[str, list[object]]) -> None:
    folder = lake_dir / table
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), folder / name)


def _rows(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, tuple[object, ...]]:
    """file name -> (row id, the row) of one record."""
    found = con.execute(f"select rowid, * from {table}").fetchall()
    return {str(row[2]): (row[0], *row[1:]) for row in found}


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create schema meta")
    return con


def _contents(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[object, ...]]:
    return sorted(con.execute(f"select * from {table}").fetchall(), key=str)


def test_a_refresh_records_only_the_files_that_came_and_went(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _write(lake, "reservations", "a.parquet", {"reservation_id": [1, 2]})
    _write(lake, "reservations", "b.parquet", {"reservation_id": [3], "status": [1]})
    _write(lake, "bill_lines", "c.parquet", {"reservation_id": [1]})
    con = _connect()
    record_build(con, lake, [])  # a build: the record written whole
    before = {t: _rows(con, t) for t in (LAKE_FILES_TABLE, LAKE_COLUMNS_TABLE)}
    assert set(before[LAKE_FILES_TABLE]) == {"a.parquet", "b.parquet", "c.parquet"}

    (lake / "reservations" / "a.parquet").unlink()  # folded away by a compaction
    _write(lake, "reservations", "d.parquet", {"reservation_id": [4], "status": [2]})
    record_build(con, lake, [], recorded_columns(con))  # a refresh

    whole = _connect()
    record_build(whole, lake, [])
    for table in (LAKE_FILES_TABLE, LAKE_COLUMNS_TABLE):
        assert _contents(con, table) == _contents(whole, table)
        after = _rows(con, table)
        assert set(after) == {"b.parquet", "c.parquet", "d.parquet"}
        # the files read before and still there keep their rows: not deleted and written again
        for name in ("b.parquet", "c.parquet"):
            assert after[name] == before[table][name], (table, name)
    columns = dict(
        con.execute(f"select file_name, file_columns from {LAKE_COLUMNS_TABLE}").fetchall()
    )
    assert columns["d.parquet"] == ["reservation_id int64", "status int64"]


def test_a_record_holding_a_file_twice_is_written_whole_again(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _write(lake, "reservations", "a.parquet", {"reservation_id": [1]})
    con = _connect()
    record_build(con, lake, [])
    con.execute(f"insert into {LAKE_FILES_TABLE} select * from {LAKE_FILES_TABLE}")
    record_build(con, lake, [], recorded_columns(con))
    whole = _connect()
    record_build(whole, lake, [])
    assert _contents(con, LAKE_FILES_TABLE) == _contents(whole, LAKE_FILES_TABLE)

"""The comparison helpers the equivalence tests stand on (`tests/incremental/helpers.py`): two
warehouse files or two Arrow tables are equal only when they hold the same multiset of rows
(duplicates counted, NULLs equal, every column), and a difference is described by its counts
and a few rows of each side."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa

from tests.incremental.helpers import (
    mart_differences,
    reference_build,
    table_differences,
    warehouse_differences,
)

ROWS = [
    (1, "2025-01-01", Decimal("10.00"), None, [1, 2]),
    (1, "2025-01-01", Decimal("10.00"), None, [1, 2]),  # a duplicate: counted
    (2, "2025-01-02", Decimal("20.50"), "x", None),
]


def _warehouse(path: Path, rows: list[tuple[object, ...]], extra: bool = False) -> Path:
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema marts")
        con.execute(
            "create table marts.m (id bigint, day date, amount decimal(18,2), note varchar, "
            "ids bigint[])"
        )
        con.executemany("insert into marts.m values ($1, $2, $3, $4, $5)", rows)
        if extra:
            con.execute("create table marts.extra (id bigint)")
    finally:
        con.close()
    return path


def test_equal_files_have_no_differences(tmp_path: Path) -> None:
    a = _warehouse(tmp_path / "a.duckdb", ROWS)
    b = _warehouse(tmp_path / "b.duckdb", list(reversed(ROWS)))  # order does not count
    assert mart_differences(a, b) == {}


def test_a_missing_duplicate_a_cent_and_a_null_are_differences(tmp_path: Path) -> None:
    a = _warehouse(tmp_path / "a.duckdb", ROWS)
    b = _warehouse(tmp_path / "b.duckdb", ROWS[1:])
    assert mart_differences(a, b) == {
        "m": {
            "rows": (3, 2),
            "only_a": [
                {
                    "id": 1,
                    "day": date(2025, 1, 1),
                    "amount": Decimal("10.00"),
                    "note": None,
                    "ids": [1, 2],
                }
            ],
            "only_b": [],
            "n_only_a": 1,
            "n_only_b": 0,
        }
    }
    cent = [*ROWS[:2], (2, "2025-01-02", Decimal("20.51"), "x", None)]
    c = _warehouse(tmp_path / "c.duckdb", cent)
    found = mart_differences(a, c)["m"]
    assert isinstance(found, dict) and found["n_only_a"] == found["n_only_b"] == 1
    null = [*ROWS[:2], (2, "2025-01-02", Decimal("20.50"), None, None)]
    d = _warehouse(tmp_path / "d.duckdb", null)
    assert set(mart_differences(a, d)) == {"m"}
    e = _warehouse(tmp_path / "e.duckdb", ROWS, extra=True)
    assert mart_differences(a, e) == {"<models>": {"only_a": [], "only_b": ["extra"]}}


def test_arrow_tables_compare_as_multisets() -> None:
    a = pa.table({"k": [1, 1, 2], "v": ["x", "x", None]})
    assert table_differences(a, pa.table({"k": [2, 1, 1], "v": [None, "x", "x"]})) is None
    fewer = table_differences(a, pa.table({"k": [1, 2], "v": ["x", None]}))
    assert fewer == {
        "rows": (3, 2),
        "only_a": [{"k": 1, "v": "x"}],
        "only_b": [],
        "n_only_a": 1,
        "n_only_b": 0,
    }
    other = table_differences(a, pa.table({"k": [1, 1, 2], "v": ["x", "x", "y"]}))
    assert other is not None and other["n_only_a"] == other["n_only_b"] == 1


def test_every_schema_is_compared_on_one_connection_and_keyed_by_schema(tmp_path: Path) -> None:
    """`warehouse_differences`: what `mart_differences` says of each schema, under
    `schema.model`, for the schemas asked only."""
    a = _warehouse(tmp_path / "a.duckdb", ROWS)
    b = _warehouse(tmp_path / "b.duckdb", ROWS[1:], extra=True)
    for path in (a, b):
        con = duckdb.connect(str(path))
        try:
            con.execute("create schema core")
            con.execute("create table core.c as select 1 as id")
        finally:
            con.close()
    con = duckdb.connect(str(b))
    try:
        con.execute("insert into core.c values (2)")
    finally:
        con.close()
    found = warehouse_differences(a, b, ("core", "marts"))
    expected = {f"marts.{k}": v for k, v in mart_differences(a, b).items()}
    expected |= {f"core.{k}": v for k, v in mart_differences(a, b, "core").items()}
    assert set(found) == {"core.c", "marts.m", "marts.<models>"}
    assert found == expected
    assert set(warehouse_differences(a, b, ("core",))) == {"core.c"}
    assert warehouse_differences(a, a, ("core", "marts")) == {}


def test_the_reference_build_has_the_rows_of_a_whole_build_without_comments(
    tmp_path: Path,
) -> None:
    """`reference_build`: the same rows in every model as `build_warehouse`, and none of the
    `COMMENT ON`s, which a whole build writes (tests/warehouse/test_catalog.py)."""
    from tests.warehouse.lakefixture import Lake
    from tests.warehouse.scenarios import Batch
    from warehouse.build import build_warehouse

    data = tmp_path / "data"
    data.mkdir()
    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-04", unit_id=1).flush(
        Lake(data), kind="full"
    )
    whole = build_warehouse(data, as_of=date(2025, 1, 20))
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "lake").symlink_to(data / "lake")
    built = reference_build(reference, as_of=date(2025, 1, 20))
    assert warehouse_differences(whole.path, built.path, ("staging", "core", "marts")) == {}

    def comments(path: Path) -> int:
        con = duckdb.connect(str(path), read_only=True)
        try:
            ((n,),) = con.execute(
                "select count(*) from duckdb_columns() where comment is not null "
                "and schema_name in ('staging', 'core', 'marts')"
            ).fetchall()
        finally:
            con.close()
        return int(n)

    assert comments(whole.path) > 100
    assert comments(built.path) == 0
    # the patch ends with the reference: the next whole build writes its comments again
    again = tmp_path / "again"
    again.mkdir()
    (again / "lake").symlink_to(data / "lake")
    assert comments(build_warehouse(again, as_of=date(2025, 1, 20)).path) == comments(whole.path)

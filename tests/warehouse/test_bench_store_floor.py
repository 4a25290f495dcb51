"""`bench.store_floor`: the copy it times is every stored table of the warehouse, row for row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from bench.store_floor import copy_tables, main
from tests.incremental.helpers import warehouse_differences
from warehouse.models import LAYERS


def _table_rows(path: Path) -> dict[str, int]:
    """The model schemas' base tables, with their row counts."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = con.execute(
            "select schema_name, table_name from duckdb_tables() where list_contains(?, schema_name)",
            [list(LAYERS)],
        ).fetchall()
        rows = {}
        for schema, name in names:
            ((count,),) = con.execute(f'select count(*) from "{schema}"."{name}"').fetchall()
            rows[f"{schema}.{name}"] = count
        return rows
    finally:
        con.close()


def test_the_copy_is_every_stored_table_and_no_view(
    first_state: tuple[Path, int], tmp_path: Path
) -> None:
    source = first_state[0] / "warehouse.duckdb"
    copies, closing = copy_tables(source, tmp_path / "copy.duckdb")

    # every table equal, row for row; nothing of the views (staging.stg_bill_lines is a view
    # of core.fct_bill_lines) is stored, so they are all the copy lacks
    con = duckdb.connect(str(source), read_only=True)
    try:
        views = {
            f"{schema}.{name}"
            for schema, name in con.execute(
                "select schema_name, view_name from duckdb_views() "
                "where not internal and list_contains(?, schema_name)",
                [list(LAYERS)],
            ).fetchall()
        }
    finally:
        con.close()
    assert "staging.stg_bill_lines" in views
    assert warehouse_differences(source, tmp_path / "copy.duckdb", LAYERS) == {
        f"{schema}.<models>": {
            "only_a": sorted(v.split(".")[1] for v in views if v.startswith(f"{schema}.")),
            "only_b": [],
        }
        for schema in sorted({v.split(".")[0] for v in views})
    }
    tables = _table_rows(source)
    assert len(tables) > 40  # the models' tables of a small build
    assert {c.table: c.rows for c in copies} == tables
    assert closing.table == "(checkpoint)"


def test_the_command_writes_its_figures_and_leaves_no_copy(
    first_state: tuple[Path, int], tmp_path: Path
) -> None:
    data_dir = tmp_path / "the owner's data"  # a quote in the path
    data_dir.mkdir()
    shutil.copy(first_state[0] / "warehouse.duckdb", data_dir / "warehouse.duckdb")
    out = tmp_path / "floor.json"

    result = main(["--data-dir", str(data_dir), "--out", str(out)])

    assert json.loads(out.read_text()) == result
    tables = _table_rows(data_dir / "warehouse.duckdb")
    assert result["tables"] == len(result["copies"]) == len(tables)
    assert result["rows"] == sum(tables.values())
    assert sorted(p.name for p in data_dir.iterdir()) == ["warehouse.duckdb"]


def test_without_a_warehouse_it_says_to_build_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--data-dir", str(tmp_path)])
    assert stopped.value.code == 2
    assert "build one first" in capsys.readouterr().err

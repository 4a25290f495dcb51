"""`bench.store_floor`: the copy it times is every stored table of the warehouse, row for row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from bench.store_floor import copy_tables, main
from warehouse.models import LAYERS


def _tables(path: Path) -> dict[str, tuple[int, int]]:
    """Every base table of the model schemas: (rows, an order-free hash of its rows)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = con.execute(
            "select schema_name, table_name from duckdb_tables() "
            "where database_name = current_database() and list_contains(?, schema_name)",
            [list(LAYERS)],
        ).fetchall()
        out = {}
        for schema, name in names:
            rows, digest = con.execute(
                f'select count(*), coalesce(sum(hash(t)), 0) from "{schema}"."{name}" as t'
            ).fetchone() or (0, 0)
            out[f"{schema}.{name}"] = (rows, int(digest))
        return out
    finally:
        con.close()


def test_the_copy_is_every_stored_table_and_no_view(
    first_state: tuple[Path, int], tmp_path: Path
) -> None:
    source = first_state[0] / "warehouse.duckdb"
    copies, closing = copy_tables(source, tmp_path / "copy.duckdb")

    expected = _tables(source)
    assert len(expected) > 40  # the models' tables of a small build
    assert _tables(tmp_path / "copy.duckdb") == expected
    assert {c.table: c.rows for c in copies} == {t: rows for t, (rows, _) in expected.items()}
    # staging.stg_bill_lines is a view of core.fct_bill_lines: nothing of it is stored
    assert "staging.stg_bill_lines" not in {c.table for c in copies}
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
    assert result["tables"] == len(result["copies"]) == len(_tables(data_dir / "warehouse.duckdb"))
    assert result["rows"] == sum(
        rows for rows, _ in _tables(data_dir / "warehouse.duckdb").values()
    )
    assert sorted(p.name for p in data_dir.iterdir()) == ["warehouse.duckdb"]


def test_without_a_warehouse_it_says_to_build_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--data-dir", str(tmp_path)])
    assert stopped.value.code == 2
    assert "build one first" in capsys.readouterr().err

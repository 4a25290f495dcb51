"""What changed in the lake since the recorded build (`warehouse.changes.lake_changes`): per
table, a view of its new batches' rows, or FULL when one of them is a full batch; whether any
is, asked of every changed table in one statement (docs/benchmarks.md, session 20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_inplace import _first_state_copy
from tests.warehouse.test_inplace_cost import _Recording
from warehouse.build import LAKE_DIR, warehouse_path
from warehouse.changes import FULL, lake_changes


def test_a_full_batch_changes_its_table_whole_and_one_statement_asks(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path
) -> None:
    _first_state_copy(first_state, lake, tmp_path)
    Batch().reservation(2, "2025-01-02", "2025-01-07", unit_id=2).flush(lake)
    Batch().reference(units=4).flush(lake, kind="full")  # the reference tables re-read whole
    seen: list[str] = []
    con: Any = _Recording(duckdb.connect(str(warehouse_path(tmp_path)), read_only=True), seen)
    changes = lake_changes(con, tmp_path / LAKE_DIR)
    assert changes is not None
    for table in ("reservations", "reserved_resources", "bill_lines"):
        assert changes[table] == f"_changed_lake_{table}", changes
        (rows,) = con.execute(f'select count(*) from "_changed_lake_{table}"').fetchone()
        assert rows > 0, table
    for table in ("companies", "locations", "units", "distribution_channels"):
        assert changes[table] == FULL, changes
    assert "customers" not in changes  # no new batch of it
    asked = [s for s in seen if "_batch_kind = 'full'" in s]
    assert len(asked) == 1, asked  # one statement for every table with a view
    con.close()

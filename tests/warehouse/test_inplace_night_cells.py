"""Occupancy's supply from cells: `core.fct_unit_night_cells` (sums over the unit nights per
night x location x type, maintained by adding the changed unit nights' rows);
`marts.occupancy_daily` reads those cells for the nights x types it keys instead of every unit
night of them (4.8 M at large scale). Each refresh equals a whole rebuild of the same lake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_inplace import AS_OF, _differences_from_a_whole_rebuild
from warehouse.build import build_warehouse
from warehouse.inplace import update_warehouse
from warehouse.models import discover_models

NIGHT = "2025-01-03"


def _night(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Occupancy's row of NIGHT (one type) and the cells behind its supply."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {
            "occupancy": con.execute(
                "select nights_available, out_of_order_nights, nights_sold, owner_hold_nights "
                "from marts.occupancy_daily where date_day = $1",
                [NIGHT],
            ).fetchall(),
            "cells": con.execute(
                "select unit_nights, nights_available, out_of_order_nights "
                "from core.fct_unit_night_cells where night_date = $1",
                [NIGHT],
            ).fetchall(),
        }
    finally:
        con.close()


def test_occupancy_reads_the_unit_night_cells_not_the_unit_nights() -> None:
    models = discover_models()
    occupancy = models["marts.occupancy_daily"]
    assert "core.fct_unit_night_cells" in occupancy.deps
    assert "core.fct_unit_nights" not in occupancy.deps
    assert occupancy.incremental is not None
    assert occupancy.incremental.expression("core.fct_unit_night_cells") == (
        "night_date, accommodation_type_id"
    )
    cells = models["core.fct_unit_night_cells"].sums
    assert cells is not None and cells.source == "core.fct_unit_nights"


def test_occupancy_follows_the_changed_unit_night_cells(lake: Lake, tmp_path: Path) -> None:
    batch = Batch().reference(units=4)
    batch.reservation(1, "2025-01-02", "2025-01-05", unit_id=1000)
    batch.reservation(2, "2025-01-01", "2025-01-08", unit_id=1002, category="OWNER")
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=AS_OF)
    before = _night(tmp_path / "warehouse.duckdb")
    assert before == {"occupancy": [(4, 0, 1, 1)], "cells": [(4, 4, 0)]}, before

    # a stay more and a repair that takes a unit out of order over the night: the unit nights
    # that moved move the cells by their difference, occupancy follows the cells that moved
    batch = Batch()
    batch.reservation(3, "2025-01-03", "2025-01-04", unit_id=1001)
    batch.tables["operation_tasks"].append(
        {
            "task_id": 1,
            "unit_id": 1003,
            "out_of_order_from": "2025-01-03",
            "out_of_order_to": "2025-01-05",
            "out_of_order": True,
        }
    )
    batch.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.fct_unit_nights") == "keys", result.refreshed
    assert result.refreshed.get("core.fct_unit_night_cells") == "sums", result.refreshed
    assert result.refreshed.get("marts.occupancy_daily") == "keys", result.refreshed
    after = _night(result.path)
    assert after == {"occupancy": [(4, 1, 2, 1)], "cells": [(4, 4, 1)]}, after
    assert _differences_from_a_whole_rebuild(tmp_path, "repair") == {}

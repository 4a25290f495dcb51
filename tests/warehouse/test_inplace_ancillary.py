"""Ancillary revenue from what each stay adds: `core.fct_ancillary_stay_months` by reservation,
its sums per month x location x currency x category (`core.fct_ancillary_cells`, maintained
by adding the changed stays' rows) and the supply per month x location
(`core.fct_unit_night_months`, sums over the unit nights); the mart is maintained by month x
location from the cells that moved. Each refresh equals a whole rebuild of the same lake."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_inplace import AS_OF, _differences_from_a_whole_rebuild
from warehouse.build import build_warehouse
from warehouse.inplace import update_warehouse

MART = "marts.ancillary_revenue_monthly"
FOOD, SPORT = 900, 901


def _addons(batch: Batch) -> Batch:
    batch.tables["addons"] += [
        {"resource_id": FOOD, "code": "BREAKFAST", "type": "EXTRA", "category_code": "FOOD"},
        {"resource_id": SPORT, "code": "BIKE", "type": "EXTRA", "category_code": "SPORT"},
    ]
    return batch


def _stay(batch: Batch, reservation_id: int, arrival: str, departure: str, **kw: Any) -> Batch:
    """A stay on unit 1000 + reservation_id with the extra lines `kw["extras"]` (resource,
    total) on its bill."""
    extras = kw.pop("extras", ())
    batch.reservation(reservation_id, arrival, departure, unit_id=999 + reservation_id, **kw)
    for resource, total in extras:
        batch.bill_line(
            reservation_id,
            bill_line_type=20,
            resource_type="EXTRA",
            resource_id=resource,
            total=total,
        )
    return batch


def _rows(path: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(
            "select strftime(month_start, '%Y-%m'), addon_category_code, extra_revenue_gross, "
            f"stays, stays_with_addon, nights_available from {MART}"
        ).fetchall()
    finally:
        con.close()
    return {(m, c): tuple(rest) for m, c, *rest in rows}


def test_ancillary_revenue_follows_the_changed_stays(
    lake: Lake, tmp_path: Path, replaced: list[str]
) -> None:
    batch = _addons(Batch().reference(units=4))
    _stay(batch, 1, "2025-01-01", "2025-02-03")  # spans the range: January and February
    _stay(batch, 2, "2025-01-02", "2025-01-05", extras=[(FOOD, "30.00")])
    _stay(batch, 3, "2025-01-06", "2025-01-08")
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=AS_OF)
    before = _rows(tmp_path / "warehouse.duckdb")
    assert before[("2025-01", "FOOD")][:3] == (Decimal("30.00"), 3, 1), before
    assert before[("2025-02", "FOOD")][:3] == (Decimal("0.00"), 1, 0), before

    # stay 3 buys breakfast and a bike, stay 2 a bike more: January's cells move, February's not
    batch = Batch()
    _stay(batch, 2, "2025-01-02", "2025-01-05", extras=[(FOOD, "30.00"), (SPORT, "12.00")])
    _stay(batch, 3, "2025-01-06", "2025-01-08", extras=[(FOOD, "20.00"), (SPORT, "8.00")])
    batch.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.fct_ancillary_stay_months") == "keys", result.refreshed
    assert result.refreshed.get("core.fct_ancillary_cells") == "sums", result.refreshed
    assert result.refreshed.get(MART) == "keys", result.refreshed
    assert '"marts"."ancillary_revenue_monthly"' in replaced, replaced
    after = _rows(result.path)
    assert after[("2025-01", "FOOD")][:3] == (Decimal("50.00"), 3, 2), after
    assert after[("2025-01", "SPORT")][:3] == (Decimal("20.00"), 3, 2), after
    assert after[("2025-02", "FOOD")] == before[("2025-02", "FOOD")], after
    assert _differences_from_a_whole_rebuild(tmp_path, "bought") == {}

    # stay 2 cancelled: its stay and its lines leave January's cells
    batch = Batch()
    _stay(
        batch,
        2,
        "2025-01-02",
        "2025-01-05",
        status=-12,
        cancelled="2024-12-20",
        extras=[(FOOD, "30.00"), (SPORT, "12.00")],
    )
    batch.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.fct_ancillary_cells") == "sums", result.refreshed
    assert result.refreshed.get(MART) == "keys", result.refreshed
    after = _rows(result.path)
    assert after[("2025-01", "FOOD")][:3] == (Decimal("20.00"), 2, 1), after
    assert _differences_from_a_whole_rebuild(tmp_path, "cancelled") == {}

    # a stay departing after the range's last night: the calendar grows (its new nights key
    # the stays with a night on them, not every stay) and the new month's supply comes in
    replaced.clear()
    batch = Batch()
    _stay(batch, 4, "2025-02-01", "2025-02-10", extras=[(SPORT, "15.00")])
    batch.flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.dim_dates") == "whole", result.refreshed
    assert result.refreshed.get("core.fct_ancillary_stay_months") == "keys", result.refreshed
    assert result.refreshed.get("core.fct_unit_night_months") == "sums", result.refreshed
    assert result.refreshed.get(MART) == "keys", result.refreshed
    after = _rows(result.path)
    assert after[("2025-02", "SPORT")][:3] == (Decimal("15.00"), 2, 1), after
    assert after[("2025-02", "SPORT")][3] > before[("2025-02", "SPORT")][3], after
    assert _differences_from_a_whole_rebuild(tmp_path, "longer") == {}

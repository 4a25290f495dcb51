"""A model whose SQL changed (its recorded version another) is rebuilt whole, and its readers
learn what differs from the table it replaced, as after any whole rebuild of a table built
before: the rows that differ (when a reader maps it to its key), else unchanged when the
fingerprint is the same. A header line or a rewrite that keeps the rows then costs the model's
own rebuild, not its readers': at large, the first refresh after session 19's three changed
models took 113 CPU s with 39 models rebuilt whole, 23 with those three (docs/benchmarks.md,
session 19). Every table equals a whole rebuild."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_inplace import (
    AS_OF,
    _differences_from_a_whole_rebuild,
    _first_state_copy,
)
from warehouse.inplace import update_warehouse


def _versions_before(path: Path, *models: str) -> None:
    con = duckdb.connect(str(path))
    try:
        for model in models:
            con.execute(
                "update meta.model_versions set version = 'before' where model = ?", [model]
            )
    finally:
        con.close()


def test_a_changed_models_readers_follow_what_differs(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path
) -> None:
    path = _first_state_copy(first_state, lake, tmp_path)
    _versions_before(path, "core.fct_reservations", "core.dim_dates")
    Batch().reservation(2, "2025-01-02", "2025-01-06", unit_id=2).flush(lake)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed["core.fct_reservations"] == "whole", result.refreshed
    assert result.refreshed["core.dim_dates"] == "whole", result.refreshed
    # by the reservation that changed, not whole: the rebuilt table differs in its row only
    assert result.refreshed["core.fct_stay_nights"] == "keys", result.refreshed
    assert result.refreshed["core.fct_guest_stays"] == "keys", result.refreshed
    assert result.refreshed["marts.revenue_daily"] == "keys", result.refreshed
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_a_changed_model_whose_rows_are_the_same_changes_nothing_for_its_readers(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path
) -> None:
    path = _first_state_copy(first_state, lake, tmp_path)
    _versions_before(path, "core.dim_dates", "core.fct_reservations")
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed == {"core.dim_dates": "whole", "core.fct_reservations": "whole"}
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}

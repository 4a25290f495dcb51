"""What a model maintained by key costs in an in-place refresh (`warehouse.maintain`,
`warehouse.delta`): which rows it copies out, how its delete finds its rows, where its changed
rows live. Each refresh here also equals a whole rebuild of the same lake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

import warehouse.inplace
import warehouse.maintain_keys
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_inplace import (
    AS_OF,
    _differences_from_a_whole_rebuild,
    _first_state_copy,
)
from warehouse.changes import keyed_sources
from warehouse.inplace import update_warehouse
from warehouse.models import discover_models


class _Recording:
    """A connection that records the statements run through it."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seen: list[str]) -> None:
        self._con, self._seen = con, seen

    def execute(self, sql: str, *args: Any) -> Any:
        self._seen.append(" ".join(sql.split()))
        return self._con.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def _record(monkeypatch: Any) -> tuple[list[str], dict[str, str]]:
    """The statements of every delete+insert by key, and the temp objects the walk left (name ->
    'table' or 'view')."""
    statements: list[str] = []
    temps: dict[str, str] = {}
    replace = warehouse.maintain_keys.replace_rows

    def recorded(con: duckdb.DuckDBPyConnection, *args: Any, **kwargs: Any) -> Any:
        return replace(_Recording(con, statements), *args, **kwargs)  # type: ignore[arg-type]

    describe = warehouse.inplace.describe_models

    def seen(con: duckdb.DuckDBPyConnection, *args: Any) -> Any:
        # right after the walk, in its transaction (its temps last until the close)
        found = con.execute(
            "select table_name, table_type from information_schema.tables "
            "where table_catalog = 'temp'"
        )
        temps.update((n, "view" if t == "VIEW" else "table") for n, t in found.fetchall())
        return describe(con, *args)

    monkeypatch.setattr(warehouse.maintain_keys, "replace_rows", recorded)
    monkeypatch.setattr(warehouse.inplace, "describe_models", seen)
    return statements, temps


def test_a_read_model_writes_only_the_rows_that_differ(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: Any
) -> None:
    """A model whose rows a reader takes by key copies the affected keys' old rows with their
    row ids, deletes only the old rows that differ from the new ones, by those ids (not by
    matching every row's key columns again), and inserts only the new rows that differ (a
    key whose rows came back the same is not rewritten). The rows that differ are a table, the removed, added and changed rows views over it. A mart nobody reads
    deletes and inserts by its keys and copies nothing. Equal to a whole rebuild."""
    _first_state_copy(first_state, lake, tmp_path)
    Batch().reservation(2, "2025-01-02", "2025-01-07", unit_id=2).flush(lake)
    statements, temps = _record(monkeypatch)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed["core.fct_stay_nights"] == "keys", result.refreshed
    assert result.refreshed["marts.revenue_daily"] == "keys", result.refreshed
    deletes = {s.split()[2]: s for s in statements if s.startswith("delete from ")}
    inserts = {s.split()[2]: s for s in statements if s.startswith("insert into ")}
    assert "where rowid in (select unnest(_rowids" in deletes['"core"."fct_stay_nights"'], deletes
    assert inserts['"core"."fct_stay_nights"'].endswith(
        'from "_diff_core_fct_stay_nights" where _moved > 0)'
    )
    assert "rowid" not in deletes['"marts"."revenue_daily"'], deletes
    assert temps.get("_old_core_fct_stay_nights") == "table", temps
    assert temps.get("_diff_core_fct_stay_nights") == "table", temps
    for part in ("removed", "added", "changed"):
        assert temps.get(f"_{part}_core_fct_stay_nights") == "view", temps
    assert "_old_marts_revenue_daily" not in temps, sorted(temps)
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_a_model_whose_readers_take_no_rows_by_key_copies_none(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: Any
) -> None:
    """marts.booking_pace is maintained by key, but its one reader, marts.forecast_daily, is
    rebuilt whole whenever it changes: its old rows are not copied out (the copy reads the
    whole table) and it hands its reader a change whole; marts.sales_daily, which no model
    reads, copies none either. fct_stay_nights, whose readers map its rows to their keys, keeps
    them. Equal to a whole rebuild."""
    models = discover_models()
    keyed = keyed_sources(models)
    assert "marts.booking_pace" not in keyed and "marts.sales_daily" not in keyed
    assert "core.fct_stay_nights" in keyed
    assert [q for q, m in models.items() if "marts.booking_pace" in m.deps] == [
        "marts.forecast_daily"
    ]
    assert not [q for q, m in models.items() if "marts.sales_daily" in m.deps]
    _first_state_copy(first_state, lake, tmp_path)
    Batch().reservation(4, "2025-01-03", "2025-01-04", unit_id=4, nightly="80.00").flush(lake)
    _, temps = _record(monkeypatch)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed["marts.sales_daily"] == "keys", result.refreshed
    assert result.refreshed["marts.booking_pace"] == "keys", result.refreshed
    assert result.refreshed["marts.forecast_daily"] == "whole", result.refreshed
    for base in ("marts_sales_daily", "marts_booking_pace"):
        assert f"_old_{base}" not in temps, sorted(temps)
        assert f"_changed_{base}" not in temps, sorted(temps)
    assert temps.get("_old_core_fct_stay_nights") == "table", temps
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_the_removed_and_added_rows_are_kept_apart_only_for_a_model_of_sums(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: Any
) -> None:
    """fct_stay_nights, which models of sums read, keeps its removed and added rows as views
    of their own besides its changed rows; fct_reservations, read by key only, writes its
    changed rows' view alone (a view nobody reads is a statement's cost). Both delete and
    insert only the rows that differ. Equal to a whole rebuild."""
    models = discover_models()
    summed = {m.sums.source for m in models.values() if m.sums is not None}
    assert "core.fct_stay_nights" in summed and "core.fct_reservations" not in summed
    _first_state_copy(first_state, lake, tmp_path)
    Batch().reservation(2, "2025-01-02", "2025-01-06", unit_id=2).flush(lake)
    statements, temps = _record(monkeypatch)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed["core.fct_reservations"] == "keys", result.refreshed
    for part in ("removed", "added", "changed"):
        assert temps.get(f"_{part}_core_fct_stay_nights") == "view", temps
    assert temps.get("_changed_core_fct_reservations") == "view", temps
    assert "_removed_core_fct_reservations" not in temps, sorted(temps)
    assert "_added_core_fct_reservations" not in temps, sorted(temps)
    inserts = {s.split()[2]: s for s in statements if s.startswith("insert into ")}
    assert inserts['"core"."fct_reservations"'].endswith(
        'from "_diff_core_fct_reservations" where _moved > 0)'
    )
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_the_walks_temps_are_left_to_the_close(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: Any
) -> None:
    """The ~240 temp tables and views of an hour's walk are not dropped one statement each
    before the commit: the connection's close drops them (session 20: ~0.04 CPU s)."""
    _first_state_copy(first_state, lake, tmp_path)
    Batch().reservation(2, "2025-01-02", "2025-01-07", unit_id=2).flush(lake)
    run: list[str] = []
    connect = duckdb.connect

    def recording(*args: Any, **kwargs: Any) -> Any:
        return _Recording(connect(*args, **kwargs), run)

    monkeypatch.setattr(warehouse.inplace.duckdb, "connect", recording)
    _, temps = _record(monkeypatch)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed["core.fct_stay_nights"] == "keys", result.refreshed
    assert "_old_core_fct_stay_nights" in temps, sorted(temps)
    assert "commit" in run
    # (a whole rebuild's old table, renamed aside for its diff, is no temp: it is dropped
    # within the transaction, `warehouse.rebuild.rebuild_diffed`)
    dropped = [s for s in run if s.startswith("drop ") and '"_before_' not in s]
    assert not dropped, dropped
    monkeypatch.undo()  # the reference build connects as it always does
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}

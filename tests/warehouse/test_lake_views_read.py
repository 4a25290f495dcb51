"""A refresh gives the lake's catalogs the views of the tables its changed models read only
(`warehouse.changes.lake_tables_read`): each view costs a statement that reads its files'
footers, and an hour's change reaches a third of the lake's tables."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import warehouse.build
import warehouse.inplace
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_inplace import AS_OF, _differences_from_a_whole_rebuild, _first_state_copy
from warehouse.changes import lake_tables_read, model_version
from warehouse.inplace import update_warehouse
from warehouse.lake import with_parents
from warehouse.models import Model, discover_models


def _read(changes: dict[str, str], **kwargs: object) -> set[str]:
    models = discover_models()
    versions: dict[str, str] = kwargs.get("versions") or {  # type: ignore[assignment]
        q: model_version(m) for q, m in models.items()
    }
    existing: set[str] = kwargs.get("existing") or set(models)  # type: ignore[assignment]
    return lake_tables_read(
        models, changes, versions, existing, settings_changed=bool(kwargs.get("settings"))
    )


def _reading(table: str) -> Model:
    return next(m for m in discover_models().values() if table in m.lake_tables)


def test_nothing_changed_reads_no_lake_table() -> None:
    assert _read({}) == set()


def test_a_changed_child_table_reads_it_and_its_parent() -> None:
    # bill lines: `core.fct_bill_lines` reads them with the reservations their current state
    # follows; no other model downstream reads the lake
    assert _read({"bill_lines": "_changed_lake_bill_lines"}) == {"bill_lines", "reservations"}


def test_a_model_of_another_version_or_missing_reads_its_tables() -> None:
    model = _reading("allotments")
    versions = {q: model_version(m) for q, m in discover_models().items()}
    versions[model.qualified] = "older"
    assert _read({}, versions=versions) >= with_parents(set(model.lake_tables))
    existing = set(discover_models()) - {model.qualified}
    assert _read({}, existing=existing) >= with_parents(set(model.lake_tables))
    assert "bill_lines" not in _read({}, existing=existing)


def test_a_refresh_creates_the_views_its_changed_models_read(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _first_state_copy(first_state, lake, tmp_path)
    Batch().reservation(2, "2025-01-02", "2025-01-07", unit_id=2).flush(lake)
    created: list[set[str]] = []
    attach = warehouse.build.attach_lake

    def spy(
        con: duckdb.DuckDBPyConnection,
        lake_dir: Path,
        tables: set[str] | None = None,
        recorded: object = None,
        deferred: set[str] | None = None,
    ):
        counts = attach(con, lake_dir, tables, recorded, deferred)  # type: ignore[arg-type]
        views = con.execute(
            "select view_name from duckdb_views() where database_name = 'lake'"
        ).fetchall()
        created.append({v for (v,) in views})
        return counts

    monkeypatch.setattr(warehouse.build, "attach_lake", spy)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.fct_bill_lines") == "keys", result.refreshed
    (views,) = created
    assert {"reservations", "bill_lines", "reserved_resources"} <= views
    # tables no changed model reads: no view (a whole build has every table's)
    assert not views & {"allotments", "journal_entries", "customers", "offers"}
    # every table's files still counted
    assert len(result.lake_files) > len(views)
    monkeypatch.undo()
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}


def test_a_refresh_creates_a_current_view_only_when_a_statement_names_it(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `lake_current` views of the tables read are created as the walk first names them
    (`warehouse.lake.CurrentOnDemand`), as temp views (the transaction writes the warehouse's
    file, and one transaction writes one database): a reservation's change reads the bill lines,
    the reserved resources and the subjects narrowed to its keys, so their current views are
    never created. Each one created is named by a later statement. Equal to a whole rebuild."""
    _first_state_copy(first_state, lake, tmp_path)
    Batch().reservation(2, "2025-01-02", "2025-01-07", unit_id=2).flush(lake)
    run: list[str] = []
    connect = duckdb.connect

    class Recording:
        def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
            self._con = con

        def execute(self, sql: str, *args: object) -> object:
            run.append(sql)
            return self._con.execute(sql, *args)

        def __getattr__(self, name: str) -> object:
            return getattr(self._con, name)

    monkeypatch.setattr(
        warehouse.inplace.duckdb, "connect", lambda *a, **k: Recording(connect(*a, **k))
    )
    result = update_warehouse(tmp_path, as_of=AS_OF)
    assert result.refreshed.get("core.fct_bill_lines") == "keys", result.refreshed
    assert not [s for s in run if s.startswith("create view lake_current.")]
    made = [
        s.split('"')[1] for s in run if s.startswith('create temp view temp.main."_lake_current_')
    ]
    views = {m.removeprefix("_lake_current_") for m in made}
    assert not views & {"bill_lines", "reserved_resources", "reservation_subjects"}, views
    for name in made:
        at = next(i for i, s in enumerate(run) if name in s)
        assert any(name in s for s in run[at + 1 :]), name
    monkeypatch.undo()
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}

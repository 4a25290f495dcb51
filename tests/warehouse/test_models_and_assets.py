"""The model DAG, the metric dictionary and the Dagster factory."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb

from pipelines.warehouse_assets import WarehouseResource, build_warehouse_assets
from tests.partitioned import materialize
from tests.warehouse.scenarios import Batch
from warehouse.checks import CHECKS
from warehouse.dictionary import MARTS
from warehouse.lake_schema import TABLES
from warehouse.metrics_doc import render_markdown
from warehouse.models import LAYERS, discover_models

DOCS = Path(__file__).parents[2] / "docs" / "metrics.md"


def test_dag_is_derived_from_the_sql() -> None:
    models = discover_models()
    order = list(models)
    assert order.index("core.fct_bill_lines") < order.index("core.fct_reservations")
    assert order.index("marts.occupancy_daily") < order.index("marts.revenue_daily")
    assert models["core.fct_stay_nights"].deps >= {
        "core.fct_reservations",
        "core.fct_bill_line_nights",
    }
    assert models["core.fct_bill_line_nights"].deps >= {"core.fct_bill_lines"}
    assert models["staging.stg_reservations"].lake_tables == {"reservations"}
    assert models["core.fct_reservation_versions"].lake_tables == {"reservations"}
    assert {m.name for m in models.values() if m.layer == "staging"} == {f"stg_{t}" for t in TABLES}
    for m in models.values():
        assert m.layer in LAYERS and m.description, m.qualified
        assert m.sql.rstrip().endswith("select * from final"), m.qualified


def test_dictionary_covers_every_mart_column_and_docs_are_current(tmp_path: Path) -> None:
    from tests.warehouse.lakefixture import Lake
    from warehouse.build import build_warehouse

    Batch().reference(units=1).flush(Lake(tmp_path), kind="full")
    result = build_warehouse(tmp_path)
    marts = {q: r for q, r in result.models.items() if q.startswith("marts.")}
    assert set(MARTS) == set(marts)
    for q, built in marts.items():
        assert [c for c, _ in built.columns] == list(MARTS[q]), q
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        comment = con.execute(
            "select comment from duckdb_columns() where schema_name = 'marts' "
            "and table_name = 'occupancy_daily' and column_name = 'available_occupancy'"
        ).fetchone()
        assert comment and "owner_hold_nights" in comment[0]
        (table_comment,) = con.execute(
            "select comment from duckdb_tables() where schema_name = 'marts' "
            "and table_name = 'revenue_daily'"
        ).fetchone() or ("",)
        assert "currency" in table_comment
    finally:
        con.close()
    assert DOCS.read_text() == render_markdown()


def test_factory_specs_and_materialize(tmp_path: Path) -> None:
    from tests.warehouse.lakefixture import Lake

    assets = build_warehouse_assets()
    models = discover_models()
    # the models, and the tidy at the end of their step (`pipelines.warehouse_tidy`)
    assert {k.path[0] for k in assets.keys} == {"warehouse", "warehouse_tidy"}
    assert len(assets.keys) == len(models) + 1
    spec = next(s for s in assets.specs if s.key.path == ["warehouse", "marts", "occupancy_daily"])
    assert spec.group_name == "warehouse_marts"
    assert set(spec.kinds) == {"duckdb", "sql"}
    assert dg.AssetKey(["warehouse", "core", "fct_unit_nights"]) in {d.asset_key for d in spec.deps}
    stg = next(s for s in assets.specs if s.key.path[-1] == "stg_reservations")
    assert {d.asset_key for d in stg.deps} == {dg.AssetKey(["lake", "reservations"])}
    # the bill lines are read from the lake by the fact; their staging model is its view
    fct = next(s for s in assets.specs if s.key.path[-1] == "fct_bill_lines")
    assert dg.AssetKey(["lake", "bill_lines"]) in {d.asset_key for d in fct.deps}
    stg = next(s for s in assets.specs if s.key.path[-1] == "stg_bill_lines")
    assert {d.asset_key for d in stg.deps} == {dg.AssetKey(["warehouse", "core", "fct_bill_lines"])}
    assert {c.name for c in assets.check_specs} == {*CHECKS, "rows_unchanged"}

    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-03", unit_id=1000).flush(
        Lake(tmp_path), kind="full"
    )
    result = materialize(
        [assets], resources={"warehouse": WarehouseResource(data_dir=str(tmp_path))}
    )
    assert result.success
    mats = {
        tuple(m.asset_key.path): m.metadata
        for m in result.asset_materializations_for_node("warehouse_models")
    }
    meta = mats[("warehouse", "marts", "occupancy_daily")]
    assert meta["dagster/row_count"].value == 2
    assert mats.pop(("warehouse_tidy",))["merged"].value is True  # the step's last
    # Every model's definition explains its columns, the very columns the build made; the
    # materialization then repeats no schema (it would be two thirds of each event's bytes).
    specs = {tuple(s.key.path): s for s in assets.specs}
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        for key, metadata in mats.items():
            assert "dagster/column_schema" not in metadata, key
            columns = specs[key].metadata["dagster/column_schema"].columns
            assert columns and all(c.description for c in columns), key
            built = con.execute(f"select * from {key[1]}.{key[2]} limit 0").description
            assert [c.name for c in columns] == [d[0] for d in built], key
    checks = result.get_asset_check_evaluations()
    assert {c.check_name for c in checks} == {*CHECKS, "rows_unchanged"}
    # no journals in this lake: the bill revenue stays unreconciled, the rest passes
    assert {c.check_name for c in checks if not c.passed} == {"revenue_reconciles_with_journals"}


def test_lake_schema_matches_the_extract_side() -> None:
    """The lake contract seen from both sides: every column the warehouse reads is written
    by the extract assets with the same Arrow type."""
    import pytest

    theirs = pytest.importorskip("lake.tables").TABLES
    from tests.warehouse.lakefixture import arrow_schema

    for table in TABLES:
        written = {f.name: f.type for f in theirs[table].arrow_schema()}
        for f in arrow_schema(table):
            assert written.get(f.name) == f.type, f"{table}.{f.name}"

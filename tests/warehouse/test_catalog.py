"""The catalogue: every lake, staging, core and mart column described, in DuckDB's comments and
in Dagster's column schema of every asset, so a new column without a description fails here."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

from lake.column_docs import lake_column_docs
from lake.tables import TABLES as LAKE_TABLES
from pipelines.definitions import defs
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from warehouse.build import build_warehouse
from warehouse.catalog import undescribed
from warehouse.catalog_doc import render_markdown
from warehouse.dictionary import GRAIN
from warehouse.models import discover_models
from warehouse.probe import model_columns, model_schemas

CATALOG_DOC = Path(__file__).parents[2] / "docs" / "catalog.md"


def test_every_lake_column_is_described_and_codes_are_named() -> None:
    for table in LAKE_TABLES.values():
        docs = lake_column_docs(table, include_pii=True)
        assert set(docs) == {f.name for f in table.arrow_schema(include_pii=True)}
        assert [c for c, text in docs.items() if not text.strip()] == [], table.name
    status = lake_column_docs(LAKE_TABLES["reservations"])["status"]
    assert "-12 = CANCELLED" in status and "21 = DEFINITIVE" in status
    line_type = lake_column_docs(LAKE_TABLES["bill_lines"])["bill_line_type"]
    assert "190 = CANCEL_COMPENSATION" in line_type


def test_every_model_column_is_described() -> None:
    """Without building data: each model built empty, each column looked up."""
    assert undescribed(model_columns()) == []


def test_every_column_of_the_built_warehouse_has_a_comment(tmp_path: Path) -> None:
    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-03", unit_id=1000).flush(
        Lake(tmp_path), kind="full"
    )
    result = build_warehouse(tmp_path)
    assert set(result.models) == set(discover_models())
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        rows = con.execute(
            "select schema_name, table_name, column_name, comment from duckdb_columns() "
            "where database_name = current_database() "
            "and schema_name in ('staging', 'core', 'marts')"
        ).fetchall()
        tables = con.execute(
            "select schema_name || '.' || table_name, comment from duckdb_tables() "
            "where database_name = current_database() "
            "and schema_name in ('staging', 'core', 'marts')"
        ).fetchall()
        status = con.execute(
            "select comment from duckdb_columns() where schema_name = 'staging' "
            "and table_name = 'stg_reservations' and column_name = 'status_code'"
        ).fetchone()
    finally:
        con.close()
    assert len(rows) == sum(len(m.columns) for m in result.models.values()) > 700
    missing = [f"{s}.{t}.{c}" for s, t, c, comment in rows if not (comment or "").strip()]
    assert missing == []
    assert [t for t, comment in tables if not (comment or "").strip()] == []
    assert status and "-13 = DEFINITIVE_CANCELLED" in status[0]
    # the definitions' column lists (the empty build) are the built ones, types included
    for q, built in result.models.items():
        assert model_schemas()[q] == built.columns, q


def test_each_mart_grain_identifies_its_rows(tmp_path: Path) -> None:
    batch = Batch().reference(units=2)
    batch.reservation(1, "2025-01-01", "2025-01-04", unit_id=1000)
    batch.reservation(2, "2025-01-02", "2025-01-05", unit_id=1001)
    batch.flush(Lake(tmp_path), kind="full")
    result = build_warehouse(tmp_path)
    assert set(GRAIN) == {q for q in result.models if q.startswith("marts.")}
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        for q, key in GRAIN.items():
            columns = ", ".join(key)
            (rows, keys) = con.execute(
                f"select count(*), count(distinct ({columns})) from {q}"
            ).fetchone() or (0, 0)
            assert rows == keys, q
        (nights,) = con.execute("select count(*) from marts.occupancy_daily").fetchone() or (0,)
        assert nights > 0
    finally:
        con.close()


def test_catalogue_page_is_current() -> None:
    assert CATALOG_DOC.read_text() == render_markdown()


def _schema(spec: dg.AssetSpec) -> dg.TableSchema:
    schema = spec.metadata.get("dagster/column_schema")
    assert isinstance(schema, dg.TableSchema), spec.key
    return schema


@pytest.mark.parametrize("prefix", ["lake", "warehouse"])
def test_every_asset_has_a_described_column_schema(prefix: str) -> None:
    specs = [
        spec
        for assets in defs.assets or []
        if isinstance(assets, dg.AssetsDefinition)
        for spec in assets.specs
        if spec.key.path[0] == prefix
    ]
    assert len(specs) == (len(LAKE_TABLES) if prefix == "lake" else len(discover_models()))
    for spec in specs:
        columns = _schema(spec).columns
        assert columns, spec.key
        assert [c.name for c in columns if not (c.description or "").strip()] == [], spec.key
    if prefix == "warehouse":
        mart = next(s for s in specs if s.key.path == ["warehouse", "marts", "occupancy_daily"])
        names = [c.name for c in _schema(mart).columns]
        assert names[:2] == ["date_day", "location_id"] and "occupancy" in names


def test_no_description_outlives_its_column() -> None:
    """The other direction: every entry of the core dictionary and of the lake's descriptions
    names a column that exists (a renamed or dropped column leaves no stale text behind)."""
    from lake.column_docs import TABLES as LAKE_DOCS
    from warehouse.dictionary_core import CORE

    columns = model_columns()
    stale = [f"{q}.{c}" for q, docs in CORE.items() for c in docs if c not in columns.get(q, ())]
    assert stale == []
    landed = {n: {c.column for c in t.columns} for n, t in LAKE_TABLES.items()}
    stale = [
        f"{t}.{c}" for t, docs in LAKE_DOCS.items() for c in docs if c not in landed.get(t, ())
    ]
    assert stale == []

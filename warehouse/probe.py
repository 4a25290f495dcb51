"""The columns and types of every model without a lake: each model built empty in memory.

Dagster's column schema of the warehouse assets is known before any run from this, and the
catalogue checks that every column has a description without building data.

Building the models empty costs ~0.4 s of CPU, paid by every process that loads the
definitions (each `reservoir run`, the code location). The answer is kept in a small file in
the user's cache folder (`$XDG_CACHE_HOME/reservoir`, else `~/.cache/reservoir`), named by a
hash of everything the probe sends DuckDB (the lake's empty views, the macros, the settings
table, each model's SQL) and DuckDB's version: a changed model, macro or lake table is a new
name, so a stale answer is never read. A cache folder that cannot be read or written only
costs the probe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from lake.sql import quote_ident
from warehouse import asof
from warehouse.build import SCHEMAS, write_settings
from warehouse.columns import table_columns
from warehouse.lake import attach_lake
from warehouse.macros import MACROS
from warehouse.models import Model, discover_models

NO_LAKE = Path("/nonexistent-lake")  # a folder with no table: every lake view is typed and empty
CACHE_PREFIX = "model-schemas-"

Schemas = dict[str, tuple[tuple[str, str], ...]]


class _Recorder:
    """Takes the place of a DuckDB connection to collect the statements sent to it."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, Any]] = []

    def execute(self, sql: str, parameters: Any = None) -> _Recorder:
        self.statements.append((sql, parameters))
        return self


def _statements(models: dict[str, Model]) -> list[tuple[str, Any]]:
    """Every statement the probe sends DuckDB, in order."""
    con: Any = _Recorder()
    con.execute("set TimeZone = 'UTC'")
    attach_lake(con, NO_LAKE)
    for macro in MACROS:
        con.execute(macro)
    for schema in SCHEMAS:
        con.execute(f"create schema if not exists {quote_ident(schema)}")
    write_settings(con, "probe", asof.WarehouseAsOf(None, asof.NO_RUN_STATE), None)
    for model in models.values():
        name = model.relation
        con.execute(f"create table {name} as select * from (\n{model.sql}\n) limit 0")
    return con.statements


def _probe(statements: list[tuple[str, Any]], models: dict[str, Model]) -> Schemas:
    con = duckdb.connect()
    try:
        for sql, parameters in statements:
            con.execute(sql, parameters)
        columns = table_columns(con)  # one query: each costs the same whatever it asks
        return {q: columns.get(q, ()) for q in models}
    finally:
        con.close()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reservoir"


def cache_key(statements: list[tuple[str, Any]]) -> str:
    """The statements' text (not the settings row's values: no column's type depends on
    them) and DuckDB's version."""
    text = "\n;\n".join([duckdb.__version__, *(sql for sql, _ in statements)])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _read(path: Path, models: dict[str, Model]) -> Schemas | None:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or set(found) != set(models):
        return None
    return {q: tuple((c, t) for c, t in found[q]) for q in models}


def _write(path: Path, schemas: Schemas) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({q: [list(c) for c in cols] for q, cols in schemas.items()}))
        os.replace(tmp, path)  # readers see the whole file or none
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


@cache
def model_schemas() -> Schemas:
    """Qualified model -> its (column, DuckDB type) pairs, in the model's column order."""
    models = discover_models()
    statements = _statements(models)
    path = cache_dir() / f"{CACHE_PREFIX}{cache_key(statements)}.json"
    found = _read(path, models)
    if found is not None:
        return found
    schemas = _probe(statements, models)
    _write(path, schemas)
    return schemas


def model_columns() -> dict[str, list[str]]:
    """Qualified model -> its column names (for `warehouse.catalog`)."""
    return {q: [c for c, _ in cols] for q, cols in model_schemas().items()}

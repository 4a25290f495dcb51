"""`reservoir catalog`: what the warehouse and the lake hold, for an analyst at a terminal.

Without a name, every mart with its grain and what it is for, then the other models and the lake
tables by name; with one, that model's or lake table's columns with their types and
descriptions. It reads the code's catalogue (`warehouse.catalog`, `lake.column_docs`), so it
answers before any run, and says what `COMMENT ON`, Dagster and docs/catalog.md say.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from lake.column_docs import lake_column_docs
from lake.tables import TABLES as LAKE_TABLES
from warehouse.catalog import column_docs
from warehouse.dictionary import GRAIN
from warehouse.lake_schema import duckdb_type
from warehouse.models import discover_models, resolve
from warehouse.probe import model_columns, model_schemas

LAKE_PREFIX = "lake."


class UnknownName(LookupError):
    """No model or lake table has this name; the message lists where to look."""


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


def print_catalog(name: str | None, console: Console | None = None) -> None:
    """The overview, or the columns of `name`; `UnknownName` when there is no such name."""
    console = console or Console()
    if name is None:
        print_overview(console)
    else:
        print_columns(console, name)


def print_overview(console: Console) -> None:
    models = discover_models()
    marts = Table(title="marts: the metrics", show_lines=False)
    for col in ("mart", "grain: one row per", "what it holds"):
        marts.add_column(col, overflow="fold")
    for q, model in models.items():
        if model.layer == "marts":
            marts.add_row(q, " x ".join(GRAIN.get(q, ())), _first_sentence(model.description))
    console.print(marts)
    core = Table(title="core: facts and dimensions")
    for col in ("model", "what it holds"):
        core.add_column(col, overflow="fold")
    for q, model in models.items():
        if model.layer == "core":
            core.add_row(q, _first_sentence(model.description))
    console.print(core)
    staging = ", ".join(m.name for m in models.values() if m.layer == "staging")
    console.print(f"staging (the lake's current state, renamed): {staging}")
    console.print(f"lake tables (every row landed): {', '.join(sorted(LAKE_TABLES))}")
    console.print(
        "reservoir catalog NAME shows the columns of a model (revenue_daily, core.fct_stay_nights)"
        " or a lake table (lake.reservations); docs/catalog.md lists them all."
    )


def print_columns(console: Console, name: str) -> None:
    """The columns of one model or lake table; `UnknownName` when there is none."""
    rows, title, about = _lookup(name)
    table = Table(title=title)
    table.add_column("column", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("description", overflow="fold")
    for column, kind, text in rows:
        table.add_row(column, kind, text)
    console.print(about)
    console.print(table)


def _lookup(name: str) -> tuple[list[tuple[str, str, str]], str, str]:
    models = discover_models()
    if not name.startswith(LAKE_PREFIX):
        try:
            (q,) = resolve({name}, models)
        except ValueError:
            q = ""
        if q:
            docs = column_docs(q, model_columns())
            about = models[q].description
            if q in GRAIN:
                about += f"\nGrain: one row per {' x '.join(GRAIN[q])}."
            return [(c, t, docs[c]) for c, t in model_schemas()[q]], q, about
    table = LAKE_TABLES.get(name.removeprefix(LAKE_PREFIX))
    if table is None:
        raise UnknownName(
            f"no model or lake table is called {name!r}; `reservoir catalog` lists them"
        )
    docs = lake_column_docs(table, include_pii=True)
    rows = [(f.name, duckdb_type(f.type), docs[f.name]) for f in table.arrow_schema(True)]
    about = f"Key: {', '.join(table.key)}." + (
        f" Child of lake.{table.parent}." if table.parent else ""
    )
    return rows, f"lake.{table.name}", about

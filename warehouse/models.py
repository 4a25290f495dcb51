"""Discover the SQL models and derive their DAG from the names they reference.

A model is `models/<layer>/<name>.sql`; it references other models as `<layer>.<name>` and the
lake as `lake.<table>` (every row) or `lake_current.<table>` (current state). Comments are
stripped before parsing, so prose in headers never creates edges.

What a model's header says of how it is stored and maintained (`-- incremental ...`,
`-- materialized as a view`) is read by `warehouse.headers`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lake.sql import order_cte, quote_ident
from warehouse import headers
from warehouse.headers import Incremental, Sums

MODELS_DIR = Path(__file__).parent / "models"
LAYERS: tuple[str, ...] = ("staging", "core", "marts")

_MODEL_REF = re.compile(r"\b(staging|core|marts)\.([a-z_][a-z0-9_]*)\b")
_LAKE_REF = re.compile(r"\blake(?:_current)?\.([a-z_][a-z0-9_]*)\b")
_COMMENT = re.compile(r"--[^\n]*")


@dataclass(frozen=True)
class Model:
    """One SQL model: where it lives, what it reads, and what it says it is."""

    layer: str
    name: str
    path: Path
    sql: str
    description: str
    deps: frozenset[str]
    lake_tables: frozenset[str]
    incremental: Incremental | None = None
    sums: Sums | None = None
    view: bool = False  # `-- materialized as a view`: stored as a view, not a table

    @property
    def qualified(self) -> str:
        return f"{self.layer}.{self.name}"

    @property
    def relation(self) -> str:
        """The model's table (or view) as SQL names it, quoted."""
        return f"{quote_ident(self.layer)}.{quote_ident(self.name)}"

    @property
    def table_sql(self) -> str:
        """The query a whole build stores: a model maintained by key ordered by its key, so a
        refresh's reads of a few keys skip most of the table (DuckDB's min/max per row group,
        and the other columns of the vectors no affected key is in: docs/benchmarks.md,
        session 17), unless its header says `-- incremental stored as built` or `-- incremental
        stored by <columns>` (`warehouse.headers`); `stored by <columns> in <cte>` orders that
        common table expression's rows, which the query keeps. The rows a refresh inserts land at
        the end."""
        order = () if self.incremental is None else self.incremental.storage_order
        if not order:
            return self.sql
        columns = ", ".join(quote_ident(k) for k in order)
        if self.incremental is not None and self.incremental.stored_in:
            return order_cte(self.sql, self.incremental.stored_in, columns)
        return f"select * from (\n{self.sql}\n) order by {columns}"


def parse_model(path: Path) -> Model:
    sql = path.read_text()
    code = _COMMENT.sub("", sql)
    layer, name = path.parent.name, path.stem
    deps = {f"{lyr}.{n}" for lyr, n in _MODEL_REF.findall(code)} - {f"{layer}.{name}"}
    lake_tables = set(_LAKE_REF.findall(code))
    return Model(
        layer=layer,
        name=name,
        path=path,
        sql=sql.strip().rstrip(";"),
        description=headers.description(sql),
        deps=frozenset(deps),
        lake_tables=frozenset(lake_tables),
        incremental=headers.incremental(sql, path),
        sums=headers.sums(sql, path),
        view=headers.view(sql, path, lake_tables),
    )


@cache
def discover_models(models_dir: Path = MODELS_DIR) -> dict[str, Model]:
    """All models keyed by qualified name, in dependency order; fails on unknown refs or cycles."""
    found = {
        m.qualified: m
        for layer in LAYERS
        for m in (parse_model(p) for p in sorted((models_dir / layer).glob("*.sql")))
    }
    for m in found.values():
        missing = m.deps - found.keys()
        if missing:
            raise ValueError(f"{m.qualified} references unknown models {sorted(missing)}")
    return {q: found[q] for q in _topo_order(found)}


def _topo_order(models: dict[str, Model]) -> list[str]:
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(q: str, stack: tuple[str, ...]) -> None:
        if state.get(q) == 2:
            return
        if state.get(q) == 1:
            raise ValueError(f"dependency cycle: {' -> '.join((*stack, q))}")
        state[q] = 1
        for d in sorted(models[q].deps):
            visit(d, (*stack, q))
        state[q] = 2
        order.append(q)

    for q in sorted(models, key=lambda q: (LAYERS.index(models[q].layer), q)):
        visit(q, ())
    return order


def resolve(names: set[str] | frozenset[str], models: dict[str, Model]) -> set[str]:
    """Accept `name` or `layer.name`; return qualified names or raise on unknown ones."""
    by_name = {m.name: q for q, m in models.items()}
    out: set[str] = set()
    for n in names:
        q = n if n in models else by_name.get(n)
        if q is None:
            raise ValueError(f"unknown model {n!r}")
        out.add(q)
    return out


def upstream(names: set[str], models: dict[str, Model]) -> set[str]:
    """The models and everything they read, transitively."""
    out: set[str] = set()
    todo = list(names)
    while todo:
        q = todo.pop()
        if q not in out:
            out.add(q)
            todo.extend(models[q].deps)
    return out


def downstream(names: set[str], models: dict[str, Model]) -> set[str]:
    """The models and everything that reads them, transitively."""
    out = set(names)
    for q, m in models.items():  # dependency order: one pass suffices
        if m.deps & out:
            out.add(q)
    return out


def models_depending_on(tables: set[str], models: dict[str, Model] | None = None) -> set[str]:
    """Models to rebuild when these lake tables changed (for `build_warehouse(only=...)`)."""
    models = models if models is not None else discover_models()
    direct = {q for q, m in models.items() if m.lake_tables & tables}
    return downstream(direct, models)

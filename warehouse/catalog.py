"""What every column of every model means: the one lookup behind the warehouse's
`COMMENT ON COLUMN`s, Dagster's column schema of each model and the catalogue pages.

A column's description comes from, in this order: the metric dictionary (`MARTS`, every mart
column), the core dictionary (`CORE`, the core columns a model computes), the lake's text for a
staging column (`warehouse.dictionary_staging`), or, for a core column that carries a column of
a model it reads under the same name, that model's description (staging models first, then
core ones, each in name order), else that of a staging view of the model (a core model that
reads the lake itself and keeps staging's columns, `core/fct_bill_lines.sql`). The column lists come from the
caller (the file being built, or `warehouse.probe` for the definitions), so a column the
dictionary does not know is an empty description that `tests/warehouse/test_catalog.py` fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from warehouse.dictionary import MARTS
from warehouse.dictionary_core import CORE
from warehouse.dictionary_staging import staging_docs
from warehouse.models import Model, discover_models

# "(key)", "(key part; parent key)": true of the lake table, not of a model that carries it
_KEY_NOTE = re.compile(r"\s*\((?:key|key part|parent key)[^)]*\)|\s*Part of the key\.")

Columns = Mapping[str, Sequence[str]]  # qualified model -> its column names


def describe(qualified: str, column: str, columns: Columns) -> str:
    """The description of one model column ('' when nothing describes it)."""
    models = discover_models()
    return _describe(models[qualified], column, columns, models)


def _describe(model: Model, column: str, columns: Columns, models: dict[str, Model]) -> str:
    q = model.qualified
    explicit = MARTS.get(q, {}).get(column) or CORE.get(q, {}).get(column)
    if explicit:
        return explicit
    if model.layer == "staging":
        return staging_docs(model).get(column, "")
    if model.layer != "core":
        return ""
    # a staging view of this model says what its columns from the lake are
    views = sorted(v for v, m in models.items() if m.view and q in m.deps)
    for dep in [*sorted(model.deps, key=lambda d: (models[d].layer != "staging", d)), *views]:
        if column in columns.get(dep, ()):
            found = _describe(models[dep], column, columns, models)
            if found:
                return _KEY_NOTE.sub("", found)
    return ""


def column_docs(qualified: str, columns: Columns) -> dict[str, str]:
    """Column -> description for every column of one model (in `columns[qualified]` order)."""
    models = discover_models()
    model = models[qualified]
    return {c: _describe(model, c, columns, models) for c in columns.get(qualified, ())}


def undescribed(columns: Columns) -> list[str]:
    """`layer.model.column` of every column without a description (what a test forbids)."""
    return [f"{q}.{c}" for q in columns for c, text in column_docs(q, columns).items() if not text]

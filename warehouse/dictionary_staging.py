"""The staging models' column descriptions, derived from the lake's (`lake.column_docs`).

A staging model renames and casts one lake table and nothing else (docs/layout.md), so each of
its columns means what the lake column it selects means: the model's `final` select is read as
`<lake column> [as <name>]` lines, and the lake's description follows the rename. A staging
column computed from anything else has no lake column to take its text from and is reported
by `tests/warehouse/test_catalog.py`.
"""

from __future__ import annotations

import re
from functools import cache

from lake.column_docs import lake_column_docs
from lake.tables import TABLES as LAKE_TABLES
from warehouse.models import Model, discover_models

_SELECTED = re.compile(r"^\s*([a-z_][a-z0-9_]*)(?:\s+as\s+([a-z_][a-z0-9_]*))?\s*,?\s*$")


def renames(model: Model, *, whole: bool = False) -> dict[str, str]:
    """Staging column -> the lake column it selects, from the model's `final` select (`whole`:
    from every select of the model, for the core model a staging view projects)."""
    _, _, final = ("", "", model.sql) if whole else model.sql.partition("final as (")
    out: dict[str, str] = {}
    for line in final.splitlines():
        found = _SELECTED.match(line)
        if found and found.group(1) not in {"select", "from"}:
            source, name = found.group(1), found.group(2) or found.group(1)
            out[name] = source
    return out


@cache
def staging_docs(model: Model) -> dict[str, str]:
    """Column -> description of a staging model (empty when its lake table is unknown). A
    staging view (`-- materialized as a view`) selects its columns by name from the one model
    it reads, which renames them from the lake (`core/fct_bill_lines.sql`)."""
    source = discover_models()[min(model.deps)] if model.view and model.deps else model
    (table,) = source.lake_tables or ("",)
    if table not in LAKE_TABLES:
        return {}
    lake = lake_column_docs(LAKE_TABLES[table], include_pii=False)
    columns = renames(model)
    if model.view:
        through = renames(source, whole=True)
        columns = {name: through.get(column, "") for name, column in columns.items()}
    return {name: lake[column] for name, column in columns.items() if column in lake}

"""The optional areas the service refused, as the warehouse records them (`meta.refused_areas`).

A refused area keeps its lake records as they were (`assets.refusal`): the models over them are
built from what the lake holds (nothing, if the area was never read). This table says so where
the numbers are read: which stream, since which batch, what the service said, what to ask for,
and which models read its tables. The asset checks of those models say it too
(`pipelines.warehouse_assets`).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from lake.state import refused_streams
from lake.store import Lake
from warehouse.models import Model, discover_models, models_depending_on

REFUSED_TABLE = "meta.refused_areas"


def write_refused_areas(con: duckdb.DuckDBPyConnection, lake_root: Path) -> None:
    """(Re)write `meta.refused_areas` from the lake's record of refused streams."""
    con.execute(
        f"create or replace table {REFUSED_TABLE} ("
        "stream varchar, area varchar, http_status integer, endpoint varchar, reason varchar, "
        "what_to_do varchar, refused_since_batch varchar, lake_tables varchar[], "
        "models varchar[])"
    )
    streams = refused_streams(Lake(lake_root))
    models = discover_models() if streams else {}
    for item in streams:
        tables = [str(t) for t in item.get("tables") or ()]
        readers = sorted(models_depending_on(set(tables), models))
        con.execute(
            f"insert into {REFUSED_TABLE} values ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            [
                item.get("stream"),
                item.get("area"),
                item.get("status"),
                item.get("endpoint"),
                item.get("said"),
                item.get("what_to_do"),
                item.get("since"),
                tables,
                readers,
            ],
        )


def refused_by_model(
    con: duckdb.DuckDBPyConnection, models: dict[str, Model] | None = None
) -> dict[str, list[str]]:
    """Model (qualified name) -> one line per refused area it reads, from a published file
    (empty when it has no such table: built before refusals were recorded)."""
    try:
        rows = con.execute(
            f"select area, reason, what_to_do, models from {REFUSED_TABLE} order by area, stream"
        ).fetchall()
    except duckdb.CatalogException:
        return {}
    out: dict[str, list[str]] = {}
    for area, reason, what, readers in rows:
        line = (
            f"area {area} refused by the service ({reason}): built from what the lake holds of "
            f"it (nothing if it was never read); {what}"
        )
        for model in readers or ():
            if line not in out.setdefault(model, []):
                out[model].append(line)
    return out

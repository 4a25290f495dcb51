"""The asset keys and check keys of the code location, without loading it.

`reservoir status` lists the latest outcome of every check the code location defines. Importing
`pipelines.definitions` for their keys (the assets' modules, the jobs, sensors and schedules)
cost ~0.8 of the command's ~2.7 CPU s; these are the same keys from the catalogue and the
models (`tests/test_definitions.py` holds them equal to the definitions').
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import dagster as dg

if TYPE_CHECKING:
    from warehouse.models import Model

LAKE_PREFIX = "lake"
WAREHOUSE_PREFIX = "warehouse"
# the lake tables' checks (`pipelines.lake_metadata`)
UNIQUE_KEYS = "unique_keys"
QUARANTINE_RATE = "quarantine_rate"


def lake_key(table: str) -> dg.AssetKey:
    return dg.AssetKey([LAKE_PREFIX, table])


def model_key(model: Model) -> dg.AssetKey:
    return dg.AssetKey([WAREHOUSE_PREFIX, model.layer, model.name])


def defined_check_keys() -> list[dg.AssetCheckKey]:
    """Every check of the lake tables (unique keys of each table, the quarantine rate of each
    stream's root table), of the warehouse models and of the warehouse's tidy."""
    from assets.catalogue import SPECS
    from pipelines.warehouse_tidy import ROWS_CHECK, TIDY_KEY
    from warehouse.checks import CHECKS
    from warehouse.models import discover_models

    models = discover_models()
    return [
        *(dg.AssetCheckKey(lake_key(t.name), UNIQUE_KEYS) for s in SPECS for t in s.tables),
        *(dg.AssetCheckKey(lake_key(s.table.name), QUARANTINE_RATE) for s in SPECS),
        *(dg.AssetCheckKey(model_key(models[c.model]), c.name) for c in CHECKS.values()),
        dg.AssetCheckKey(TIDY_KEY, ROWS_CHECK),
    ]

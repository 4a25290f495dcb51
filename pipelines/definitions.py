"""The code location: merges the assets, jobs and resources the modules define."""

from __future__ import annotations

import dagster as dg

from assets import finance, pricing, reference, reservations
from pipelines.incremental_defs import incremental_defs
from pipelines.jobs import JOBS
from pipelines.resources import LakeResource, ReservationServiceResource
from warehouse.dagster_assets import WarehouseResource, build_warehouse_assets

_core = dg.Definitions(
    assets=[
        *reference.assets,
        *finance.assets,
        *reservations.assets,
        *pricing.assets,
        build_warehouse_assets(),
    ],
    jobs=JOBS,
    resources={
        # EnvVar is resolved when a run starts, never when this module is imported.
        "service": ReservationServiceResource(
            base_url=dg.EnvVar("RESERVOIR_BASE_URL"),
            client_id=dg.EnvVar("RESERVOIR_CLIENT_ID"),
            client_secret=dg.EnvVar("RESERVOIR_CLIENT_SECRET"),
            scope=dg.EnvVar("RESERVOIR_SCOPE"),
        ),
        "lake": LakeResource(data_dir=dg.EnvVar("RESERVOIR_DATA_DIR")),
        "warehouse": WarehouseResource(data_dir=dg.EnvVar("RESERVOIR_DATA_DIR")),
    },
)

defs = dg.Definitions.merge(_core, incremental_defs)

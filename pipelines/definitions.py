"""The code location: merges the assets, jobs and resources the modules define.

`defs` must stay the only `Definitions` object at module scope: Dagster's loader (`dagster dev
-w workspace.yaml`, `dagster job execute -m pipelines.definitions`) refuses a module with more
than one (`tests/test_definitions.py`).
"""

from __future__ import annotations

import dagster as dg

from assets import finance, pricing, reference, reservations
from pipelines import incremental_defs as incremental
from pipelines.jobs import JOBS
from pipelines.resources import LakeResource, ReservationServiceResource
from warehouse.dagster_assets import WarehouseResource, build_warehouse_assets


def _core() -> dg.Definitions:
    """The full-refresh assets, the jobs and the resources."""
    return dg.Definitions(
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


defs = dg.Definitions.merge(_core(), incremental.incremental_defs)

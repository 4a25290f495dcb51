"""The code location: the lake and warehouse assets, the jobs, automation and resources.

`defs` must stay the only `Definitions` object at module scope: Dagster's loader (`dagster dev
-w workspace.yaml`, `dagster job execute -m pipelines.definitions`) refuses a module with more
than one (`tests/test_definitions.py`).
"""

from __future__ import annotations

import dagster as dg

from pipelines.jobs import JOBS
from pipelines.lake_assets import lake_assets
from pipelines.resources import LakeResource, ReservationServiceResource
from pipelines.schedules import SCHEDULES
from pipelines.sensors import SENSORS
from pipelines.warehouse_assets import WarehouseResource, build_warehouse_assets

defs = dg.Definitions(
    assets=[lake_assets, build_warehouse_assets()],
    jobs=JOBS,
    sensors=SENSORS,
    schedules=SCHEDULES,
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

"""Jobs of the code location: the same assets (the lake, then the warehouse models and their
checks) in each run mode, plus compaction.

All run with the in-process executor: the service caps concurrent calls per IP address at 15, and
the client enforces `max_concurrency` per process. With the default multiprocess executor every
asset would run in its own process with its own limit, so parallel assets could exceed the cap
(and be throttled). In one process one limit covers the run.

The asset jobs are partitioned by tenant (`pipelines.partitions`): each run is one tenant's, and
the run queue starts one run per tenant at a time (deploy/values.yaml, `pipelines.instance`).
"""

from __future__ import annotations

import dagster as dg

from pipelines.compaction import compact_lake
from pipelines.lake_assets import MODE_TAG, Mode
from pipelines.partitions import TENANTS

INCREMENTAL_JOB = "incremental_job"
WEBHOOK_JOB = "webhook_refresh_job"
SWEEP_JOB = "sweep_job"
LAKE = dg.AssetSelection.key_prefixes(["lake"])


def _job(
    name: str, mode: Mode, description: str, selection: dg.AssetSelection
) -> dg.UnresolvedAssetJobDefinition:
    return dg.define_asset_job(
        name,
        selection=selection,
        description=description,
        executor_def=dg.in_process_executor,
        tags={MODE_TAG: mode},
    )


extract_job = _job("extract_job", "full", "Extract every source area into the Parquet lake.", LAKE)
main_job = _job(
    "main_job",
    "full",
    "Extract every source area in full into the lake, then build the warehouse models.",
    dg.AssetSelection.all(),
)
incremental_job = _job(
    INCREMENTAL_JOB,
    "auto",
    "Apply the event feed since the lake's cursor (the bootstrap when there is none), then "
    "rebuild the models that read the changed tables; every check is evaluated.",
    dg.AssetSelection.all(),
)
webhook_refresh_job = _job(
    WEBHOOK_JOB,
    "webhook",
    "Refresh the reservations named by webhook pushes, then the models that read them.",
    dg.AssetSelection.all(),
)
sweep_job = _job(
    SWEEP_JOB,
    "sweep",
    "Nightly reconciliation of the lake with the service, then the models that read what differed.",
    dg.AssetSelection.all(),
)


@dg.job(
    description="Fold each lake table's batch files into one file of its current rows (the "
    "tenant of the run's partition; without one, the lake of RESERVOIR_DATA_DIR).",
    executor_def=dg.in_process_executor,
    # Its run carries the tenant's partition tag, so it queues behind that tenant's run (it
    # takes the lake's writer lock anyway) and its lake resource is that tenant's.
    partitions_def=TENANTS,
)
def compact_job() -> None:
    compact_lake()


JOBS = [extract_job, main_job, incremental_job, webhook_refresh_job, sweep_job, compact_job]

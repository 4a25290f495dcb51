"""Jobs of the code location.

All run with the in-process executor: the service caps concurrent calls per IP address at 15, and
the client enforces `max_concurrency` per process. With the default multiprocess executor every
asset would run in its own process with its own limit, so parallel assets could exceed the cap
(and be throttled). In one process, assets run one after another and each uses the whole budget
for its own fan-out, so one limit covers the run.
"""

from __future__ import annotations

import dagster as dg

from assets.compaction import compact_lake

LAKE = dg.AssetSelection.key_prefixes(["lake"])

extract_job = dg.define_asset_job(
    "extract_job",
    selection=LAKE,
    description="Extract every source area into the Parquet lake.",
    executor_def=dg.in_process_executor,
)

# Lake and warehouse: every asset of the code location (the warehouse assets join when present).
main_job = dg.define_asset_job(
    "main_job",
    selection=dg.AssetSelection.all(),
    description="Extract into the lake, then build the warehouse models.",
    executor_def=dg.in_process_executor,
)


@dg.job(
    description="Fold each lake table's batch files into one file of its current rows.",
    executor_def=dg.in_process_executor,
)
def compact_job() -> None:
    compact_lake()


JOBS = [extract_job, main_job, compact_job]

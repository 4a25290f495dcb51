"""Schedules: the nightly reconciliation sweep.

The event feed is the fast path; the sweep is the safety net for what it may miss (retention of
the feed is unknown, and changes by a date passing have no events). It runs at night, when the
service is quiet, and skips if the previous sweep is still running.
"""

from __future__ import annotations

import dagster as dg

from pipelines.jobs import SWEEP_JOB
from pipelines.sensors import active_run_ids

SWEEP_CRON = "30 2 * * *"  # 02:30 UTC


@dg.schedule(
    job_name=SWEEP_JOB,
    cron_schedule=SWEEP_CRON,
    execution_timezone="UTC",
    # On from the start: once a night, a few hundred requests at most (docs/incremental.md).
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Nightly reconciliation: reservations modified since the last sweep and the "
    "small reference lists, compared with the lake.",
)
def nightly_sweep_schedule(
    context: dg.ScheduleEvaluationContext,
) -> dg.RunRequest | dg.SkipReason:
    busy = active_run_ids(context.instance, SWEEP_JOB)
    if busy:
        return dg.SkipReason(f"{SWEEP_JOB} is still running ({busy[0]})")
    moment = context.scheduled_execution_time
    key = moment.strftime("%Y-%m-%d") if moment else "manual"
    return dg.RunRequest(run_key=f"sweep-{key}", tags={"reservoir/mode": "sweep"})


SCHEDULES = [nightly_sweep_schedule]

"""Schedules: the nightly reconciliation sweep.

The event feed is the fast path; the sweep is the safety net for what it may miss (retention of
the feed is unknown, and changes by a date passing have no events). It runs at night, when the
service is quiet: one run per tenant (its partition, tagged with its name), each skipped while
that tenant's previous sweep still runs. A tenant that is not a partition yet is added first.
"""

from __future__ import annotations

import dagster as dg

from pipelines.jobs import SWEEP_JOB
from pipelines.partitions import ensure_partitions, tenant_names
from pipelines.sensors import active_run_ids, for_tenant

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
) -> list[dg.RunRequest] | dg.SkipReason:
    moment = context.scheduled_execution_time
    key = moment.strftime("%Y-%m-%d") if moment else "manual"
    requests, reasons = [], []
    names = tenant_names()
    ensure_partitions(context.instance, names)  # a schedule's result cannot add partitions
    for tenant in names:
        busy = active_run_ids(context.instance, SWEEP_JOB, tenant)
        if busy:
            reasons.append(f"{tenant}: {SWEEP_JOB} is still running ({busy[0]})")
        else:
            request = dg.RunRequest(run_key=f"sweep-{key}", tags={"reservoir/mode": "sweep"})
            requests.append(for_tenant(request, tenant))
    return requests or dg.SkipReason("; ".join(reasons))


SCHEDULES = [nightly_sweep_schedule]

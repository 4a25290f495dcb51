"""Sensors: poll the event feed cheaply, and turn webhook pushes into reservation refreshes.

Why they look like this:

* The feed sensor makes one small request per tick (`latest_event_id`: one event, sorted
  descending) and compares it with the cursor stored in the lake. Only when the feed is ahead
  does it start the incremental job, with the run key `events-<cursor>-<hwm>`: a tick that sees
  the same state again asks for the same key, which Dagster deduplicates.
* Before asking the service anything, a sensor checks whether a run of its job is already queued
  or running and skips (SkipReason) if so: the run will pick up whatever is new, and two runs of
  the same job would only wait on each other's lake lock.
* The webhook sensor follows the inbox's pattern (`pipelines/webhook_inbox.py`): snapshot
  `pending()`, start a refresh of those reservation ids, and let the run mark exactly those
  webhook ids processed after landing. A push arriving meanwhile stays pending and triggers the
  next refresh. The run key is a hash of the snapshot's webhook ids.

Every run lands through the `lake` asset; the run config names the mode (`run_config`).

Per tenant: each tick decides for every tenant of the deployment (`pipelines.partitions`: the
tenants file's names, else `default`) with that tenant's resources, and asks for at most one
run per tenant, for its partition and tagged `reservoir/tenant=<name>` (the run queue starts one
run per tenant at a time). A tenant's run keys start with its name (`default` keeps the keys
of a single-tenant deployment). `tenants_sensor` adds the file's tenants as partitions; the
other sensors add any that is missing in the same tick.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import dagster as dg

from lake.state import read_cursor
from pipelines.jobs import INCREMENTAL_JOB, WEBHOOK_JOB
from pipelines.lake_assets import HOST_TAG, PID_TAG, run_config
from pipelines.partitions import DEFAULT_TENANT, PARTITIONS_NAME, tenant_names, tenant_tags
from pipelines.resources import LakeResource, ReservationServiceResource
from pipelines.tenants import TENANT_TAG

FEED_INTERVAL_SECONDS = (
    60  # each tick costs 2 requests (authenticate + one event) until tokens are shared
)
WEBHOOK_INTERVAL_SECONDS = 15
WEBHOOK_BATCH = 500
WEBHOOK_BATCH_TAG = "reservoir/webhook_batch"  # digest of the pushes a run refreshes
WEBHOOK_RETRY_BASE_SECONDS = 30.0
WEBHOOK_RETRY_MAX_SECONDS = 3600.0
TENANTS_INTERVAL_SECONDS = 60

ACTIVE_STATUSES = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def abandoned(run: dg.DagsterRun) -> bool:
    """A run left in progress by a process that no longer exists on this host (SIGKILL, OOM, a
    full disk): the lake asset tags every run with the process that executes it."""
    pid, host = run.tags.get(PID_TAG), run.tags.get(HOST_TAG)
    if not pid or not pid.isdigit() or host != socket.gethostname():
        return False
    return not process_alive(int(pid))


def active_run_ids(
    instance: dg.DagsterInstance, job_name: str, tenant: str = DEFAULT_TENANT
) -> list[str]:
    """Runs of `job_name` for `tenant` that are queued or in progress (for `default`, the
    single tenant, every run of the job: runs of earlier versions carry no tenant tag).

    A run whose process died is marked failed here (with a message saying so) and does not
    count: otherwise it would stay STARTED and the sensors would skip forever.
    """
    tags = {} if tenant == DEFAULT_TENANT else {TENANT_TAG: tenant}
    records = instance.get_run_records(
        filters=dg.RunsFilter(job_name=job_name, statuses=ACTIVE_STATUSES, tags=tags), limit=20
    )
    active = []
    for record in records:
        run = record.dagster_run
        if abandoned(run):
            instance.report_run_failed(
                run,
                f"the process that ran it (pid {run.tags[PID_TAG]}) no longer exists; marked "
                "failed so that automation goes on (its landing was not committed, or was "
                "committed whole: the lake holds no half batch)",
            )
            continue
        active.append(run.run_id)
    return active[:5]


def feed_decision(cursor: int | None, high_water: int | None) -> dg.RunRequest | dg.SkipReason:
    """Pure decision of the feed sensor, given the lake's cursor and the feed's newest id."""
    if cursor is None:
        mark = high_water or 0
        return dg.RunRequest(
            run_key=f"bootstrap-{mark}",
            tags={"reservoir/mode": "bootstrap", "reservoir/high_water": str(mark)},
        )
    if high_water is None or high_water <= cursor:
        return dg.SkipReason(f"no new events (cursor {cursor}, feed at {high_water})")
    return dg.RunRequest(
        run_key=f"events-{cursor}-{high_water}",
        tags={
            "reservoir/mode": "incremental",
            "reservoir/cursor": str(cursor),
            "reservoir/high_water": str(high_water),
        },
    )


def poll_high_water(service: ReservationServiceResource) -> int | None:
    """The feed's newest eventId in one small request (plus authentication)."""
    from service.sync import run

    async def latest() -> int | None:
        async with service.open_client() as client:
            return await client.latest_event_id()

    return run(latest)


@dg.sensor(
    job_name=INCREMENTAL_JOB,
    minimum_interval_seconds=FEED_INTERVAL_SECONDS,
    description="Starts the incremental job when the event feed is ahead of the lake's cursor.",
)
def event_feed_sensor(
    context: dg.SensorEvaluationContext,
    lake: LakeResource,
    service: ReservationServiceResource,
) -> dg.SensorResult:
    def decide(tenant: str) -> dg.RunRequest | dg.SkipReason:
        busy = active_run_ids(context.instance, INCREMENTAL_JOB, tenant)
        if busy:
            return dg.SkipReason(f"{INCREMENTAL_JOB} is already queued or running ({busy[0]})")
        cursor = read_cursor(lake.for_tenant(tenant).lake())
        high_water = poll_high_water(service.for_tenant(tenant))
        return feed_decision(cursor.event_id if cursor else None, high_water)

    return per_tenant(context.instance, decide, log=context.log)


def webhook_run_request(
    notifications: Sequence[Any], failures: int = 0
) -> dg.RunRequest | dg.SkipReason:
    """Pure decision of the webhook sensor for a snapshot of pending notifications.

    The run key is the snapshot's digest; after `failures` failed runs of the same snapshot it
    gets an attempt suffix, since Dagster never starts a second run with a key it has seen.
    """
    if not notifications:
        return dg.SkipReason("no pending webhook notifications")
    webhook_ids = sorted({str(n.webhook_id) for n in notifications})
    reservation_ids = sorted({int(n.reservation_id) for n in notifications})
    digest = hashlib.sha256("\n".join(webhook_ids).encode()).hexdigest()[:16]
    return dg.RunRequest(
        run_key=f"webhooks-{digest}" + (f"-retry{failures}" if failures else ""),
        run_config=run_config("webhook", reservation_ids=reservation_ids, webhook_ids=webhook_ids),
        tags={
            "reservoir/mode": "webhook",
            "reservoir/notifications": str(len(webhook_ids)),
            WEBHOOK_BATCH_TAG: digest,
        },
    )


def retry_wait(failures: int) -> float:
    """Seconds to wait after the `failures`-th failed refresh of one snapshot before the next."""
    return min(WEBHOOK_RETRY_BASE_SECONDS * 2 ** (failures - 1), WEBHOOK_RETRY_MAX_SECONDS)


def webhook_decision(
    instance: dg.DagsterInstance,
    notifications: Sequence[Any],
    now: float,
    tenant: str = DEFAULT_TENANT,
) -> dg.RunRequest | dg.SkipReason:
    """The run for this snapshot: a new key after each failure, with backoff between them."""
    first = webhook_run_request(notifications)
    if not isinstance(first, dg.RunRequest):
        return first
    digest = first.tags[WEBHOOK_BATCH_TAG]
    of_tenant = {} if tenant == DEFAULT_TENANT else {TENANT_TAG: tenant}
    failed = instance.get_run_records(
        filters=dg.RunsFilter(
            tags={WEBHOOK_BATCH_TAG: digest, **of_tenant},
            statuses=[dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED],
        )
    )
    if not failed:
        return first
    last = max((r.end_time or r.create_timestamp.timestamp()) for r in failed)
    wait = retry_wait(len(failed)) - (now - last)
    if wait > 0:
        return dg.SkipReason(
            f"the refresh of these {len(notifications)} pushes failed {len(failed)} time(s); "
            f"retrying in {wait:.0f} s"
        )
    return webhook_run_request(notifications, failures=len(failed))


@dg.sensor(
    job_name=WEBHOOK_JOB,
    minimum_interval_seconds=WEBHOOK_INTERVAL_SECONDS,
    # On from the start: a tick reads only the local inbox, so it costs the service nothing.
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Refreshes the reservations named by pending webhook notifications.",
)
def webhook_sensor(context: dg.SensorEvaluationContext, lake: LakeResource) -> dg.SensorResult:
    from pipelines.webhook_inbox import WebhookInbox

    def decide(tenant: str) -> dg.RunRequest | dg.SkipReason:
        busy = active_run_ids(context.instance, WEBHOOK_JOB, tenant)
        if busy:
            return dg.SkipReason(f"{WEBHOOK_JOB} is already queued or running ({busy[0]})")
        inbox = WebhookInbox(lake.for_tenant(tenant).data_dir)
        pending = inbox.pending(limit=WEBHOOK_BATCH)
        return webhook_decision(context.instance, pending, time.time(), tenant)

    return per_tenant(context.instance, decide, log=context.log)


def for_tenant(request: dg.RunRequest, tenant: str) -> dg.RunRequest:
    """`request` as the run of one tenant: its partition, its tag, its name on the run key."""
    key = request.run_key if tenant == DEFAULT_TENANT else f"{tenant}:{request.run_key}"
    return request.with_replaced_attrs(
        run_key=key, partition_key=tenant, tags={**request.tags, **tenant_tags(tenant)}
    )


def missing_partitions(instance: dg.DagsterInstance, names: Sequence[str]) -> list[str]:
    return [n for n in names if not instance.has_dynamic_partition(PARTITIONS_NAME, n)]


def per_tenant(
    instance: dg.DagsterInstance,
    decide: Callable[[str], dg.RunRequest | dg.SkipReason],
    names: Sequence[str] | None = None,
    log: Any = None,
) -> dg.SensorResult:
    """One decision per tenant: the runs asked for, else why none (each tenant's reason); the
    tenants not yet partitions are added in the same tick, before its runs are launched. One
    tenant's failure (its service unreachable) is its reason; the others still decide."""
    names = tenant_names() if names is None else names
    requests: list[dg.RunRequest] = []
    reasons: list[str] = []
    for tenant in names:
        if len(names) == 1:  # a single tenant's failure fails the tick, as it always has
            decision = decide(tenant)
        else:
            try:
                decision = decide(tenant)
            except Exception as exc:  # the service's errors carry no secret
                decision = dg.SkipReason(f"failed: {type(exc).__name__}: {exc}")
                if log is not None:  # kept in the tick's log when other tenants' runs start
                    log.error(f"tenant {tenant}: {decision.skip_message}")
        if isinstance(decision, dg.RunRequest):
            requests.append(for_tenant(decision, tenant))
        else:
            reason = decision.skip_message or "nothing to do"
            reasons.append(reason if names == [DEFAULT_TENANT] else f"{tenant}: {reason}")
    missing = missing_partitions(instance, names)
    return dg.SensorResult(
        run_requests=requests,
        skip_reason=None if requests else "; ".join(reasons),
        dynamic_partitions_requests=(
            [dg.AddDynamicPartitionsRequest(PARTITIONS_NAME, missing)] if missing else None
        ),
    )


@dg.sensor(
    minimum_interval_seconds=TENANTS_INTERVAL_SECONDS,
    # On from the start: it reads the local tenants file, so it costs the service nothing.
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds the tenants of RESERVOIR_TENANTS_FILE (else `default`, the single tenant) "
    "as partitions of the lake and warehouse assets.",
)
def tenants_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult:
    missing = missing_partitions(context.instance, tenant_names())
    if not missing:
        return dg.SensorResult(skip_reason="every tenant is a partition already")
    return dg.SensorResult(
        dynamic_partitions_requests=[dg.AddDynamicPartitionsRequest(PARTITIONS_NAME, missing)]
    )


SENSORS = [event_feed_sensor, webhook_sensor, tenants_sensor]

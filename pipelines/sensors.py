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
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections.abc import Sequence
from typing import Any

import dagster as dg

from lake.state import read_cursor
from pipelines.jobs import INCREMENTAL_JOB, WEBHOOK_JOB
from pipelines.lake_assets import HOST_TAG, PID_TAG, run_config
from pipelines.resources import LakeResource, ReservationServiceResource

FEED_INTERVAL_SECONDS = (
    60  # each tick costs 2 requests (authenticate + one event) until tokens are shared
)
WEBHOOK_INTERVAL_SECONDS = 15
WEBHOOK_BATCH = 500
WEBHOOK_BATCH_TAG = "reservoir/webhook_batch"  # digest of the pushes a run refreshes
WEBHOOK_RETRY_BASE_SECONDS = 30.0
WEBHOOK_RETRY_MAX_SECONDS = 3600.0

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


def active_run_ids(instance: dg.DagsterInstance, job_name: str) -> list[str]:
    """Runs of `job_name` that are queued or in progress.

    A run whose process died is marked failed here (with a message saying so) and does not
    count: otherwise it would stay STARTED and the sensors would skip forever.
    """
    records = instance.get_run_records(
        filters=dg.RunsFilter(job_name=job_name, statuses=ACTIVE_STATUSES), limit=20
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
) -> dg.RunRequest | dg.SkipReason:
    busy = active_run_ids(context.instance, INCREMENTAL_JOB)
    if busy:
        return dg.SkipReason(f"{INCREMENTAL_JOB} is already queued or running ({busy[0]})")
    cursor = read_cursor(lake.lake())
    high_water = poll_high_water(service)
    return feed_decision(cursor.event_id if cursor else None, high_water)


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
    instance: dg.DagsterInstance, notifications: Sequence[Any], now: float
) -> dg.RunRequest | dg.SkipReason:
    """The run for this snapshot: a new key after each failure, with backoff between them."""
    first = webhook_run_request(notifications)
    if not isinstance(first, dg.RunRequest):
        return first
    digest = first.tags[WEBHOOK_BATCH_TAG]
    failed = instance.get_run_records(
        filters=dg.RunsFilter(
            tags={WEBHOOK_BATCH_TAG: digest},
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
def webhook_sensor(
    context: dg.SensorEvaluationContext, lake: LakeResource
) -> dg.RunRequest | dg.SkipReason:
    from pipelines.webhook_inbox import WebhookInbox

    busy = active_run_ids(context.instance, WEBHOOK_JOB)
    if busy:
        return dg.SkipReason(f"{WEBHOOK_JOB} is already queued or running ({busy[0]})")
    inbox = WebhookInbox(lake.data_dir)
    return webhook_decision(context.instance, inbox.pending(limit=WEBHOOK_BATCH), time.time())


SENSORS = [event_feed_sensor, webhook_sensor]

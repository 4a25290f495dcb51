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
from collections.abc import Sequence
from typing import Any

import dagster as dg

from lake.state import read_cursor
from pipelines.jobs import INCREMENTAL_JOB, WEBHOOK_JOB
from pipelines.lake_assets import run_config
from pipelines.resources import LakeResource, ReservationServiceResource

FEED_INTERVAL_SECONDS = (
    60  # each tick costs 2 requests (authenticate + one event) until tokens are shared
)
WEBHOOK_INTERVAL_SECONDS = 15
WEBHOOK_BATCH = 500

ACTIVE_STATUSES = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def active_run_ids(instance: dg.DagsterInstance, job_name: str) -> list[str]:
    """Runs of `job_name` that are queued or in progress."""
    records = instance.get_run_records(
        filters=dg.RunsFilter(job_name=job_name, statuses=ACTIVE_STATUSES), limit=5
    )
    return [r.dagster_run.run_id for r in records]


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


def webhook_run_request(notifications: Sequence[Any]) -> dg.RunRequest | dg.SkipReason:
    """Pure decision of the webhook sensor for a snapshot of pending notifications."""
    if not notifications:
        return dg.SkipReason("no pending webhook notifications")
    webhook_ids = sorted({str(n.webhook_id) for n in notifications})
    reservation_ids = sorted({int(n.reservation_id) for n in notifications})
    digest = hashlib.sha256("\n".join(webhook_ids).encode()).hexdigest()[:16]
    return dg.RunRequest(
        run_key=f"webhooks-{digest}",
        run_config=run_config("webhook", reservation_ids=reservation_ids, webhook_ids=webhook_ids),
        tags={"reservoir/mode": "webhook", "reservoir/notifications": str(len(webhook_ids))},
    )


@dg.sensor(
    job_name=WEBHOOK_JOB,
    minimum_interval_seconds=WEBHOOK_INTERVAL_SECONDS,
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
    return webhook_run_request(inbox.pending(limit=WEBHOOK_BATCH))


SENSORS = [event_feed_sensor, webhook_sensor]

"""Sensors and jobs against the fake service: skip when idle, one stable run key when not."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from assets.modes import apply_changes
from assets.settings import IngestSettings
from lake.state import read_cursor
from lake.store import Lake
from pipelines.jobs import INCREMENTAL_JOB, incremental_job, webhook_refresh_job
from pipelines.resources import LakeResource
from pipelines.schedules import nightly_sweep_schedule
from pipelines.sensors import (
    event_feed_sensor,
    feed_decision,
    webhook_run_request,
    webhook_sensor,
)
from pipelines.tenants import TENANT_TAG
from pipelines.webhook_inbox import Notification, WebhookInbox
from tests.assets import fake_service as fakes_module
from tests.incremental.fakes import DATA, IncrementalFakeResource, event, fixture, opener
from tests.incremental.helpers import execute_job

TODAY = "2026-06-01"


@pytest.fixture
def data(request: pytest.FixtureRequest) -> dict[str, Any]:
    name = request.node.name
    DATA[name] = fixture()
    yield DATA[name]
    DATA.pop(name, None)


@pytest.fixture
def resources(tmp_path: Path, data: dict[str, Any], request: pytest.FixtureRequest) -> dict:
    return {
        "lake": LakeResource(
            data_dir=str(tmp_path), availability_start=TODAY, availability_horizon_days=3
        ),
        "service": IncrementalFakeResource(fixture=request.node.name),
    }


# The tests that go on from `bootstrapped` run on one xdist worker: without a group `--dist
# loadgroup` spreads them over both workers, and each made the bootstrap run.
BOOTSTRAPPED = pytest.mark.xdist_group("sensors_bootstrapped")


@pytest.fixture(scope="module")
def bootstrapped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The incremental job's first run (the bootstrap) on the fixture's data, once per module:
    the data dir it leaves (lake, cursor, warehouse) is copied into each test that goes on
    from there (a job run is ~4.5 CPU s). `copytree` keeps the lake files' names, sizes and
    modification times, which the warehouse records of what it read."""
    name = "bootstrapped"
    DATA[name] = fixture()
    data_dir = tmp_path_factory.mktemp("bootstrapped")
    resources = {
        "lake": LakeResource(
            data_dir=str(data_dir), availability_start=TODAY, availability_horizon_days=3
        ),
        "service": IncrementalFakeResource(fixture=name),
    }
    try:
        first = execute_job(
            incremental_job, resources=resources, instance=dg.DagsterInstance.ephemeral()
        )
    finally:
        DATA.pop(name, None)
    assert first.success
    yield data_dir


def _bootstrapped(resources: dict, bootstrapped: Path) -> Lake:
    """The test's data dir as the incremental job's bootstrap left it (`bootstrapped`)."""
    shutil.copytree(bootstrapped, resources["lake"].data_dir, dirs_exist_ok=True)
    return resources["lake"].lake()


def _bootstrap(resources: dict, data: dict[str, Any]) -> Lake:
    lake = resources["lake"].lake()
    apply_changes(
        lake, opener(data), IngestSettings(today=date.fromisoformat(TODAY), horizon_days=3)
    )
    return lake


def _tick(sensor: dg.SensorDefinition, instance: dg.DagsterInstance, resources: dict) -> Any:
    """The single tenant's run request, else the skip reason, of one tick."""
    context = dg.build_sensor_context(instance=instance, resources=resources)
    result = sensor(context)
    assert isinstance(result, dg.SensorResult)
    if not result.run_requests:
        return dg.SkipReason(result.skip_reason.skip_message if result.skip_reason else None)
    (request,) = result.run_requests
    assert request.partition_key == "default" and request.tags[TENANT_TAG] == "default"
    return request


@pytest.mark.parametrize(
    ("cursor", "hwm", "expected"),
    [
        (None, None, "bootstrap-0"),
        (None, 17, "bootstrap-17"),
        (5, 5, None),
        (5, None, None),
        (5, 9, "events-5-9"),
    ],
)
def test_feed_decision(cursor: int | None, hwm: int | None, expected: str | None) -> None:
    decision = feed_decision(cursor, hwm)
    if expected is None:
        assert isinstance(decision, dg.SkipReason)
    else:
        assert isinstance(decision, dg.RunRequest) and decision.run_key == expected


def test_feed_sensor_skips_without_new_events_and_asks_once_with_them(
    resources: dict, data: dict[str, Any]
) -> None:
    _bootstrap(resources, data)
    instance = dg.DagsterInstance.ephemeral()
    assert isinstance(_tick(event_feed_sensor, instance, resources), dg.SkipReason)

    data["events"].append(event(3, "RESERVATION_EVENT", 1))
    first = _tick(event_feed_sensor, instance, resources)
    second = _tick(event_feed_sensor, instance, resources)
    assert isinstance(first, dg.RunRequest)
    assert first.run_key == second.run_key == "events-2-3"


def test_feed_sensor_skips_while_a_run_is_active(resources: dict, data: dict[str, Any]) -> None:
    _bootstrap(resources, data)
    data["events"].append(event(3, "RESERVATION_EVENT", 1))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_run(dg.DagsterRun(job_name=INCREMENTAL_JOB, status=dg.DagsterRunStatus.STARTED))
    result = _tick(event_feed_sensor, instance, resources)
    assert isinstance(result, dg.SkipReason)
    assert "already queued or running" in (result.skip_message or "")


def _notify(inbox: WebhookInbox, webhook_id: str, reservation_id: int) -> None:
    inbox.add(
        Notification(
            webhook_id=webhook_id,
            received_at=datetime.now(UTC),
            event_occurred=None,
            type="reservation.status_change",
            reservation_id=reservation_id,
            data={"reservationId": reservation_id},
        )
    )


def test_webhook_sensor_and_refresh_job_mark_processed_after_landing(
    resources: dict, data: dict[str, Any], tmp_path: Path
) -> None:
    _bootstrap(resources, data)
    instance = dg.DagsterInstance.ephemeral()
    assert isinstance(_tick(webhook_sensor, instance, resources), dg.SkipReason)

    inbox = WebhookInbox(tmp_path)
    _notify(inbox, "msg_1", 1)
    _notify(inbox, "msg_2", 2)
    _notify(inbox, "msg_3", 1)
    request = _tick(webhook_sensor, instance, resources)
    assert isinstance(request, dg.RunRequest)
    assert request.run_key == _tick(webhook_sensor, instance, resources).run_key
    config = request.run_config["ops"]["lake"]["config"]
    assert config == {
        "mode": "webhook",
        "reservation_ids": [1, 2],
        "webhook_ids": ["msg_1", "msg_2", "msg_3"],
    }

    result = execute_job(
        webhook_refresh_job, run_config=request.run_config, resources=resources, instance=instance
    )
    assert result.success
    assert inbox.pending() == []
    keys = {e.asset_key for e in result.get_asset_materialization_events()}
    assert dg.AssetKey(["lake", "reservations"]) in keys


def test_webhook_run_key_changes_with_the_snapshot() -> None:
    class N:
        def __init__(self, wid: str, rid: int) -> None:
            self.webhook_id, self.reservation_id = wid, rid

    a = webhook_run_request([N("a", 1)])
    b = webhook_run_request([N("a", 1), N("b", 1)])
    assert isinstance(a, dg.RunRequest) and isinstance(b, dg.RunRequest)
    assert a.run_key != b.run_key


@BOOTSTRAPPED
def test_incremental_job_bootstraps_then_applies_events(
    resources: dict, data: dict[str, Any], bootstrapped: Path
) -> None:
    instance = dg.DagsterInstance.ephemeral()
    lake = _bootstrapped(resources, bootstrapped)  # the first run: success asserted there
    assert read_cursor(lake).event_id == 2  # type: ignore[union-attr]
    assert (Path(resources["lake"].data_dir) / "warehouse.duckdb").exists()

    data["events"].append(event(3, "RESERVATION_EVENT", 1))
    second = execute_job(incremental_job, resources=resources, instance=instance)
    assert second.success
    assert read_cursor(lake).event_id == 3  # type: ignore[union-attr]
    landed = {
        e.asset_key.path[-1]: e.materialization.metadata["dagster/row_count"].value
        for e in second.get_asset_materialization_events()
        if e.asset_key.path[0] == "lake"
    }
    assert landed["reservations"] > 0
    keys = {e.asset_key.path[0] for e in second.get_asset_materialization_events()}
    assert keys == {"lake", "warehouse", "warehouse_tidy"}  # the tidy after the refresh


def test_schedule_and_definitions_load() -> None:
    with dg.instance_for_test() as instance:
        context = dg.build_schedule_context(
            instance=instance, scheduled_execution_time=datetime(2026, 6, 2, 2, 30, tzinfo=UTC)
        )
        (request,) = nightly_sweep_schedule(context)  # type: ignore[misc]
    assert isinstance(request, dg.RunRequest) and request.run_key == "sweep-2026-06-02"
    assert request.partition_key == "default"
    from pipelines.definitions import defs

    dg.Definitions.validate_loadable(defs)
    repo = defs.get_repository_def()
    assert {s.name for s in repo.sensor_defs} >= {"event_feed_sensor", "webhook_sensor"}
    assert {j.name for j in repo.get_all_jobs()} >= {
        "incremental_job",
        "webhook_refresh_job",
        "sweep_job",
    }


@BOOTSTRAPPED
def test_incremental_job_takes_the_overlap_window_as_config(
    resources: dict, data: dict[str, Any], bootstrapped: Path
) -> None:
    instance = dg.DagsterInstance.ephemeral()
    _bootstrapped(resources, bootstrapped)
    data["events"].append(event(3, "RESERVATION_EVENT", 1))

    def config(seconds: float) -> dict:
        return {"ops": {"lake": {"config": {"event_overlap_seconds": seconds}}}}

    bad = execute_job(
        incremental_job,
        run_config=config(-1),
        resources=resources,
        instance=instance,
        raise_on_error=False,
    )
    assert not bad.success
    failure = bad.failure_data_for_node("lake")
    assert failure is not None and "event_overlap_seconds must be 0" in str(failure.error)
    lake = resources["lake"].lake()
    assert read_cursor(lake).event_id == 2  # type: ignore[union-attr]  # nothing applied

    ok = execute_job(incremental_job, run_config=config(0), resources=resources, instance=instance)
    assert ok.success and read_cursor(lake).event_id == 3  # type: ignore[union-attr]


_HANGING_RUN = """
import sys, time
import dagster as dg
from pipelines.jobs import incremental_job
from pipelines.resources import LakeResource
from tests.incremental import fakes
from tests.incremental.helpers import execute_job


class Hanging(fakes.IncrementalFakeService):
    async def latest_event(self, up_to_event_id=None):
        print("RUNNING", flush=True)
        time.sleep(600)  # killed here, inside the run


class HangingResource(fakes.IncrementalFakeResource):
    def open_client(self):
        return Hanging(fakes.fixture())


instance = dg.DagsterInstance.get()
execute_job(
    incremental_job,
    {"lake": LakeResource(data_dir=sys.argv[1], availability_start="2026-06-01"),
     "service": HangingResource()},
    instance=instance,
)
"""


def test_a_killed_run_does_not_block_the_sensor(
    resources: dict, data: dict[str, Any], tmp_path: Path
) -> None:
    """SIGKILL a real run in another process: Dagster leaves it STARTED; the feed sensor's next
    tick marks it failed (saying why) and asks for a new run instead of skipping forever."""
    import os
    import signal
    import subprocess
    import sys

    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(Path.cwd())}
    child = subprocess.Popen(
        [sys.executable, "-c", _HANGING_RUN, str(tmp_path / "other")],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "RUNNING"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        (record,) = instance.get_run_records()
        assert record.dagster_run.status == dg.DagsterRunStatus.STARTED  # what SIGKILL leaves
        _bootstrap(resources, data)
        data["events"].append(event(3, "RESERVATION_EVENT", 1))
        result = _tick(event_feed_sensor, instance, resources)
        assert isinstance(result, dg.RunRequest), result
        run = instance.get_run_by_id(record.dagster_run.run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.FAILURE


def test_a_failed_webhook_refresh_is_retried_with_a_new_key_after_a_backoff(
    resources: dict, data: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from pipelines import sensors

    _bootstrap(resources, data)
    inbox = WebhookInbox(tmp_path)
    _notify(inbox, "msg_1", 1)
    _notify(inbox, "msg_2", 2)
    instance = dg.DagsterInstance.ephemeral()
    request = _tick(webhook_sensor, instance, resources)
    assert isinstance(request, dg.RunRequest)

    class Down(IncrementalFakeResource):  # the service fails while the refresh reads
        def open_client(self):  # type: ignore[no-untyped-def]
            data["fail_on"] = {"reservation_details"}
            return super().open_client()

    monkeypatch.setattr(fakes_module, "PAGE_SIZE", 1)  # two pages: the second one fails
    down = {**resources, "service": Down(fixture=resources["service"].fixture)}
    failed = execute_job(
        webhook_refresh_job,
        down,
        run_config=request.run_config,
        instance=instance,
        tags=request.tags,
        raise_on_error=False,
    )
    assert not failed.success
    assert len(inbox.pending()) == 2  # nothing marked processed

    again = _tick(webhook_sensor, instance, resources)
    assert isinstance(again, dg.SkipReason) and "retrying in" in (again.skip_message or "")
    data["fail_on"] = set()
    later = sensors.webhook_decision(
        instance, inbox.pending(limit=sensors.WEBHOOK_BATCH), time.time() + 31
    )
    assert isinstance(later, dg.RunRequest)
    assert later.run_key == f"{request.run_key}-retry1" != request.run_key
    ok = execute_job(
        webhook_refresh_job,
        resources,
        run_config=later.run_config,
        instance=instance,
        tags=later.tags,
    )
    assert ok.success and inbox.pending() == []

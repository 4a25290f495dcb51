"""Tenants as Dagster partitions: the tenants sensor adds the file's tenants as partitions of
the lake and warehouse assets; a run of one tenant's partition, with the code location's
resources (not bound to a tenant), lands in that tenant's folder only; materializations and
check evaluations are recorded per tenant in the shared instance, and `reservoir status` reads
each tenant's checks; a feed-sensor tick asks for one run per tenant, with its partition, tag
and run key. Against the fake service (small and quick): the sandbox tenants are
tests/test_tenants.py's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster._core.event_api import PartitionKeyFilter

from lake.state import read_cursor
from pipelines.instance import prepare_instance
from pipelines.jobs import compact_job, incremental_job
from pipelines.lake_metadata import UNIQUE_KEYS, lake_key
from pipelines.partitions import PARTITIONS_NAME
from pipelines.resources import LakeResource
from pipelines.sensors import event_feed_sensor, tenants_sensor
from pipelines.settings import Settings
from pipelines.status import _checks, _runs
from pipelines.tenants import TENANT_TAG, TENANTS_ENV, load_tenants, tenant_settings
from tests.incremental.fakes import DATA, IncrementalFakeResource, fixture
from tests.incremental.helpers import execute_job

STAY_NIGHTS = dg.AssetKey(["warehouse", "core", "fct_stay_nights"])
STAY_NIGHTS_CHECK = "stay_nights_equal_stay_lengths"
TENANTS = """\
[[tenant]]
name = "north"
base_url = "https://north.invalid/v2"
client_id = "reservoir-north"
client_secret_env = "NORTH_SECRET"
scope = "NTH"

[[tenant]]
name = "south"
base_url = "https://south.invalid/v2"
client_id = "reservoir-south"
client_secret_env = "SOUTH_SECRET"
scope = "STH"
max_requests = 500
"""


@pytest.fixture
def deployment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: Any) -> dict[str, Any]:
    """A tenants file of two concerns, the code location's (unbound) resources, one instance."""
    path = tmp_path / "tenants.toml"
    path.write_text(TENANTS)
    monkeypatch.setenv(TENANTS_ENV, str(path))
    monkeypatch.setenv("RESERVOIR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NORTH_SECRET", "north-secret")
    monkeypatch.setenv("SOUTH_SECRET", "south-secret")
    monkeypatch.delenv("RESERVOIR_LAKE_URL", raising=False)
    name = request.node.name
    DATA[name] = fixture()
    yield {
        "data": DATA[name],
        "dir": tmp_path / "data",
        "resources": {
            "lake": LakeResource(
                data_dir=str(tmp_path / "data"),
                availability_start="2026-06-01",
                availability_horizon_days=3,
            ),
            "service": IncrementalFakeResource(fixture=name),
        },
    }
    DATA.pop(name, None)


def _tick(sensor: dg.SensorDefinition, instance: dg.DagsterInstance, resources: Any) -> Any:
    return sensor(dg.build_sensor_context(instance=instance, resources=resources))


@pytest.mark.slow
def test_each_tenant_is_a_partition_with_its_own_lake_materializations_and_checks(
    deployment: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    resources, data_dir = deployment["resources"], deployment["dir"]
    base = Settings(data_dir=data_dir)
    monkeypatch.setenv("DAGSTER_HOME", str(base.dagster_home))  # restored after the test
    instance = prepare_instance(base)  # the one instance the tenants share, as the CLI's
    added = _tick(tenants_sensor, instance, {})
    (request,) = added.dynamic_partitions_requests
    assert (request.partitions_def_name, list(request.partition_keys)) == (
        PARTITIONS_NAME,
        ["north", "south"],
    )
    instance.add_dynamic_partitions(PARTITIONS_NAME, list(request.partition_keys))
    assert _tick(tenants_sensor, instance, {}).dynamic_partitions_requests == []

    north = execute_job(incremental_job, resources, instance=instance, partition_key="north")
    assert north.success
    # The code location's resources took north's folder (and service) when the run started.
    north_lake = LakeResource(data_dir=str(data_dir / "tenant=north")).lake()
    assert read_cursor(north_lake).event_id == 2  # type: ignore[union-attr]
    assert (data_dir / "tenant=north" / "warehouse.duckdb").exists()
    assert not (data_dir / "tenant=south").exists() and not (data_dir / "lake").exists()
    # Compaction of north's partition folds north's lake (the resource resolved the same way).
    folding = LakeResource(data_dir=str(data_dir), compact_min_files=1)
    compacted = compact_job.execute_in_process(
        resources={"lake": folding}, instance=instance, partition_key="north"
    )
    assert compacted.success and compacted.output_for_node("compact_lake")
    assert not (data_dir / "lake").exists()

    # `reservoir status` per tenant: its own partition's checks, none of another tenant's.
    tenants = {t.name: t for t in load_tenants(Path(os.environ[TENANTS_ENV]))}
    north_checks = {(a, c): o for a, c, o, _ in _checks(tenant_settings(base, tenants["north"]))}
    south_checks = {(a, c): o for a, c, o, _ in _checks(tenant_settings(base, tenants["south"]))}
    assert north_checks[("lake/reservations", UNIQUE_KEYS)] == "passed"
    assert north_checks[(STAY_NIGHTS.to_user_string(), STAY_NIGHTS_CHECK)] == "passed"
    assert set(south_checks.values()) == {"not run yet"}

    south = execute_job(incremental_job, resources, instance=instance, partition_key="south")
    assert south.success and (data_dir / "tenant=south" / "warehouse.duckdb").exists()
    own_runs = {"north": {north.run_id, compacted.run_id}, "south": {south.run_id}}
    for run, tenant in ((north, "north"), (south, "south")):
        for key in (lake_key("reservations"), STAY_NIGHTS):
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=key, asset_partitions=[tenant]), limit=1
            ).records
            assert [r.run_id for r in records] == [run.run_id], (tenant, key)
        checks = [
            dg.AssetCheckKey(lake_key("reservations"), UNIQUE_KEYS),
            dg.AssetCheckKey(STAY_NIGHTS, STAY_NIGHTS_CHECK),
        ]
        latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            checks, partition_filter=PartitionKeyFilter(key=tenant)
        )
        assert {k: r.run_id for k, r in latest.items()} == dict.fromkeys(checks, run.run_id)
        records, _ = _runs(tenant_settings(base, tenants[tenant]))  # status's runs of the tenant
        assert {r.dagster_run.run_id for r in records} == own_runs[tenant]


def test_a_feed_tick_asks_for_one_run_per_tenant_with_its_partition_and_tag(
    deployment: dict[str, Any],
) -> None:
    resources = deployment["resources"]
    instance = dg.DagsterInstance.ephemeral()
    result = _tick(event_feed_sensor, instance, resources)
    assert isinstance(result, dg.SensorResult)
    # No lake yet: each tenant bootstraps, in its own partition, under its own run key.
    requests = {r.partition_key: r for r in result.run_requests}
    assert sorted(requests) == ["north", "south"]
    for tenant, request in requests.items():
        assert request.tags[TENANT_TAG] == tenant
        assert request.run_key == f"{tenant}:bootstrap-2"
    # The tick adds the tenants that are not partitions yet, before its runs start.
    (added,) = result.dynamic_partitions_requests
    assert sorted(added.partition_keys) == ["north", "south"]


class SouthDown(IncrementalFakeResource):
    """The fake service, unreachable for the tenant south."""

    def open_client(self):  # type: ignore[no-untyped-def]
        if self.tenant == "south":
            raise ConnectionError("south's service does not answer")
        return super().open_client()


def test_one_tenants_unreachable_service_does_not_stop_the_others_runs(
    deployment: dict[str, Any],
) -> None:
    fixture_name = deployment["resources"]["service"].fixture
    resources = {**deployment["resources"], "service": SouthDown(fixture=fixture_name)}
    result = _tick(event_feed_sensor, dg.DagsterInstance.ephemeral(), resources)
    assert [r.partition_key for r in result.run_requests] == ["north"]

"""The code location loads in a clean environment and every job, schedule and sensor resolves."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from pipelines.asset_keys import defined_check_keys
from pipelines.definitions import defs

LAKE_KEYS = [
    "lake/accommodation_type_additions",
    "lake/accommodation_type_capacities",
    "lake/accommodation_types",
    "lake/addon_prices",
    "lake/addons",
    "lake/allotments",
    "lake/availability",
    "lake/availability_prices",
    "lake/bill_lines",
    "lake/cash_accounts",
    "lake/cash_clearances",
    "lake/companies",
    "lake/customer_merges",
    "lake/customers",
    "lake/distribution_channel_cancellation_addons",
    "lake/distribution_channel_commissions",
    "lake/distribution_channels",
    "lake/implies",
    "lake/journal_entries",
    "lake/journal_reports",
    "lake/locations",
    "lake/offer_additions",
    "lake/offer_rates",
    "lake/offers",
    "lake/operation_tasks",
    "lake/owner_contracts",
    "lake/owners",
    "lake/periodical_tasks",
    "lake/rate_options",
    "lake/rate_types",
    "lake/rates",
    "lake/rentability_config",
    "lake/rentability_sets",
    "lake/reservation_subjects",
    "lake/reservations",
    "lake/reserved_resources",
    "lake/resource_reservability",
    "lake/units",
]
GROUPS = {"reference", "operations", "supply", "finance", "reservations", "pricing"}


def test_definitions_load_without_environment() -> None:
    """No env read at import time: a bare interpreter with no RESERVOIR_* variables loads defs."""
    code = "from pipelines.definitions import defs; defs.resolve_all_job_defs()"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "."}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def test_dagster_loads_the_workspace_as_make_dev_does(tmp_path: Path) -> None:
    """`reservoir dev` runs `dagster dev -w workspace.yaml`; Dagster's loader takes the module's
    one `Definitions` object and refuses a module with more than one at module scope."""
    dagster = Path(sys.executable).with_name("dagster")
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    env = {k: v for k, v in env.items() if not k.startswith("RESERVOIR_")}
    result = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "All code locations passed validation" in result.stdout + result.stderr


def test_only_one_definitions_object_at_module_scope() -> None:
    module = importlib.import_module("pipelines.definitions")
    found = [name for name, value in vars(module).items() if isinstance(value, dg.Definitions)]
    assert found == ["defs"]


def test_every_job_schedule_and_sensor_resolves() -> None:
    jobs = {j.name for j in defs.resolve_all_job_defs()}
    assert {"extract_job", "main_job", "compact_job"} <= jobs
    for name in ("extract_job", "main_job", "compact_job"):
        assert defs.resolve_job_def(name).executor_def is dg.in_process_executor
    for schedule in defs.schedules or []:
        defs.resolve_schedule_def(schedule.name)
    for sensor in defs.sensors or []:
        defs.resolve_sensor_def(sensor.name)


def test_lake_asset_keys_are_pinned() -> None:
    keys = sorted(k.to_user_string() for k in defs.resolve_all_asset_keys())
    assert [k for k in keys if k.startswith("lake/")] == LAKE_KEYS
    extract = defs.resolve_job_def("extract_job")
    assert (
        sorted(k.to_user_string() for k in extract.asset_layer.executable_asset_keys) == LAKE_KEYS
    )


def test_lake_assets_have_groups_kinds_and_descriptions() -> None:
    for spec in defs.resolve_all_asset_specs():
        if spec.key.path[0] != "lake":
            continue
        assert spec.group_name in GROUPS, spec.key
        assert spec.kinds == {"python", "parquet"}, spec.key
        assert spec.description, spec.key


def test_module_reload_is_stable() -> None:
    module = importlib.import_module("pipelines.definitions")
    assert importlib.reload(module).defs is not None


def test_automation_that_costs_nothing_starts_on_and_the_feed_sensor_waits() -> None:
    """README: the webhook and tenants sensors and the nightly sweep run from the start; the
    feed sensor (2,880 requests a day) starts stopped."""
    import dagster as dg

    from pipelines.definitions import defs

    status = {s.name: s.default_status for s in defs.sensors or []}
    assert status["webhook_sensor"] == dg.DefaultSensorStatus.RUNNING
    assert status["tenants_sensor"] == dg.DefaultSensorStatus.RUNNING
    assert status["event_feed_sensor"] == dg.DefaultSensorStatus.STOPPED
    schedules = {s.name: s.default_status for s in defs.schedules or []}
    assert schedules["nightly_sweep_schedule"] == dg.DefaultScheduleStatus.RUNNING


def test_the_check_keys_known_without_loading_the_definitions_are_theirs() -> None:
    """`reservoir status` lists every check from `defined_check_keys` (the definitions' import
    costs ~0.8 CPU s): a check added to an asset and not there would never show."""
    defined = [k for a in defs.get_repository_def().asset_graph.assets_defs for k in a.check_keys]
    assert sorted(defined_check_keys()) == sorted(defined)
    assert len(set(defined)) == len(defined) >= 80

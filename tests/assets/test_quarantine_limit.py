"""The quarantine limit: a table fails only when it quarantines more than the larger of a share
of its records and an absolute floor; both are settings (run config, environment, resource)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from assets.quarantine import allowed
from pipelines.lake_assets import lake_assets, spec_keys
from pipelines.resources import LakeResource
from pipelines.settings import Settings, SettingsError, quarantine_limits
from tests.assets.fake_service import FakeServiceResource, default_fixture, register
from tests.partitioned import materialize


def _units(name: str, bad: int) -> str:
    """A fixture whose units list has 12 records, `bad` of them with an impossible date."""
    data = default_fixture()
    template = data["units"][0]
    data["units"] = [
        {
            **template,
            "unitId": 101 + i,
            "code": f"U{i}",
            "setupDate": "2026-13-45" if i < bad else "2020-01-01",
        }
        for i in range(12)
    ]
    return register(name, data)


def _run(
    tmp_path: Path, fixture: str, config: dict[str, Any] | None = None, **resource: Any
) -> dg.ExecuteInProcessResult:
    lake = LakeResource(data_dir=str(tmp_path), availability_start="2026-06-01", **resource)
    return materialize(
        [lake_assets],
        selection=spec_keys("units"),
        resources={"service": FakeServiceResource(fixture=fixture), "lake": lake},
        run_config={"ops": {"lake": {"config": config or {}}}},
        raise_on_error=False,
    )


def _failure(result: dg.ExecuteInProcessResult) -> str:
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    return failure.step_failure_data.user_failure_data.description


@pytest.fixture(autouse=True)
def _no_limits_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESERVOIR_QUARANTINE_MAX_SHARE", raising=False)
    monkeypatch.delenv("RESERVOIR_QUARANTINE_FLOOR", raising=False)


def test_the_limit_is_the_larger_of_the_share_and_the_floor() -> None:
    assert allowed(12, 0.05, 5) == 5  # 0.6 records by share: the floor wins
    assert allowed(400, 0.05, 5) == 20  # exactly 5 %, despite 0.05 * 400 > 20 in floats
    assert allowed(100_000, 0.05, 5) == 5_000
    assert allowed(12, 0.05, 0) == 0
    assert allowed(0, 0.05, 5) == 5


def test_one_bad_record_in_a_small_table_is_quarantined_not_fatal(tmp_path: Path) -> None:
    result = _run(tmp_path, _units("units_one_bad", 1))
    assert result.success
    lake = LakeResource(data_dir=str(tmp_path)).lake()
    assert lake.current("units").num_rows == 11
    assert len(lake.quarantine_files("units")) == 1
    (check,) = [
        c for c in result.get_asset_check_evaluations() if c.check_name == "quarantine_rate"
    ]
    assert not check.passed  # still a warning: something was quarantined
    assert check.metadata["allowed"].value == 5 and check.metadata["quarantined"].value == 1


def test_more_than_the_floor_fails_and_says_which_setting_to_raise(tmp_path: Path) -> None:
    result = _run(tmp_path, _units("units_six_bad", 6))
    assert not result.success
    message = _failure(result)
    assert "table 'units': 6 of 12 records (50.0%) failed validation" in message
    assert "more than the 5 allowed (the larger of 5.0% of its records and 5 records)" in message
    assert "units.setup_date" in message
    assert "raise RESERVOIR_QUARANTINE_MAX_SHARE (now 0.05) or RESERVOIR_QUARANTINE_FLOOR " in (
        message
    )
    assert "quarantine_max_share / quarantine_floor" in message
    assert LakeResource(data_dir=str(tmp_path)).lake().files("units") == []


def test_the_run_config_raises_the_floor(tmp_path: Path) -> None:
    result = _run(tmp_path, _units("units_six_bad_config", 6), {"quarantine_floor": 6})
    assert result.success
    assert LakeResource(data_dir=str(tmp_path)).lake().current("units").num_rows == 6


@pytest.mark.parametrize(
    ("name", "value"),
    [("RESERVOIR_QUARANTINE_FLOOR", "6"), ("RESERVOIR_QUARANTINE_MAX_SHARE", "0.5")],
)
def test_the_environment_raises_the_limit_when_the_run_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    fixture = _units(f"units_six_bad_{name}", 6)
    assert not _run(tmp_path / "before", fixture).success
    monkeypatch.setenv(name, value)  # after import: read when the run starts
    assert _run(tmp_path / "after", fixture).success


def test_the_run_config_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESERVOIR_QUARANTINE_FLOOR", "6")
    result = _run(tmp_path, _units("units_six_bad_both", 6), {"quarantine_floor": 0})
    assert not result.success and "more than the 0 allowed" in _failure(result)


def test_a_resource_floor_is_used_when_nothing_else_says(tmp_path: Path) -> None:
    assert not _run(tmp_path, _units("units_one_bad_floor0", 1), quarantine_floor=0).success


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"RESERVOIR_QUARANTINE_MAX_SHARE": "5%"}, "between 0 and 1"),
        ({"RESERVOIR_QUARANTINE_MAX_SHARE": "1.5"}, "between 0 and 1"),
        ({"RESERVOIR_QUARANTINE_FLOOR": "-1"}, "whole number"),
        ({"RESERVOIR_QUARANTINE_FLOOR": "five"}, "whole number"),
    ],
)
def test_a_wrong_limit_in_the_environment_is_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], needle: str
) -> None:
    with pytest.raises(SettingsError, match=needle):
        quarantine_limits(env)
    with pytest.raises(SettingsError, match=needle):
        Settings.from_env({"RESERVOIR_DATA_DIR": str(tmp_path), **env})
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = _run(tmp_path, _units(f"units_env_{needle}", 1))
    assert not result.success and needle in _failure(result)


def test_limits_read_from_the_environment() -> None:
    assert quarantine_limits({}) == (None, None)
    env = {"RESERVOIR_QUARANTINE_MAX_SHARE": " 0.2 ", "RESERVOIR_QUARANTINE_FLOOR": "12"}
    assert quarantine_limits(env) == (0.2, 12)

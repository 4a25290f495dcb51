"""An optional area the credentials do not cover (assets/areas.py), over real HTTP, real Dagster
and a real DuckDB file: the sandbox refuses the owners area to its client (403: permission not
granted, 404: module not enabled), as a real API user without that permission would be.

One story, told once (`story`), asserted phase by phase:

1. a full run refused from the start: every other table lands, the summary names the area and
   what to ask for, the owners' mart is built empty and `meta.refused_areas` says why, no check
   fails;
2. `reservoir doctor` meanwhile: ready, with the area as a warning; a refused core area
   (reservations) blocks;
3. the area comes back: the next run (the bootstrap) reads it, the mart matches the truth;
4. refused again (404) while the world moves five days (and its owners change): the incremental run lands the rest,
   keeps every owner record the lake had (no tombstone, no removal guard), and says so;
5. back again: the next incremental run reads the area in full (the changes made while it was
   refused included) and forgets the refusal.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pandas as pd
import pyarrow as pa
import pytest
from rich.console import Console

from assets.refusal import read_refused
from lake.store import Lake
from pipelines.doctor import DoctorReport, diagnose
from pipelines.doctor_report import print_report
from pipelines.instance import prepare_instance
from pipelines.runner import RunError, ServiceTarget, run_pipeline
from pipelines.settings import Settings
from pipelines.status import print_status
from pipelines.summary import RunSummary
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from sandbox.world.truth_owners import owner_statement
from tests.e2e.test_mart_truth import mismatches

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("optional_areas")]

OWNER_MART = "marts.owner_statement_monthly"
OWNER_TABLES = ("owners", "owner_contracts")


@dataclass
class Phase:
    """What one run left behind, captured before the next one starts."""

    summary: RunSummary
    printed: str
    owners: pa.Table  # the lake's current owners (data columns)
    contracts: pa.Table
    owner_ids_in_world: set[int]
    contracts_in_world: int
    reservations_in_lake: int
    reservations_in_world: int
    meta: list[dict[str, Any]]  # meta.refused_areas
    mart_rows: int
    mart: pd.DataFrame
    truth: pd.DataFrame
    refused_state: set[str]  # the lake's record of refused streams
    newest_change_in_world: pd.Timestamp  # the owners' newest modifiedDate
    newest_change_in_lake: pd.Timestamp | None
    recorded: dict[str, str]  # what Dagster recorded about the owners (metadata, checks)
    status: str  # what `reservoir status` prints


@dataclass
class Story:
    phases: dict[str, Phase] = field(default_factory=dict)
    doctor: DoctorReport | None = None
    doctor_printed: str = ""
    doctor_core: DoctorReport | None = None


def _data(table: pa.Table) -> pa.Table:
    keep = [c for c in table.schema.names if not c.startswith("_")]
    return table.select(keep).sort_by([(c, "ascending") for c in keep[:2]])


def _run(
    settings: Settings, handle: SandboxHandle, mode: str
) -> tuple[RunSummary, str, dict[str, str]]:
    out = io.StringIO()
    saved = os.environ.get("DAGSTER_HOME")
    try:
        summary = run_pipeline(
            settings,
            mode=mode,
            quiet=True,
            console=Console(file=out, width=250),
            target=ServiceTarget.from_sandbox(handle),
        )
        recorded = _recorded(prepare_instance(settings), summary.run_id)
    finally:  # the session's other tests never see the run's home
        if saved is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = saved
    return summary, out.getvalue(), recorded


def _recorded(instance: dg.DagsterInstance, run_id: str) -> dict[str, str]:
    """What the run's event log says about the owners: the lake table's and the mart's
    materialisation metadata, the mart's check descriptions."""
    found: dict[str, str] = {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None:
            continue
        data: Any = event.event_specific_data
        if event.event_type_value == "ASSET_MATERIALIZATION":
            key = data.materialization.asset_key.to_user_string()
            meta = data.materialization.metadata
            for name in ("refused_area", "what_to_do", "refused_areas"):
                if name in meta and key in (
                    "lake/owners",
                    f"warehouse/{OWNER_MART.replace('.', '/')}",
                ):
                    found[f"{key} {name}"] = str(getattr(meta[name], "value", meta[name]))
        elif event.event_type_value == "ASSET_CHECK_EVALUATION":
            key = data.asset_key.to_user_string()
            if key.endswith("owner_statement_monthly"):
                found[f"check {data.check_name}"] = f"{data.severity.value}: {data.description}"
    return found


def _capture(settings: Settings, handle: SandboxHandle, mode: str) -> Phase:
    summary, printed, recorded = _run(settings, handle, mode)
    lake = Lake(settings.lake_dir)
    world = handle.world
    con = duckdb.connect(str(settings.warehouse_path), read_only=True)
    try:
        rel = con.execute("select * from meta.refused_areas order by stream")
        cols = [d[0] for d in rel.description or ()]
        meta = [dict(zip(cols, row, strict=True)) for row in rel.fetchall()]
        rel = con.execute(f"select * from {OWNER_MART}")
        cols = [d[0] for d in rel.description or ()]
        mart = pd.DataFrame.from_records(rel.fetchall(), columns=cols)
    finally:
        con.close()
    with world.lock:
        owners = world.records("owners")
        truth = owner_statement(world)
        reservations = len(world.keys("reservations"))
    return Phase(
        summary=summary,
        printed=printed,
        owners=_data(lake.current("owners")),
        contracts=_data(lake.current("owner_contracts")),
        owner_ids_in_world={o["ownerId"] for o in owners},
        contracts_in_world=sum(len(o["contracts"]) for o in owners),
        reservations_in_lake=len(lake.current_ids("reservations", "reservation_id")),
        reservations_in_world=reservations,
        meta=meta,
        mart_rows=len(mart),
        mart=mart,
        truth=truth,
        refused_state=set(read_refused(lake)),
        recorded=recorded,
        status=_status(settings),
        newest_change_in_world=max(_naive(o["modifiedDate"]) for o in owners),
        newest_change_in_lake=max(
            (_naive(v) for v in lake.current("owners").column("modified_date").to_pylist()),
            default=None,
        ),
    )


def _status(settings: Settings) -> str:
    out = io.StringIO()
    print_status(settings, Console(file=out, width=250))
    return " ".join(out.getvalue().split())


def _naive(value: Any) -> pd.Timestamp:
    """A UTC time without its zone, from the wire's text or the lake's timestamp."""
    stamp = pd.Timestamp(value)
    return stamp.tz_convert("UTC").tz_localize(None) if stamp.tzinfo else stamp


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Story]:
    settings = Settings(data_dir=Path(tmp_path_factory.mktemp("optional-areas")))
    told = Story()
    sandbox = SandboxSettings(scale="small", refused_areas={"owners": 403})
    with run_sandbox(sandbox) as handle:
        told.phases["refused from the start"] = _capture(settings, handle, "full")
        doctor_dir = Path(tmp_path_factory.mktemp("doctor"))
        target = ServiceTarget.from_sandbox(handle)
        told.doctor = diagnose(Settings(data_dir=doctor_dir), target=target)
        out = io.StringIO()
        print_report(Console(file=out, width=250), told.doctor)
        told.doctor_printed = out.getvalue()
        handle.areas.configure({"reservations": 403})
        told.doctor_core = diagnose(Settings(data_dir=doctor_dir), target=target)

        handle.areas.configure({})
        told.phases["back"] = _capture(settings, handle, "auto")  # the bootstrap

        handle.areas.configure({"owners": 404})
        handle.world.advance(120)  # owners change meanwhile (0.6 changes a day)
        told.phases["refused again"] = _capture(settings, handle, "auto")  # incremental

        handle.areas.configure({})
        handle.world.advance(2)
        told.phases["back again"] = _capture(settings, handle, "auto")
    yield told


def _assert_named(phase: Phase, what: str) -> None:
    assert set(phase.summary.refused) == {"owners"}, phase.summary.refused
    line = phase.summary.refused["owners"]
    assert line.startswith("owners: GET /owners") and what in line, line
    assert "nothing removed" in line
    assert "refused area: owners (owners) since batch" in phase.status
    assert what in phase.status
    printed = " ".join(phase.printed.split())
    assert "refused: 1 stream(s) of optional areas not read (the rest landed):" in printed
    assert what in printed


def _assert_meta(phase: Phase, status: int) -> None:
    assert [m["stream"] for m in phase.meta] == ["owners"]
    row = phase.meta[0]
    assert row["area"] == "owners" and row["http_status"] == status
    assert set(row["lake_tables"]) == set(OWNER_TABLES)
    assert OWNER_MART in row["models"]
    assert "marts.occupancy_daily" not in row["models"]


def _assert_checks_say_so(phase: Phase) -> None:
    owner_checks = [c for c in phase.summary.checks if c.asset.endswith("owner_statement_monthly")]
    assert owner_checks, "the owners' mart has checks"
    assert all(c.outcome in ("passed", "warned") for c in owner_checks), owner_checks
    assert not phase.summary.failed_checks, phase.summary.failed_checks
    # Dagster's record: the lake table, the mart and its checks name the area
    recorded = phase.recorded
    assert recorded["lake/owners refused_area"] == "owners"
    assert "ask the service's administrator" in recorded["lake/owners what_to_do"]
    mart = f"warehouse/{OWNER_MART.replace('.', '/')} refused_areas"
    assert "area owners refused by the service" in recorded[mart]
    checks = {k: v for k, v in recorded.items() if k.startswith("check ")}
    assert checks and all(v.startswith("WARN: ") for v in checks.values()), checks
    assert all("area owners refused by the service" in v for v in checks.values()), checks


def _assert_nothing_refused_recorded(phase: Phase) -> None:
    assert "refused area" not in phase.status
    assert not any("refused" in k for k in phase.recorded), phase.recorded
    checks = [v for k, v in phase.recorded.items() if k.startswith("check ")]
    assert checks and all(v.startswith("ERROR: ") for v in checks), checks


def test_a_full_run_lands_everything_but_the_refused_area(story: Story) -> None:
    phase = story.phases["refused from the start"]
    _assert_named(phase, "ask the service's administrator to grant the API user the permission")
    assert phase.owners.num_rows == 0 and phase.contracts.num_rows == 0
    assert phase.summary.tables["owners"].rows == 0
    assert phase.reservations_in_lake == phase.reservations_in_world > 0
    landed = {t for t, line in phase.summary.tables.items() if line.rows}
    assert {"reservations", "bill_lines", "units", "addons", "offers", "journal_entries"} <= landed
    assert phase.refused_state == {"owners"}


def test_the_mart_of_a_never_read_area_is_empty_and_the_warehouse_says_why(
    story: Story,
) -> None:
    phase = story.phases["refused from the start"]
    assert phase.mart_rows == 0
    assert len(phase.truth) > 0  # the world has owner statements: the mart is empty because
    _assert_meta(phase, 403)  # the area was refused, and the warehouse records that
    assert "permission for owners" in phase.meta[0]["what_to_do"]
    assert "occupancy_daily" in phase.summary.models  # the other marts were built
    _assert_checks_say_so(phase)


def test_doctor_warns_about_an_optional_area_and_blocks_on_a_core_one(story: Story) -> None:
    report = story.doctor
    assert report is not None and report.ok, report and report.tables
    assert set(report.refused_areas) == {"owners"}
    rows = {t.table: t for t in report.tables}
    assert rows["owners"].blocking is False and rows["owner_contracts"].blocking is False
    assert "optional area owners refused" in rows["owners"].why
    assert "permission for owners" in rows["owners"].why
    assert not any(t.blocking for t in report.tables)
    printed = " ".join(story.doctor_printed.split())
    assert "warning: optional area owners: GET /owners refused (HTTP 403)" in printed
    assert "ready, with warnings: the optional area(s) owners will not be read" in printed

    core = story.doctor_core
    assert core is not None and not core.ok
    blocked = {t.table: t for t in core.tables if t.blocking}
    assert "reservations" in blocked
    assert "core area reservations refused" in blocked["reservations"].why
    assert "owners" not in core.refused_areas


def test_the_area_back_is_read_and_its_mart_matches_the_truth(story: Story) -> None:
    phase = story.phases["back"]
    assert phase.summary.refused == {}
    assert set(phase.owners.column("owner_id").to_pylist()) == phase.owner_ids_in_world
    assert phase.contracts.num_rows == phase.contracts_in_world
    assert phase.meta == [] and phase.refused_state == set()
    _assert_nothing_refused_recorded(phase)
    bad = mismatches("owner_statement_monthly", phase.truth, phase.mart)
    assert not bad, "\n".join(bad[:20])


def test_an_area_refused_later_loses_nothing(story: Story) -> None:
    before, phase = story.phases["back"], story.phases["refused again"]
    assert phase.summary.mode == "incremental"
    _assert_named(phase, "ask the service's administrator to enable the owners module")
    # every record the lake had stays current, unchanged: no tombstone, no removal
    assert phase.owners.equals(before.owners)
    assert phase.contracts.equals(before.contracts)
    # the world's owners moved meanwhile: what the lake lacks now, the next run must bring
    assert phase.newest_change_in_lake is not None
    assert phase.newest_change_in_world > phase.newest_change_in_lake
    assert phase.reservations_in_lake == phase.reservations_in_world
    assert phase.mart_rows == before.mart_rows > 0  # built from the lake's last owners
    _assert_meta(phase, 404)
    _assert_checks_say_so(phase)
    assert phase.refused_state == {"owners"}


def test_the_area_back_again_is_read_in_full(story: Story) -> None:
    phase = story.phases["back again"]
    assert phase.summary.refused == {}
    assert phase.summary.tables["owners"].rows > 0  # read in full, not only what changed
    assert phase.newest_change_in_lake == phase.newest_change_in_world
    assert phase.summary.read_again == ["owners"]
    assert "read again: owners answered again after a refusal" in phase.printed
    _assert_nothing_refused_recorded(phase)
    assert set(phase.owners.column("owner_id").to_pylist()) == phase.owner_ids_in_world
    assert phase.contracts.num_rows == phase.contracts_in_world
    assert phase.meta == [] and phase.refused_state == set()
    bad = mismatches("owner_statement_monthly", phase.truth, phase.mart)
    assert not bad, "\n".join(bad[:20])


def test_a_refused_core_area_fails_the_run_and_says_what_to_ask_for(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    settings = Settings(data_dir=Path(tmp_path_factory.mktemp("core-refused")))
    sandbox = SandboxSettings(scale="small", refused_areas={"units": 403})
    with run_sandbox(sandbox) as handle, pytest.raises(RunError) as failed:
        _run(settings, handle, "full")
    message = str(failed.value)
    assert "units: GET /units: the API user has no access (403)" in message
    assert "the core area units: the marts cannot be built without it" in message
    assert "grant the API user the permission for units" in message
    assert read_refused(Lake(settings.lake_dir)) == {}  # a core stream is not "refused"

"""`reservoir doctor`: the embedded sandbox is ready (exit 0, every catalogue endpoint listed), a
service that refuses a section or ignores a filter is not (the table names the refused part and
the lake table it empties or degrades; exit 1), a wrong credential is named at once (exit 1)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console
from typer.testing import CliRunner

from assets.catalogue import SPECS
from pipelines.cli import app
from pipelines.doctor import DoctorReport, diagnose
from pipelines.doctor_report import print_report
from pipelines.runner import ServiceTarget
from pipelines.settings import Settings
from service.api import RESERVATION_SECTIONS
from service.errors import TEST_REFRESH_HINT
from tests.service.fakes import BASE, CLIENT_ID, SECRET, FakeService, records
from tests.stub_service import STUB_SECRET, stub_service

runner = CliRunner()
WIDE = {"COLUMNS": "250"}


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Only the data directory set: the embedded sandbox, as `reservoir run` would use."""
    unset = {
        name: None
        for name in (
            "RESERVOIR_BASE_URL",
            "RESERVOIR_CLIENT_ID",
            "RESERVOIR_CLIENT_SECRET",
            "RESERVOIR_SCOPE",
        )
    }
    return {**unset, **WIDE, "RESERVOIR_DATA_DIR": str(tmp_path / "data"), **extra}  # type: ignore[dict-item]


# ------------------------------------------------------------------ the embedded sandbox


@pytest.mark.sandbox
def test_the_embedded_sandbox_is_ready(tmp_path: Path) -> None:
    result = runner.invoke(app, ["doctor"], env=_env(tmp_path))
    assert result.exit_code == 0, result.output
    out = result.output
    for spec in SPECS:
        assert f"GET {spec.source}" in out, spec.source
    for section in RESERVATION_SECTIONS:
        assert f"{section} accepted" in out
    assert "authentication: ok" in out and "every table can be filled" in out
    assert "ready" in out and "the sandbox charges nothing" in out


@pytest.mark.sandbox
def test_json_parses_and_says_the_same(tmp_path: Path) -> None:
    result = runner.invoke(app, ["doctor", "--json"], env=_env(tmp_path))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ok"] is True and data["authenticated"] is True
    assert [e["stream"] for e in data["endpoints"]] == [s.name for s in SPECS]
    assert all(e["reachable"] and e["status"] in (200, 204) for e in data["endpoints"])
    assert data["tables"] == []
    assert data["budget"]["used_by_doctor"] > 0 and data["budget"]["daily_free"] == 25_000
    assert "secret" not in json.dumps(data).lower()


# ------------------------------------------------------------------ a service of the other style


def _complete_fake() -> FakeService:
    """Every endpoint of the catalogue with a record or two; sections as the client asks them."""
    fake = FakeService()
    sections = {"reservedResources": [], "customerBill": [], "payingCustomerBill": []}
    lists: dict[str, tuple[str, list[dict[str, Any]]]] = {
        "/distributionchannels/details": (
            "distributionChannelId",
            records("distributionChannelId", [1, 2]),
        ),
        "/locations": ("locationId", records("locationId", [1, 2])),
        "/accommodationtypes/details": (
            "resourceId",
            records("resourceId", [1001, 1002], capacities=[]),
        ),
        "/units": ("unitId", records("unitId", [1, 2, 3])),
        "/ratetypes": ("rateTypeId", records("rateTypeId", [1])),
        "/ratetypes/rateoptions": ("rateOptionId", records("rateOptionId", [1])),
        "/companies": ("companyId", records("companyId", [1])),
        "/companies/journalreports": ("journalReportId", records("journalReportId", [7])),
        "/companies/journalreports/7/entries": ("journalEntryId", records("journalEntryId", [1])),
        "/cashreservations/accounts": ("cashAccountId", records("cashAccountId", [1])),
        "/cashreservations/clearance": ("cashClearanceId", []),  # none: empty, not a failure
        "/customers": ("customerId", records("customerId", [5, 6])),
        "/events": ("eventId", records("eventId", [1, 2])),
        "/reservations/details": (
            "reservationId",
            records("reservationId", [100], agentBill=[], subjects=[], **sections),
        ),
        "/accommodationtypes/1001/rates": ("rateId", records("rateId", [1, 2])),
        "/accommodationtypes/availability": ("resourceId", records("resourceId", [1001])),
        "/operations/tasks": ("taskId", records("taskId", [1])),
        "/operations/periodicalTasks": ("periodicalTaskId", records("periodicalTaskId", [1])),
        "/allotments": ("allotmentId", records("allotmentId", [1])),
        "/rentability/sets": ("rentabilitySetId", records("rentabilitySetId", [1])),
        "/rentability/config": ("rentabilityConfigId", records("rentabilityConfigId", [1])),
        "/resourcereservability": ("reservabilityId", records("reservabilityId", [1])),
        "/owners": ("ownerId", records("ownerId", [1], contracts=[])),
        "/add-ons": ("resourceId", records("resourceId", [2001], prices=[])),
        "/offers": ("resourceId", records("resourceId", [900009], rates=[])),
        "/accommodationtypes/additions": ("additionId", records("additionId", [1])),
        "/offers/additions": ("additionId", records("additionId", [1])),
    }
    for path, (key, rows) in lists.items():
        fake.add_list(path, key, rows)
    return fake


def _refuse_section(section: str) -> Any:
    def script(request: httpx.Request) -> httpx.Response | None:
        asked = ",".join(request.url.params.get_list("returnSections"))
        if section in asked.split(","):
            message = f"Invalid returnSections value {section}"
            return httpx.Response(400, json={"status": 400, "message": message})
        return None

    return script


def _diagnose(fake: FakeService, tmp_path: Path) -> DoctorReport:
    target = ServiceTarget(BASE, CLIENT_ID, SECRET, "TST", today="2026-11-01")
    return diagnose(Settings(data_dir=tmp_path), target=target, transport=fake.transport())


def _printed(report: DoctorReport) -> str:
    console = Console(record=True, width=250, file=io.StringIO())
    print_report(console, report)
    return console.export_text()


def test_a_complete_service_of_the_other_style_is_ready(tmp_path: Path) -> None:
    report = _diagnose(_complete_fake(), tmp_path)
    assert report.ok, _printed(report)
    assert [t.table for t in report.tables] == ["cash_clearances"]  # empty at the source
    assert not report.tables[0].blocking
    assert "charged" not in _printed(report)  # 25,000 free, 20,000 a run: no warning


@pytest.mark.parametrize(
    ("section", "table", "outlook", "why"),
    [
        ("SUBJECTS", "reservation_subjects", "empty", "nothing: section SUBJECTS refused"),
        ("AGENTBILL", "bill_lines", "degraded", "no AGENT lines: section AGENTBILL refused"),
    ],
)
def test_a_refused_section_names_the_table_it_costs(
    tmp_path: Path, section: str, table: str, outlook: str, why: str
) -> None:
    fake = _complete_fake()
    fake.scripts.append(_refuse_section(section))
    report = _diagnose(fake, tmp_path)
    assert not report.ok
    probe = next(p for p in report.endpoints if p.stream == "reservations")
    assert probe.status == 400  # the pipeline's own request, all sections at once
    assert probe.sections[section] == f"refused (HTTP 400: Invalid returnSections value {section})"
    assert all(v == "accepted" for s, v in probe.sections.items() if s != section)
    outlooks = {t.table: t for t in report.tables}
    assert outlooks[table].outlook == outlook and why in outlooks[table].why
    assert outlooks[table].blocking and outlooks["reservations"].blocking
    text = _printed(report)
    assert f"{section} refused (HTTP 400: Invalid" in text and table in text and "not ready" in text
    assert SECRET not in text


def test_an_ignored_keyset_filter_is_blocking(tmp_path: Path) -> None:
    fake = _complete_fake()

    def ignore_filter(request: httpx.Request) -> httpx.Response | None:
        if request.url.path.endswith("/units") and "filter" in request.url.params:
            body = {"content": [{"unitId": 1}], "size": 1, "numberOfElements": 1}
            return httpx.Response(200, json=body)
        return None

    fake.scripts.append(ignore_filter)
    report = _diagnose(fake, tmp_path)
    probe = next(p for p in report.endpoints if p.stream == "units")
    assert probe.filters == {"unitId>": "ignored", "unitId:[..]": "ok"}
    units = next(t for t in report.tables if t.table == "units")
    assert units.blocking and "keyset filter unitId> is ignored" in units.why
    assert not report.ok


def test_a_page_size_cap_is_reported_not_blocking(tmp_path: Path) -> None:
    fake = _complete_fake()
    fake.max_size = 200
    report = _diagnose(fake, tmp_path)
    assert report.ok
    units = next(p for p in report.endpoints if p.stream == "units")
    assert (units.page_size, units.page_size_asked) == (200, 1000)
    assert "200 of 1000 asked" in _printed(report)


# ------------------------------------------------------------------ a wrong credential


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_a_wrong_credential_is_named_and_exits_1(tmp_path: Path, as_json: bool) -> None:
    body = '{"status": 500, "message": "Bad credentials"}'
    with stub_service(500, body) as stub:
        env = {**_env(tmp_path), **stub.env(str(tmp_path / "data"))}
        result = runner.invoke(app, ["doctor", *(["--json"] if as_json else [])], env=env)
    assert result.exit_code == 1, result.output
    assert stub.authentications == 1 and len(stub.paths) == 1  # nothing probed after it
    assert STUB_SECRET not in result.output
    if as_json:
        data = json.loads(result.output)
        assert data["ok"] is False and data["authenticated"] is False
        assert TEST_REFRESH_HINT in data["authentication"]
    else:
        text = " ".join(result.output.split())  # rich wraps long lines
        assert "authentication: failed" in text and "Bad credentials" in text
        assert " ".join(TEST_REFRESH_HINT.split()) in text and "not ready" in text

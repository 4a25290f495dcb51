"""Owners against the sandbox over HTTP: served at /owners (paged, `ownerId:[ids]`, by id),
their stays on their units, OWNER_EVENT under `advance` (created, changed, deleted), and the
lake refreshed from those events equal to a fresh full load, with no personal data landed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assets.modes import apply_changes
from assets.plan import plan_changes
from assets.settings import IngestSettings
from lake.store import Lake
from lake.tables import TABLES
from tests.incremental.helpers import _data, sandbox_opener, table_differences
from tests.sandbox.conftest import signed_in

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

OWNER_TABLES = ("owners", "owner_contracts")
PII = ("firstName", "lastName", "email", "phone", "address")


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    from sandbox.runner import SandboxSettings, run_sandbox

    with run_sandbox(SandboxSettings(seed=3, scale="small")) as handle:
        yield handle


def _get(sb: Any, path: str, **params: Any) -> Any:
    with signed_in(sb) as api:
        r = api.get(path, params=params)
    r.raise_for_status()
    return r.json()


def _settings(sb: Any) -> IngestSettings:
    with sb.world.lock:
        return IngestSettings(today=sb.world.now.date(), horizon_days=3)


def test_owners_are_served_with_their_units_and_stays(sb: Any) -> None:
    page = _get(sb, "/owners", size=50)
    owners = page["content"]
    assert page["totalElements"] == len(owners) >= 3
    with_units = [o for o in owners if o["contracts"]]
    assert with_units and any(not o["contracts"] for o in owners)  # prospects too
    first = with_units[0]
    assert _get(sb, f"/owners/{first['ownerId']}") == first
    picked = _get(sb, "/owners", filter=f"ownerId:[{first['ownerId']}]")["content"]
    assert [o["ownerId"] for o in picked] == [first["ownerId"]]
    # the generated owner stays are the owners' own use of their units
    units = {c["unitId"] for o in owners for c in o["contracts"]}
    world = sb.world
    with world.lock:
        owner_stays = {
            r["reservationId"]
            for r in world.records("reservations")
            if r["categoryCode"] == "OWNER"
        }
        stay_units = {
            rr["unitId"]
            for rr in world.records("reservedresources")
            if rr["reservationId"] in owner_stays and rr["type"] == "ACCOMMODATIONTYPE"
        }
    assert owner_stays and stay_units <= units
    for c in (c for o in owners for c in o["contracts"]):
        assert 0 < c["revenueSharePercentage"] < 100 and c["startDate"]


def test_owner_events_refresh_the_lake_like_a_full_load(sb: Any, tmp_path: Path) -> None:
    opener = sandbox_opener(sb)
    lake = Lake(tmp_path / "incremental")
    assert apply_changes(lake, opener, _settings(sb)).mode == "bootstrap"
    before = {r["owner_id"] for r in lake.current("owners").to_pylist()}

    summary = sb.world.advance(24 * 45)  # crosses a month's close: owner journals are booked
    with sb.world.lock:
        events = [
            e
            for e in sb.world.records("events")
            if e["eventType"] == "OWNER_EVENT" and e["eventId"] >= summary["firstEventId"]
        ]
    assert {e["entityAction"] for e in events} >= {"CREATE", "UPDATE", "DELETE"}

    plan = plan_changes(events)  # the events name owners to refetch and to tombstone
    assert plan.refresh["owners"] and plan.delete["owners"] and not plan.unknown
    run = apply_changes(lake, opener, _settings(sb))
    assert run.mode == "incremental" and "OWNER_EVENT" not in run.plan.get("unknown", {})
    fresh = Lake(tmp_path / "fresh")
    apply_changes(fresh, opener, _settings(sb))
    for table in OWNER_TABLES:
        diff = table_differences(_data(lake.current(table)), _data(fresh.current(table)))
        assert diff is None, (table, diff)
    after = {r["owner_id"] for r in lake.current("owners").to_pylist()}
    deleted = {e["entityId"] for e in events if e["entityAction"] == "DELETE"}
    assert (
        deleted
        and not (after & deleted)
        and deleted <= before | {e["entityId"] for e in events if e["entityAction"] == "CREATE"}
    )
    # nothing personal landed: no column for it, nothing of it in `_extra`
    names = set(lake.current("owners").schema.names)
    assert {"owner_id", "country_code", "language"} <= names
    assert not {c.source for c in TABLES["owners"].columns} & set(PII)
    assert not names & {"first_name", "last_name", "email", "phone", "address_city"}
    extras = [x for x in lake.current("owners").column("_extra").to_pylist() if x]
    assert not any(field in x for x in extras for field in PII)

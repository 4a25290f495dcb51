"""Offers, additions and implies against the sandbox over HTTP: the interface's paths serve them
(`/offers` with rates, `/offers/{resourceId}/rates`, the additions of types and offers by holder
and as `resourceId:[ids]` lists, the implies of types, add-ons, offers and units); every SPECIAL
bill line names a served offer; OFFER_EVENT and ADDITION_EVENT within one business day refresh
the lake (a withdrawn offer tombstoned with its rates and additions), equal to a fresh full load,
and so does a month of `advance`."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from assets.modes import apply_changes
from assets.plan import plan_changes
from assets.settings import IngestSettings
from lake.store import Lake
from tests.incremental.helpers import _data, sandbox_opener, table_differences
from tests.sandbox.conftest import signed_in

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

TABLES = ("offers", "offer_rates", "accommodation_type_additions", "offer_additions", "implies")


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    from sandbox.runner import SandboxSettings, run_sandbox

    with run_sandbox(SandboxSettings(seed=13, scale="small")) as handle:
        yield handle


def test_the_interface_paths_serve_offers_additions_and_implies(sb: Any) -> None:
    with sb.world.lock:
        type_id = sb.world.records("accommodationtypes")[0]["resourceId"]
        unit_id = sb.world.records("unitimplies")[0]["unitId"]
        billed = {
            ln["resourceId"]
            for ln in sb.world.records("billlines")
            if ln["resourceType"] == "SPECIAL" and ln["total"] != 0
        }
    with signed_in(sb) as api:
        offers = {o["resourceId"]: o for o in api.get("/offers").json()["content"]}
        one = api.get("/offers/900009").json()
        rates = api.get("/offers/900009/rates").json()["content"]
        picked = api.get("/offers", params={"filter": "resourceId:[900012,900013]"}).json()
        type_adds = api.get(f"/accommodationtypes/{type_id}/additions").json()["content"]
        all_type_adds = api.get("/accommodationtypes/additions", params={"size": 500}).json()
        offer_adds = api.get("/offers/additions", params={"filter": "resourceId:[900009]"}).json()
        implies = {
            path: api.get(path).json()["content"]
            for path in (
                f"/accommodationtypes/{type_id}/implies",
                "/add-ons/900003/implies",
                "/offers/900012/implies",
                f"/units/{unit_id}/implies",
            )
        }
        missing = api.get("/offers/5")
    assert billed and billed <= set(offers)  # every discount line names a served offer
    assert one == offers[900009] and one["code"] == "EARLYBIRD" and one["type"] == "SPECIAL"
    assert rates == one["rates"] and {r["quantifier"] for r in rates} == {"RELATIVE"}
    assert {r["value"] for r in rates} == {-one["discountPercentage"]}
    assert [o["resourceId"] for o in picked["content"]] == [900012, 900013]
    assert type_adds and {a["resourceId"] for a in type_adds} == {type_id}
    assert {a["additionId"] for a in type_adds} <= {
        a["additionId"] for a in all_type_adds["content"]
    }
    assert [a["resourceId"] for a in offer_adds["content"]] == [900009]
    for path, rows in implies.items():
        assert rows and all(r["impliedResourceId"] for r in rows), path
    assert implies[f"/units/{unit_id}/implies"][0]["holderType"] == "UNIT"
    assert missing.status_code == 404


def _settings(sb: Any) -> IngestSettings:
    with sb.world.lock:
        return IngestSettings(today=sb.world.now.date(), horizon_days=3)


def _same_as_fresh(lake: Lake, sb: Any, tmp_path: Path, name: str) -> None:
    fresh = Lake(tmp_path / name)
    apply_changes(fresh, sandbox_opener(sb), _settings(sb))
    for table in TABLES:
        diff = table_differences(_data(lake.current(table)), _data(fresh.current(table)))
        assert diff is None, (table, diff)


def test_offer_and_addition_events_refresh_the_lake_like_a_full_load(
    sb: Any, tmp_path: Path
) -> None:
    opener = sandbox_opener(sb)
    lake = Lake(tmp_path / "incremental")
    apply_changes(lake, opener, _settings(sb))
    world = sb.world
    # within one business day: the events alone must carry the changes (no day roll re-read)
    with world.lock:
        first = world.t["events"].next_id
        t = world.now + timedelta(minutes=5)
        world._change_offer(t)
        world._change_promo(t)  # no promotion yet: one is created, with an addition
        world._change_addition(t)
        promo = world.records("offers")[-1]["resourceId"]
    world.advance(1)
    with world.lock:
        events = [e for e in world.records("events") if e["eventId"] >= first]
    plan = plan_changes(events)
    assert {"offers", "accommodation_type_additions", "offer_additions"} <= set(plan.refresh)
    report = apply_changes(lake, opener, _settings(sb))
    assert report.mode == "incremental" and not report.day_rolled
    assert promo in lake.current_ids("offers", "resource_id")
    _same_as_fresh(lake, sb, tmp_path, "fresh1")

    # a withdrawn promotion: OFFER_EVENT DELETE tombstones it with its rates and additions
    with world.lock:
        first = world.t["events"].next_id
        for _ in range(50):
            world._change_promo(world.now)
            if promo not in {o["resourceId"] for o in world.records("offers")}:
                break
        deleted = [
            e
            for e in world.records("events")
            if e["eventId"] >= first and e["entityAction"] == "DELETE"
        ]
    assert deleted and deleted[0]["eventType"] == "OFFER_EVENT"
    world.advance(1)
    report = apply_changes(lake, opener, _settings(sb))
    assert report.mode == "incremental" and not report.day_rolled
    assert promo not in lake.current_ids("offers", "resource_id")
    assert promo not in set(lake.current("offer_rates").column("resource_id").to_pylist())
    _same_as_fresh(lake, sb, tmp_path, "fresh2")


def test_a_month_of_changes_lands_like_a_full_load(sb: Any, tmp_path: Path) -> None:
    opener = sandbox_opener(sb)
    lake = Lake(tmp_path / "incremental")
    apply_changes(lake, opener, _settings(sb))
    summary = sb.world.advance(24 * 30)
    with sb.world.lock:
        kinds = {
            e["eventType"]
            for e in sb.world.records("events")
            if e["eventId"] >= summary["firstEventId"]
        }
    assert {"OFFER_EVENT", "ADDITION_EVENT", "IMPLY_EVENT"} <= kinds
    assert apply_changes(lake, opener, _settings(sb)).mode == "incremental"
    _same_as_fresh(lake, sb, tmp_path, "fresh")

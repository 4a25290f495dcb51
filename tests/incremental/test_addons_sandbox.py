"""Add-ons against the sandbox over HTTP: `/add-ons` (paged, `resourceId:[ids]`) and
`/add-ons/{resourceId}` name every resource the EXTRA and SPECIAL bill lines charge, with its
category and prices; ADDON_EVENT under `advance` refreshes them, equal to a fresh full load."""

from __future__ import annotations

from collections.abc import Iterator
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


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    from sandbox.runner import SandboxSettings, run_sandbox

    with run_sandbox(SandboxSettings(seed=13, scale="small")) as handle:
        yield handle


def test_every_billed_addon_is_served_with_category_and_price(sb: Any) -> None:
    with signed_in(sb) as api:
        addons = {
            a["resourceId"]: a for a in api.get("/add-ons", params={"size": 50}).json()["content"]
        }
        one = api.get("/add-ons/900001").json()
        picked = api.get("/add-ons", params={"filter": "resourceId:[900002,900003]"}).json()
        missing = api.get("/add-ons/5")
    assert one == addons[900001] and one["categoryCode"] == "LINEN"
    assert [a["resourceId"] for a in picked["content"]] == [900002, 900003]
    assert missing.status_code == 404
    with sb.world.lock:
        billed = {
            (ln["resourceId"], ln["resourceType"], ln["value"])
            for ln in sb.world.records("billlines")
            if ln["resourceType"] in ("EXTRA", "SPECIAL") and ln["billLineType"] == 10
        }
    assert billed
    for resource_id, kind, value in billed:
        addon = addons[resource_id]
        assert addon["type"] == kind and addon["categoryCode"]
        if kind == "EXTRA":  # the unit price billed is the add-on's price, in either currency
            assert {p["price"] for p in addon["prices"]} == {value}


def test_addon_events_refresh_the_lake_like_a_full_load(sb: Any, tmp_path: Path) -> None:
    opener = sandbox_opener(sb)

    def settings() -> IngestSettings:
        with sb.world.lock:
            return IngestSettings(today=sb.world.now.date(), horizon_days=3)

    lake = Lake(tmp_path / "incremental")
    apply_changes(lake, opener, settings())
    summary = sb.world.advance(24 * 30)
    with sb.world.lock:
        events = [
            e
            for e in sb.world.records("events")
            if e["eventType"] == "ADDON_EVENT" and e["eventId"] >= summary["firstEventId"]
        ]
    assert events and plan_changes(events).refresh["addons"]
    assert apply_changes(lake, opener, settings()).mode == "incremental"
    fresh = Lake(tmp_path / "fresh")
    apply_changes(fresh, opener, settings())
    for table in ("addons", "addon_prices"):
        diff = table_differences(_data(lake.current(table)), _data(fresh.current(table)))
        assert diff is None, (table, diff)
    assert lake.current("addon_prices").num_rows == 2 * lake.current("addons").num_rows

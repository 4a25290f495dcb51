"""Operations in the world: out-of-order periods on free nights only, changing under `advance`,
served over HTTP."""

from __future__ import annotations

from datetime import date

import pytest

from sandbox.runner import SandboxSettings, run_sandbox
from sandbox.world import World
from sandbox.world.states import HOLDING, NAMES
from tests.sandbox.conftest import signed_in

pytestmark = pytest.mark.sandbox


def _nights(task: dict) -> set[int]:
    first = date.fromisoformat(task["outOfOrderFrom"]).toordinal()
    return set(range(first, date.fromisoformat(task["outOfOrderTo"]).toordinal()))


def _out_of_order(world: World) -> dict[int, dict]:
    return {t["taskId"]: t for t in world.records("operationtasks") if t["outOfOrder"]}


@pytest.fixture(scope="module")
def worlds() -> tuple[World, dict[int, dict], World]:
    world = World(seed=11)
    before = {k: dict(v) for k, v in _out_of_order(world).items()}
    world.advance(24 * 7)
    return world, before, World(seed=11)


def test_no_stay_holds_an_out_of_order_night(worlds: tuple[World, dict, World]) -> None:
    world = worlds[0]
    busy: dict[int, set[int]] = {}
    for rec in world.records("reservations"):
        if NAMES[rec["status"]] not in HOLDING:
            continue
        for rr in world.children("reservedresources", rec["reservationId"]):
            if rr["type"] == "ACCOMMODATIONTYPE" and rr["unitId"] is not None:
                a = date.fromisoformat(rec["arrivalDate"]).toordinal()
                d = date.fromisoformat(rec["departureDate"]).toordinal()
                busy.setdefault(rr["unitId"], set()).update(range(a, d))
    tasks = _out_of_order(world)
    assert len(tasks) > 20
    for task in tasks.values():
        assert not _nights(task) & busy.get(task["unitId"], set()), task
        unit = world.get("units", task["unitId"])
        assert unit is not None and unit["setupDate"] <= task["outOfOrderFrom"]
        assert unit["archivedFrom"] is None or unit["archivedFrom"] >= task["outOfOrderTo"]
    # routine tasks never take a unit out of order
    routine = [t for t in world.records("operationtasks") if not t["outOfOrder"]]
    assert routine and all(t["outOfOrderFrom"] is None for t in routine)


def test_advance_reports_finishes_and_withdraws_out_of_order_periods(
    worlds: tuple[World, dict, World],
) -> None:
    world, before, fresh = worlds
    after = _out_of_order(world)
    assert set(after) - set(before), "an incident is reported"
    withdrawn = set(before) - set(after)
    assert withdrawn, "planned works are withdrawn (the task leaves the service)"
    assert all(before[k]["outOfOrderFrom"] > "2026-11-01" for k in withdrawn)
    # a repair done early ends the night it finished (status DONE)
    finished = [
        t
        for t in after.values()
        if t["status"] == "DONE"
        and t["modifiedDate"] > "2026-11-01"
        and date.fromisoformat(t["outOfOrderTo"]).toordinal()
        == date.fromisoformat(t["modifiedDate"][:10]).toordinal() + 1
    ]
    assert finished
    # the generation is deterministic for the seed
    assert {k: dict(v) for k, v in _out_of_order(fresh).items()} == before


def test_operations_are_served_over_http() -> None:
    world = World(seed=7)
    settings = SandboxSettings(client_secret="s3cret")
    with (
        run_sandbox(settings, world=world) as handle,
        signed_in(handle) as c,
    ):
        tasks = c.get("/operations/tasks", params={"size": 1000}).json()
        assert tasks["totalElements"] == len(world.records("operationtasks"))
        assert tasks["content"][0] == world.records("operationtasks")[0]
        location = world.records("locations")[0]["locationId"]
        periodical = c.get(
            "/operations/periodicalTasks", params={"locationIds": location, "size": 100}
        ).json()["content"]
        assert periodical and {p["locationId"] for p in periodical} == {location}

"""Rentability and reservability in the world: rules per type and period, the allowed stays
served by `/rentability/stays` (its required parameters), and RENTABILITY_EVENT /
RESERVABILITY_EVENT under `advance`."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import httpx
import pytest

from sandbox.runner import SandboxSettings, run_sandbox
from sandbox.world import World
from tests.sandbox.conftest import signed_in

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[httpx.Client, World]]:
    world = World(seed=7)
    with (
        run_sandbox(SandboxSettings(client_secret="s3cret"), world=world) as handle,
        signed_in(handle) as c,
    ):
        yield c, world


def test_allowed_stays_follow_the_rule_of_each_arrival(
    served: tuple[httpx.Client, World],
) -> None:
    c, world = served
    sets = {s["rentabilitySetId"]: s for s in world.records("rentabilitysets")}
    rid = world.records("accommodationtypes")[0]["resourceId"]
    first = world.now.date()
    stays = c.get(
        "/rentability/stays",
        params={
            "distributionChannelId": 1,
            "resourceId": rid,
            "minArrival": first.isoformat(),
            "maxArrival": (first + timedelta(days=13)).isoformat(),
            "size": 1000,
        },
    ).json()["content"]
    configs = c.get(
        "/rentability/config",
        params={"resourceId": rid, "resourceType": "ACCOMMODATI", "distributionChannelId": 1},
    ).json()["content"]
    assert configs and {x["resourceId"] for x in configs} == {rid}
    expected = set()
    for k in range(14):
        day = first + timedelta(days=k)
        (rule,) = [
            sets[x["rentabilitySetId"]]
            for x in configs
            if x["startDate"] <= day.isoformat() < x["endDate"]
        ]
        if day.strftime("%A").upper() in rule["arrivalDays"]:
            for n in range(rule["minDuration"], rule["maxDuration"] + 1):
                expected.add((day.isoformat(), n))
    assert expected and {(s["arrivalDate"], s["duration"]) for s in stays} == expected
    for s in stays:
        arrival = date.fromisoformat(s["arrivalDate"])
        assert s["departureDate"] == (arrival + timedelta(days=s["duration"])).isoformat()
    # the notes' required parameters
    assert c.get("/rentability/stays", params={"resourceId": rid}).status_code == 400
    assert c.get("/rentability/stays", params={"distributionChannelId": 1}).status_code == 400


def test_rules_and_reservability_change_with_events() -> None:
    world = World(seed=11)
    before = {
        x["rentabilityConfigId"]: x["rentabilitySetId"] for x in world.records("rentabilityconfig")
    }
    online = {x["resourceId"]: x["reservableOnInternet"] for x in world.records("reservability")}
    summary = world.advance(24 * 7)
    events = [e for e in world.records("events") if e["eventId"] >= summary["firstEventId"]]
    after = {x["rentabilityConfigId"]: x for x in world.records("rentabilityconfig")}
    changed = {
        after[k]["resourceId"] for k, v in before.items() if after[k]["rentabilitySetId"] != v
    }
    named = {e["entityId"] for e in events if e["eventType"] == "RENTABILITY_EVENT"}
    assert changed and changed <= named
    flipped = {
        x["resourceId"]
        for x in world.records("reservability")
        if x["reservableOnInternet"] != online[x["resourceId"]]
    }
    reservability = [e for e in events if e["eventType"] == "RESERVABILITY_EVENT"]
    assert reservability and flipped <= {e["entityId"] for e in reservability}
    assert {e["entityType"] for e in reservability} == {"ACCOMMODATIONTYPE"}

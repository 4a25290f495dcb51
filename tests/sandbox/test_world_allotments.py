"""Allotments in the world: per type and channel, changed under `advance` with ALLOTMENT_EVENTs,
served on both of the interface's paths."""

from __future__ import annotations

import pytest

from sandbox.runner import SandboxSettings, run_sandbox
from sandbox.world import World
from tests.sandbox.conftest import signed_in

pytestmark = pytest.mark.sandbox


def test_allotments_change_under_advance_with_events() -> None:
    world = World(seed=11)
    before = {a["allotmentId"]: dict(a) for a in world.records("allotments")}
    assert len(before) > 20
    channels = {
        c["distributionChannelId"]: c["code"] for c in world.records("distributionchannels")
    }
    assert {channels[a["distributionChannelId"]] for a in before.values()} == {"TO-GBP", "OTA-EUR"}
    # one allotment per type, channel and night
    seen: set[tuple[int, int, str]] = set()
    for a in before.values():
        assert a["startDate"] < a["endDate"] and a["quantity"] >= 1 and a["releaseDays"] > 0
        key = (a["resourceId"], a["distributionChannelId"], a["startDate"])
        assert key not in seen
        seen.add(key)
    summary = world.advance(24 * 7)
    after = {a["allotmentId"]: a for a in world.records("allotments")}
    events = [
        e
        for e in world.records("events")
        if e["eventId"] >= summary["firstEventId"] and e["eventType"] == "ALLOTMENT_EVENT"
    ]
    changed = {k for k in before.keys() & after.keys() if before[k] != after[k]}
    assert changed and set(before) - set(after) and set(after) - set(before)
    touched = {before[k]["resourceId"] for k in changed | (set(before) - set(after))}
    touched |= {after[k]["resourceId"] for k in set(after) - set(before)}
    assert {e["entityId"] for e in events} == touched  # every change names its type
    # the generated allotments are deterministic for the seed
    assert {a["allotmentId"]: a for a in World(seed=11).records("allotments")} == before


def test_allotments_are_served_on_both_paths() -> None:
    world = World(seed=7)
    with (
        run_sandbox(SandboxSettings(client_secret="s3cret"), world=world) as handle,
        signed_in(handle) as c,
    ):
        everything = c.get("/allotments", params={"size": 1000}).json()["content"]
        assert everything == list(world.records("allotments"))
        rid = everything[0]["resourceId"]
        mine = [a for a in everything if a["resourceId"] == rid]
        by_type = c.get(f"/accommodationtypes/{rid}/allotments", params={"size": 1000}).json()
        assert by_type["content"] == mine
        filtered = c.get(
            "/allotments", params={"filter": f"resourceId:[{rid}]", "size": 1000}
        ).json()
        assert filtered["content"] == mine

"""Late-visible events: an event gets its id when the change happens but joins the feed only once
the world's clock has moved the lag past its eventDate (off by default)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from sandbox.world import World
from sandbox.world.store import Table
from tests.sandbox.conftest import authenticate

LAG = timedelta(minutes=10)


def _event_ids(world: World) -> list[int]:
    return [e["eventId"] for e in world.records("events")]


def _a_reservation(world: World) -> int:
    return next(
        r["reservationId"] for r in world.records("reservations") if r["status"] in (12, 21)
    )


def _touch(world: World, rid: int, hour: int) -> None:
    """One RESERVATION_EVENT UPDATE (new expected arrival time)."""
    world.update_reservation(rid, {"expectedArrivalDateTime": f"2026-12-01T{hour:02d}:00:00"})


# -- the store ---------------------------------------------------------------------------------


def test_table_insert_puts_an_issued_key_in_its_place() -> None:
    tbl = Table("events")
    late = tbl.new_id()
    for _ in range(3):
        tbl.add({"eventId": tbl.new_id()})
    assert list(tbl.key_list()) == [2, 3, 4]
    tbl.insert({"eventId": late})
    assert list(tbl.key_list()) == [1, 2, 3, 4]
    assert [r["eventId"] for r in tbl.records()] == [1, 2, 3, 4]
    assert tbl.get(1) == {"eventId": 1}
    with pytest.raises(ValueError, match="already present"):
        tbl.insert({"eventId": 3})
    with pytest.raises(ValueError, match="not issued"):
        tbl.insert({"eventId": 99})
    tbl.add({"eventId": tbl.new_id()})  # appending goes on as before
    assert list(tbl.key_list()) == [1, 2, 3, 4, 5]


# -- the world ---------------------------------------------------------------------------------


def test_off_by_default_every_event_is_visible_at_once() -> None:
    world = World(seed=11)
    summary = world.advance(24)
    assert world.late_events() == {"share": 0.0, "lagSeconds": 300.0, "pending": 0}
    assert world.pending_events() == []
    assert world.event_high_water() == summary["lastEventId"]
    assert _event_ids(world)[-1] == summary["lastEventId"]


def test_a_late_event_has_its_id_at_change_time_and_shows_after_the_lag() -> None:
    world = World(seed=11)
    rid = _a_reservation(world)
    mark = world.event_high_water()
    world.configure_late_events(1.0, LAG)
    _touch(world, rid, 15)
    world.configure_late_events(0.0)
    _touch(world, rid, 16)  # a later change, visible at once
    (late,) = world.pending_events()
    assert late["eventId"] == mark + 1 and late["entityId"] == rid
    assert late["eventDate"] == world.now.isoformat(timespec="milliseconds")
    # The change itself is visible; only its event is not.
    assert world.get("reservations", rid)["expectedArrivalDateTime"] == "2026-12-01T16:00:00"
    assert world.event_high_water() == mark + 2
    assert mark + 1 not in _event_ids(world)
    world.advance(LAG.total_seconds() / 3600 / 2)  # half the lag: still pending
    assert world.late_events()["pending"] == 1
    world.advance(LAG.total_seconds() / 3600)
    assert world.pending_events() == []
    ids = _event_ids(world)
    assert mark + 1 in ids and ids == sorted(set(ids))
    assert world.get("events", mark + 1) == late


def test_late_events_change_only_when_events_are_visible() -> None:
    """Same seed, same calls: the business is identical, and every event is the same once it
    is visible; an event is visible exactly when the clock is the lag past its eventDate."""
    from assets.plan import event_time

    lag = timedelta(hours=3)
    plain = World(seed=11)
    late = World(seed=11, late_event_share=0.5, late_event_lag=lag)
    for hours in (48, 3, 0.5):
        plain.advance(hours)
        late.advance(hours)
        assert late.records("reservations") == plain.records("reservations")
        assert late.records("customers") == plain.records("customers")
        every = {e["eventId"]: e for e in plain.records("events")}
        visible = {e["eventId"]: e for e in late.records("events")}
        pending = {e["eventId"]: e for e in late.pending_events()}
        assert visible.keys() | pending.keys() == every.keys()
        assert not visible.keys() & pending.keys()
        assert all(every[i] == e for i, e in (visible | pending).items())
        for e in pending.values():
            moment = event_time(e["eventDate"])
            assert moment is not None and moment + lag > late.now
    assert 0 < len(pending) < len(every)
    assert list(late.keys("events")) == sorted(visible)


@pytest.mark.sandbox
def test_a_released_event_is_not_hidden_by_the_encode_cache() -> None:
    """A page of /events served (and cached) before the late event joined shows it after."""
    world = World(seed=11)
    with (
        run_sandbox(SandboxSettings(seed=11), world=world) as sb,
        httpx.Client(base_url=sb.base_url, timeout=30) as http,
    ):
        http.headers["Authorization"] = authenticate(sb, http)
        rid = _a_reservation(world)
        mark = world.event_high_water()
        sb.configure_late_events(1.0, LAG.total_seconds())
        _touch(world, rid, 15)
        sb.configure_late_events(0.0)
        _touch(world, rid, 16)
        params = {"filter": f"eventId>{mark - 5}", "sort": "eventId,asc", "size": 50}
        before = [e["eventId"] for e in http.get("/events", params=params).json()["content"]]
        assert mark + 1 not in before and mark + 2 in before
        top = http.get("/events", params={"sort": "eventId,desc", "size": 1}).json()
        assert top["content"][0]["eventId"] == mark + 2  # the mark: newest visible
        assert http.post(sb.admin_url + "/advance", params={"hours": 1}).status_code == 200
        after = [e["eventId"] for e in http.get("/events", params=params).json()["content"]]
        assert after[: len(before) + 1] == sorted([*before, mark + 1])


@pytest.mark.sandbox
def test_settings_reach_the_world() -> None:
    with run_sandbox(
        SandboxSettings(seed=11, late_event_share=0.25, late_event_lag_seconds=90)
    ) as sb:
        assert sb.world.late_events() == {"share": 0.25, "lagSeconds": 90.0, "pending": 0}
        assert sb.configure_late_events(0.0)["share"] == 0.0
    world = World(seed=11)  # a caller's world gets the setting too, when one is asked for
    with run_sandbox(SandboxSettings(late_event_share=0.5, late_event_lag_seconds=60), world=world):
        assert world.late_events()["share"] == 0.5
    with pytest.raises(ValueError):
        World(seed=11, late_event_share=1.5)


# -- the client's window filters against the sandbox's query engine ----------------------------


@pytest.fixture(scope="module")
def late_sandbox() -> Iterator[SandboxHandle]:
    with run_sandbox(
        SandboxSettings(seed=11, late_event_share=0.5, late_event_lag_seconds=3 * 3600)
    ) as sb:
        sb.world.advance(30)
        yield sb


def _service(sb: SandboxHandle) -> Any:
    from service.api import ReservationService
    from service.config import ServiceConfig

    config = ServiceConfig(
        base_url=sb.base_url,
        client_id=sb.client_id,
        client_secret=sb.client_secret,
        scope=sb.scope,
        page_size=5,
    )
    return ReservationService.connect(config)


@pytest.mark.sandbox
def test_event_window_filters_by_date_and_id(late_sandbox: SandboxHandle) -> None:
    from assets.plan import event_time

    world = late_sandbox.world
    visible = world.records("events")
    up_to = visible[-3]["eventId"]
    since = event_time(visible[-12]["eventDate"])
    assert since is not None
    since += timedelta(milliseconds=1)  # ms precision: the bound is exact

    async def read() -> tuple[list[dict[str, Any]], Any]:
        async with _service(late_sandbox) as service:
            got = [
                e async for page in service.events(since=since, up_to_event_id=up_to) for e in page
            ]
            return got, await service.latest_event(up_to_event_id=up_to)

    got, newest = asyncio.run(read())
    text = since.isoformat(timespec="milliseconds")
    expected = [e for e in visible if e["eventId"] <= up_to and e["eventDate"] >= text]
    assert got == expected and 5 < len(got) < 12  # several pages of 5, in id order
    assert newest == visible[-3]

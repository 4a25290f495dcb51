"""Availability agrees with units, reservations and rates, recomputed from the records."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta

import pytest

from sandbox.world import World, WorldError
from sandbox.world.clock import WEEKDAYS, cents
from sandbox.world.states import HOLDING, NAMES


@pytest.fixture(scope="module")
def world() -> World:
    w = World(seed=21)
    w.advance(48)
    return w


def _list_price(rates: list[dict], day: date) -> int | None:
    best = None
    iso = day.isoformat()
    for r in rates:
        if r["validFrom"] <= iso <= r["validTo"] and (
            not r["applicableDays"] or WEEKDAYS[day.weekday()] in r["applicableDays"]
        ):
            key = (r["priority"], r["rateId"])
            if best is None or key > best[0]:
                best = (key, cents(r["value"]))
    return None if best is None else best[1]


@pytest.mark.parametrize("start", [date(2026, 10, 28), date(2026, 12, 18), date(2027, 7, 1)])
def test_availability_matches_the_records(world: World, start: date) -> None:
    units_by_type = defaultdict(list)
    for u in world.records("units"):
        units_by_type[u["resourceId"]].append(u)
    busy: dict[int, set[int]] = defaultdict(set)
    for rec in world.records("reservations"):
        if NAMES[rec["status"]] not in HOLDING:
            continue
        unit = next(
            rr["unitId"]
            for rr in world.children("reservedresources", rec["reservationId"])
            if rr["type"] == "ACCOMMODATIONTYPE"
        )
        a = date.fromisoformat(rec["arrivalDate"]).toordinal()
        busy[unit].update(range(a, date.fromisoformat(rec["departureDate"]).toordinal()))
    rates = defaultdict(list)
    for r in world.records("rates"):
        rates[(r["resourceId"], r["rateTypeId"])].append(r)
    out = world.availability(arrival_from=start, arrival_to=start + timedelta(days=9))
    types = world.keys("accommodationtypes")
    assert len(out) == len(types) * 10 * 4
    some_free = some_full = 0
    for rec in out:
        arr = date.fromisoformat(rec["arrivalDate"])
        dep = date.fromisoformat(rec["departureDate"])
        assert (dep - arr).days == rec["duration"]
        expect = []
        for u in units_by_type[rec["resourceId"]]:
            if u["setupDate"] > rec["arrivalDate"]:
                continue
            if u["archivedFrom"] is not None and u["archivedFrom"] < rec["departureDate"]:
                continue
            if busy[u["unitId"]] & set(range(arr.toordinal(), dep.toordinal())):
                continue
            expect.append(u["unitId"])
        assert sorted(rec["units"]) == sorted(expect), rec
        assert rec["availableUnits"] == len(expect)
        some_free += bool(expect)
        some_full += not expect
        assert {p["rateTypeId"] for p in rec["prices"]} == {1, 2, 3, 4}
        for p in rec["prices"]:
            nights = [
                _list_price(rates[(rec["resourceId"], p["rateTypeId"])], arr + timedelta(days=k))
                for k in range(rec["duration"])
            ]
            assert cents(p["price"]) == sum(nights)
    assert some_free and (some_full or start.month == 7)


def test_filters_and_limits(world: World) -> None:
    d = date(2027, 1, 10)
    rt = world.keys("accommodationtypes")[0]
    out = world.availability(
        arrival_from=d,
        arrival_to=d,
        resource_ids=[rt],
        durations=[3],
        distribution_channel_code="TO-GBP",
    )
    assert len(out) == 1 and out[0]["resourceId"] == rt
    assert [(p["rateTypeId"], p["currencyCode"]) for p in out[0]["prices"]] == [(4, "GBP")]
    loc = world.get("accommodationtypes", rt)["locationId"]
    out = world.availability(arrival_from=d, arrival_to=d, location_id=loc, rate_type_id=2)
    assert {r["locationId"] for r in out} == {loc}
    assert all([p["rateTypeId"] for p in r["prices"]] == [2] for r in out)
    with pytest.raises(WorldError):
        world.availability(arrival_from=d, arrival_to=d + timedelta(days=31))
    with pytest.raises(WorldError):
        world.availability(arrival_from=d, arrival_to=d, distribution_channel_code="NOPE")

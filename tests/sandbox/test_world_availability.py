"""Availability agrees with units, reservations, out-of-order periods and rates, recomputed
from the records."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta

import numpy as np
import pandas as pd
import pytest

from sandbox.world import World, WorldError, pricing, truth_rates
from sandbox.world.clock import cents
from sandbox.world.states import HOLDING, NAMES


@pytest.fixture(scope="module")
def world() -> World:
    w = World(seed=21)
    w.advance(48)
    return w


def _stay_prices(world: World, stays: list[tuple[int, int, date, int]]) -> list[int]:
    """Price of each stay (type, rate type, arrival, nights) booked today, by the rate rule
    written from the records (sandbox.world.truth_rates): the sum of its nights' prices."""
    rows = [
        (i, type_id, rt, arr.toordinal(), n, arr.toordinal() + k)
        for i, (type_id, rt, arr, n) in enumerate(stays)
        for k in range(n)
    ]
    frame = pd.DataFrame(
        rows, columns=["stay", "type_id", "rate_type_id", "arrival", "stay_nights", "ord"]
    )
    frame["booked"] = world.now.date().toordinal()
    priced = truth_rates.price(truth_rates.active_rates(world), frame)
    assert priced["list_cents"].notna().all()
    totals = priced.groupby("stay")["list_cents"].sum()
    return [int(totals[i]) for i in range(len(stays))]


@pytest.mark.parametrize(
    "start", [date(2026, 10, 28), date(2026, 12, 18), date(2027, 4, 20), date(2027, 7, 1)]
)
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
    for task in world.records("operationtasks"):  # an out-of-order unit is not available
        if task["outOfOrder"]:
            first = date.fromisoformat(task["outOfOrderFrom"]).toordinal()
            busy[task["unitId"]].update(
                range(first, date.fromisoformat(task["outOfOrderTo"]).toordinal())
            )
    out = world.availability(arrival_from=start, arrival_to=start + timedelta(days=9))
    types = world.keys("accommodationtypes")
    assert len(out) == len(types) * 10 * 4
    some_free = some_full = 0
    stays: list[tuple[int, int, date, int]] = []
    served: list[int] = []
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
            stays.append((rec["resourceId"], p["rateTypeId"], arr, rec["duration"]))
            served.append(cents(p["price"]))
    assert some_free and (some_full or start.month in (4, 7))  # far ahead: free
    assert served == _stay_prices(world, stays)


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


@pytest.mark.parametrize("chunk", [None, 2_000])
def test_pairs_priced_together_as_alone(
    world: World, chunk: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The availability prices every (type, rate type) of a window in one pass (or a few, to
    bound memory: `chunk`): each pair's stays cost what they cost priced alone, whatever else
    is in the batch, at the horizon's edges too (-1: a night outside it or unpriced)."""
    if chunk is not None:
        monkeypatch.setattr(pricing, "SPECIAL_CHUNK", chunk)
    pairs = [(ti.idx, rt) for ti in world.types for rt in world.rate_types]
    booked = world.now.date().toordinal()
    durs = [1, 3, 7, 20]
    seen = set()
    for a0 in (booked - 5, booked + 60, world.ord_end - 10):
        together = world.stay_totals_of(pairs, a0, 31, durs, booked)
        assert together.shape == (len(pairs), 31, len(durs))
        for p, pair in enumerate(pairs):
            alone = world.stay_totals_of([pair], a0, 31, durs, booked)[0]
            assert (together[p] == alone).all(), (a0, pair)
        seen.update(np.unique(together >= 0).tolist())
    assert seen == {True, False}  # priced stays and unpriced ones were compared

"""A warehouse refreshed in place, by key, equals a whole rebuild of the same lake on a churned
world: every table of every model schema, row for row, after each of several runs.

One small sandbox world moves between runs (`advance`, plus new and deleted carts and a
customer merge); data dir A is loaded once and then follows it with incremental runs, each
followed by `refresh_warehouse` (in place, `warehouse.inplace`). After each run a new build of
A's lake in another dir is the reference. The same world then changes the supply lists
(allotments, operations tasks) and dimensions (a type, a location), and their readers must be
maintained by key, not rebuilt whole (one world and one load for both: the load and each
whole build are most of the time).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assets.modes import apply_changes
from assets.settings import IngestSettings
from lake.state import pending_tables
from lake.store import Lake
from tests.incremental.helpers import reference_build, sandbox_opener, warehouse_differences
from warehouse.refresh import refresh_warehouse

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

SCHEMAS = ("staging", "core", "marts")
KEYED = (
    "staging.stg_reservations",
    "core.fct_reservations",
    "core.fct_bill_lines",  # from the lake by key; staging.stg_bill_lines is its view
    "core.fct_stay_nights",
)
# by key at least within a day (rates that change rebuild fct_stay_rate_nights whole)
DATED = (
    "core.fct_stay_rate_nights",
    "core.fct_unit_nights",
    "core.fct_journal_entries",
    "marts.occupancy_daily",
    "marts.revenue_daily",
    # a run lands only the availability records that differ (assets/availability.py)
    "staging.stg_availability",
    "staging.stg_availability_prices",
    "core.fct_availability",
    "marts.rate_availability_daily",
    # by customer: the customers a run lands (a merge, a new guest)
    "staging.stg_customers",
)
# by key in every run within a day: booking pace's nights by reservation, by the types of the
# unit nights that changed, by month; orphan_nights reads the as-of date, so a run across
# midnight rebuilds it whole
SAME_DAY_KEYED = (
    "core.fct_pace_night_spans",
    "marts.orphan_nights",
    # what each stay adds to ancillary revenue and each reservation to the cancellations, by
    # reservation (their cells add what changed, and the marts follow the cells that moved)
    "core.fct_ancillary_stay_months",
    "core.fct_cancellation_reservations",
    # what each stay that took an offer adds to offer_discount_monthly, by reservation (the
    # mart sums it, rebuilt whole)
    "core.fct_offer_stay_months",
    # the guest stays by customer (whether a stay repeats depends on the customer's others)
    "core.fct_guest_stays",
    # the bill side of revenue_reconciliation, by reservation
    "core.fct_reconciliation_bills",
    # the reporting currencies by currency (none affected while the stays keep theirs), the
    # owner statements by unit x month
    "core.dim_reporting_currencies",
    "marts.owner_statement_monthly",
)
# maintained by adding what changed in every run within a day (`warehouse.additive`): booking
# pace's nights grouped and its on-the-books cells (their snapshots move across midnight: then
# shifted, plus what the move changes), guest
# mix's cells, revenue reconciliation's two sides
SAME_DAY_SUMMED = (
    "core.fct_pace_span_groups",
    "core.fct_pace_on_the_books",
    "core.fct_guest_mix_cells",
    "core.fct_reconciliation_bill_cells",
    "core.fct_reconciliation_journal_cells",
    "core.fct_ancillary_cells",
    "core.fct_cancellation_cells",
    "core.fct_channel_months",
    "core.fct_night_sales",
)


def _differences(a: Path, b: Path) -> dict[str, object]:
    return warehouse_differences(a, b, SCHEMAS)


# what a change of each kind must leave maintained by key (not rebuilt whole), per step below
SUPPLY_KEYED = {
    # an allotment, an accommodation type (its priority) and a location (its minimum booking
    # age) changed within the day, with a cart created and one deleted
    "same day": (
        "core.fct_reservations",
        "core.fct_bill_lines",
        "core.fct_stay_nights",
        "core.fct_stay_rate_nights",
        "core.fct_rate_nights",
        "core.fct_unit_nights",
        "core.fct_allotment_stay_nights",
        "core.fct_allotment_pickup_weeks",
        "marts.occupancy_daily",
        "marts.revenue_daily",
        "marts.sales_daily",
        "marts.rate_availability_daily",
        "core.fct_pace_night_spans",
        "marts.orphan_nights",
        "core.fct_ancillary_stay_months",
        # the bookings' AVAILABILITY_EVENTs: the records of their types that differ
        "staging.stg_availability",
        "staging.stg_availability_prices",
        "core.fct_availability",
    ),
    # the business date moved, and with it the operations tasks (a new repair taking a unit out
    # of order) and every reference list were re-read whole: allotment pickup (stored by weeks
    # back, no date) recomputes the nights the day between reached (a release date, a
    # booking); occupancy, which reads the as-of date only through its allotment-held nights,
    # keys the nights whose held nights moved; the rest follows the rows that differ
    "new day": (
        # the stay nights an allotment covers read no date: by reservation
        "core.fct_allotment_stay_nights",
        "core.fct_allotment_pickup_weeks",
        "marts.occupancy_daily",
        "core.fct_reservations",
        "core.fct_stay_nights",
        "core.fct_unit_nights",
        "marts.revenue_daily",
        "core.fct_ancillary_stay_months",  # by the stays on the dates that changed
        # the whole horizon re-read: the new arrival date, the passed one, what changed
        "staging.stg_availability",
        "staging.stg_availability_prices",
        "core.fct_availability",
    ),
}


# the lake tables each step must have landed (else the step would test nothing)
LANDED = {
    "same day": {"allotments", "accommodation_types", "locations", "reservations", "availability"},
    "new day": {"operation_tasks", "reservations", "availability"},
}


def _change_supply_and_dimensions(world: Any) -> None:
    """An allotment's quantity, a type's priority and a location's minimum booking age, each with
    its event (the sandbox's own kinds of change, `sandbox/world/allotments.py` and
    `reference_changes.py`)."""
    with world.lock:
        world._allot_adjust(world.now)
        kind = world.t["accommodationtypes"].records()[0]
        kind["priority"] = int(kind.get("priority") or 0) % 99 + 1
        world._event("ACCOMMODATION_TYPE_EVENT", kind["resourceId"], "UPDATE", world.now)
        park = world.t["locations"].records()[0]
        park["minAgeForBooking"] = 25 if park.get("minAgeForBooking") != 25 else 21
        world._event("RESORT_EVENT", park["locationId"], "UPDATE", world.now)


def _take_a_unit_out_of_order(world: Any) -> None:
    """A repair in two weeks' time on the first unit free then (operations have no events:
    the next business date's re-read lands it)."""
    with world.lock:
        first = world.now.toordinal() + 14
        assert any(world._out_of_order(u, first, 3, world.now) for u in range(len(world.unit_ids)))


# The default suite's depth: after the bootstrap, 30 hours (across midnight, a customer merge),
# the supply lists and dimensions within the day (itself a churn within a day: a new cart and a
# deleted one, so the by-reservation models of SAME_DAY_KEYED are asserted there too), then a new
# day with a unit out of order. Every assertion kind runs: equal to a whole rebuild after each
# run, by key within a day and across midnight, by sums within a day and the pace's shift across
# it, the supply and dimension changes by key. `make chaos` adds the first step of the full
# story, 5 hours of churn within the bootstrap's day (a fourth whole rebuild, ~20 % of the
# test): the same assertions from a state with no run across midnight yet. The second number is
# the hours the supply step advances within the day: the fewest after which the churned carts have
# changed an availability record to land in that story (LANDED fails when none did).
STORIES = [
    pytest.param(("30 hours", *SUPPLY_KEYED), 2.0, id="default"),
    pytest.param(("5 hours", "30 hours", *SUPPLY_KEYED), 1.0, id="full", marks=pytest.mark.chaos),
]


@pytest.mark.parametrize(("steps", "same_day_hours"), STORIES)
def test_in_place_refresh_equals_a_whole_rebuild_on_a_churned_world(
    tmp_path: Path, steps: tuple[str, ...], same_day_hours: float
) -> None:
    """Churn (5 hours under chaos, then 30 with a customer merge), then the supply lists and
    dimensions within the day, then a new day with a unit out of order: after each run the
    in-place warehouse equals a whole rebuild. Changes to the supply lists and dimensions reach
    the marts by key: a whole rebuild of a list or dimension compares its rows with the old
    ones, and only the rows that differ count as changed for its readers."""
    from sandbox.runner import SandboxSettings, run_sandbox

    dir_a = tmp_path / "a"
    with run_sandbox(SandboxSettings(seed=23, scale="small")) as sb:
        opener = sandbox_opener(sb, max_retries=12)

        def run() -> IngestSettings:
            with sb.world.lock:
                today = sb.world.now.date()
            settings = IngestSettings(today=today, horizon_days=60)
            apply_changes(Lake(dir_a / "lake"), opener, settings)
            return settings

        def equals_a_whole_rebuild(settings: IngestSettings, step: str) -> None:
            reference = tmp_path / f"whole-{step.replace(' ', '-')}"
            reference.mkdir()
            (reference / "lake").symlink_to(dir_a / "lake")
            whole = reference_build(reference, as_of=settings.today)
            assert _differences(dir_a / "warehouse.duckdb", whole.path) == {}, step

        settings = run()
        refresh_warehouse(dir_a, as_of=settings.today)
        keyed: dict[str, int] = {}
        for step in steps:
            sb.world.churn("reservations")  # a new cart and a deleted one
            if step == "5 hours":
                hours = 5.0
            elif step == "30 hours":
                with sb.world.lock:
                    with_res = sorted(k for k, v in sb.world.cust_res.items() if v)
                sb.world.merge_customers(with_res[0], with_res[1])
                hours = 30.0
            elif step == "same day":
                _change_supply_and_dimensions(sb.world)
                hours = same_day_hours
            else:
                _take_a_unit_out_of_order(sb.world)
                with sb.world.lock:
                    hours = 25 - sb.world.now.hour  # one hour into the next day
            with sb.world.lock:
                day = sb.world.now.date()
            sb.world.advance(hours=hours)
            settings = run()
            if step in SUPPLY_KEYED:
                assert (settings.today == day) == (step == "same day"), step
                landed = pending_tables(Lake(dir_a / "lake"))
                assert LANDED[step] <= landed, (step, sorted(landed))
            result = refresh_warehouse(dir_a, as_of=settings.today)
            assert result is not None and result.refreshed, "the run changed nothing"
            if step in SUPPLY_KEYED:
                how = {m: result.refreshed.get(m) for m in SUPPLY_KEYED[step]}
                assert {m: h for m, h in how.items() if h != "keys"} == {}, step
            if settings.today == day:  # churn within a day (the supply step churns too)
                how = {m: result.refreshed.get(m) for m in SAME_DAY_KEYED}
                assert {m: h for m, h in how.items() if h != "keys"} == {}, step
                how = {m: result.refreshed.get(m) for m in SAME_DAY_SUMMED}
                assert {m: h for m, h in how.items() if h != "sums"} == {}, step
            else:  # booking pace's cells move their snapshots with the date, by sums
                assert result.refreshed.get("core.fct_pace_on_the_books") == "sums", step
            if step != "new day":
                for model in (*KEYED, *DATED):
                    keyed[model] = keyed.get(model, 0) + (result.refreshed.get(model) == "keys")
            equals_a_whole_rebuild(settings, step)
    # the reservation chain by key in each run but the new day's: the sandbox changes
    # accommodation types and locations too (with their events), and those reach the chain by
    # the reservations of the type or location that changed (the supply steps)
    runs = len(steps) - 1
    assert all(keyed[m] == runs for m in KEYED), {m: keyed[m] for m in KEYED}
    # the calendar moves in the 30 hours: the models that read the as-of date are then rebuilt
    # whole, the others by the dates whose calendar rows changed
    assert all(keyed[m] >= 1 for m in DATED), {m: keyed[m] for m in DATED}

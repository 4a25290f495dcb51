"""The planner: events -> ids to refetch, tombstones, merges; pure, no HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from assets.plan import ChangePlan, plan_changes

_next_id = iter(range(1, 10_000))


def ev(event_type: str, entity_id: int | None, action: str = "UPDATE", **kw: Any) -> dict:
    entity_types = {
        "RESERVATION_EVENT": "RESERVATION",
        "CUSTOMER_EVENT": "CUSTOMER",
        "UNIT_EVENT": "UNIT",
        "RATE_EVENT": "ACCOMMODATIONTYPE",
        "AVAILABILITY_EVENT": "ACCOMMODATIONTYPE",
    }
    record = {
        "eventId": kw.pop("event_id", next(_next_id)),
        "eventType": event_type,
        "entityId": entity_id,
        "entityType": entity_types.get(event_type, "OTHER"),
        "entityAction": action,
        "oldEntityId": None,
        "eventDate": "2026-11-01T10:00:00.000",
    }
    record.update(kw)
    return record


def _shape(plan: ChangePlan) -> tuple[dict, dict, list]:
    refresh = {k: sorted(v) for k, v in plan.refresh.items() if v}
    delete = {k: sorted(v) for k, v in plan.delete.items() if v}
    merges = [(m["oldEntityId"], m["entityId"]) for m in plan.merges]
    return refresh, delete, merges


CASES = [
    pytest.param(
        [ev("RESERVATION_EVENT", 1), ev("RESERVATION_EVENT", 2, "CREATE")],
        ({"reservations": [1, 2]}, {}, []),
        id="reservation-updates-refetch",
    ),
    pytest.param(
        [ev("RESERVATION_EVENT", 1), ev("RESERVATION_EVENT", 1), ev("RESERVATION_EVENT", 1)],
        ({"reservations": [1]}, {}, []),
        id="duplicates-collapse",
    ),
    pytest.param(
        [ev("RESERVATION_EVENT", 1), ev("RESERVATION_EVENT", 1, "DELETE")],
        ({}, {"reservations": [1]}, []),
        id="delete-after-update-tombstones",
    ),
    pytest.param(
        [ev("RESERVATION_EVENT", 1, "DELETE"), ev("RESERVATION_EVENT", 1, "CREATE")],
        ({"reservations": [1]}, {}, []),
        id="create-after-delete-refetches",
    ),
    pytest.param(
        [ev("CUSTOMER_EVENT", 10, "MERGE", oldEntityId=11)],
        ({"customers": [10]}, {"customers": [11]}, [(11, 10)]),
        id="merge-row-tombstone-and-survivor-refresh",
    ),
    pytest.param(
        [ev("CUSTOMER_EVENT", 11), ev("CUSTOMER_EVENT", 10, "MERGE", oldEntityId=11)],
        ({"customers": [10]}, {"customers": [11]}, [(11, 10)]),
        id="merge-after-update-of-removed-customer",
    ),
    pytest.param(
        [ev("CUSTOMER_EVENT", 7, "DELETE")],
        ({}, {"customers": [7]}, []),
        id="customer-delete",
    ),
    pytest.param(
        [
            ev("UNIT_EVENT", 5),
            ev("RESORT_EVENT", 2),
            ev("DISTRIBUTIONCHANNEL_EVENT", 3),
            ev("ACCOMMODATION_TYPE_EVENT", 1001),
        ],
        (
            {
                "units": [5],
                "locations": [2],
                "distribution_channels": [3],
                "accommodation_types": [1001],
            },
            {},
            [],
        ),
        id="reference-events",
    ),
    pytest.param(
        [ev("UNIT_EVENT", 5, "DELETE"), ev("ACCOMMODATION_TYPE_EVENT", 1001, "DELETE")],
        ({}, {"units": [5], "accommodation_types": [1001]}, []),
        id="reference-deletes",
    ),
    pytest.param(
        [
            ev("RATE_EVENT", 1001),
            ev("RATE_EVENT", 1001, "DELETE"),
            ev("AVAILABILITY_EVENT", 1001),
            ev("AVAILABILITY_EVENT", 1002),
        ],
        ({"rates": [1001], "availability": [1001, 1002]}, {}, []),
        id="rates-and-availability-refresh-their-type-scope-even-on-delete",
    ),
    pytest.param(
        [
            ev("RATE_EVENT", 77, entityType="OFFER"),
            ev("AVAILABILITY_EVENT", 78, entityType="OFFER"),
        ],
        ({"offers": [77]}, {}, []),
        id="offer-rate-refetches-the-offer-offer-availability-not-modelled",
    ),
    pytest.param(
        [
            ev("OFFER_EVENT", 900101),
            ev("OFFER_EVENT", 900102, "DELETE"),
            ev("ADDITION_EVENT", 11, entityType="ACCOMMODATIONTYPE"),
            ev("ADDITION_EVENT", 900101, "DELETE", entityType="OFFER"),
        ],
        (
            {
                "offers": [900101],
                "accommodation_type_additions": [11, 900101],
                "offer_additions": [11, 900101],
            },
            {"offers": [900102]},
            [],
        ),
        id="offer-refetched-or-tombstoned-addition-re-reads-both-lists",
    ),
    pytest.param(
        [ev("IMPLY_EVENT", 1001), ev("RESERVATION_EVENT", 9)],
        ({"reservations": [9]}, {}, []),
        id="imply-counted-not-modelled",
    ),
    pytest.param(
        [ev("ALLOTMENT_EVENT", 1001), ev("ALLOTMENT_EVENT", 1001, "DELETE")],
        ({"allotments": [1001]}, {}, []),
        id="allotment-names-a-type-whose-list-is-re-read",
    ),
    pytest.param(
        [ev("OWNER_EVENT", 7001), ev("OWNER_EVENT", 7002, "DELETE")],
        ({"owners": [7001]}, {"owners": [7002]}, []),
        id="owner-refetched-or-tombstoned",
    ),
    pytest.param(
        [ev("SPACESHIP_EVENT", 1), ev("RESERVATION_EVENT", 2)],
        ({"reservations": [2]}, {}, []),
        id="unknown-type-skipped",
    ),
]


@pytest.mark.parametrize(("events", "expected"), CASES)
def test_events_to_plan(events: list[dict], expected: tuple) -> None:
    assert _shape(plan_changes(events)) == expected


def test_unknown_and_not_modelled_are_counted_not_fatal() -> None:
    plan = plan_changes(
        [
            ev("SPACESHIP_EVENT", 1),
            ev("SPACESHIP_EVENT", 2),
            ev("IMPLY_EVENT", 3),
            ev("RATE_EVENT", 4, entityType="OFFER"),
            ev("RESERVATION_EVENT", None),
            ev("CUSTOMER_EVENT", 5, "MERGE"),  # no oldEntityId
            {"eventId": 999},
        ]
    )
    assert plan.unknown == {
        "SPACESHIP_EVENT": 2,
        "RESERVATION_EVENT without entityId": 1,
        "CUSTOMER_EVENT MERGE without oldEntityId": 1,
        "<missing eventType>": 1,
    }
    assert plan.not_modelled == {"IMPLY_EVENT": 1}
    assert plan.refresh == {"customers": {5}, "offers": {4}}
    assert plan.merges == []
    assert plan.events == 7


def test_events_are_ordered_by_id_and_the_last_action_wins() -> None:
    # Delivered out of order: the DELETE (id 2) comes after the UPDATE (id 1) by eventId.
    events = [
        ev("RESERVATION_EVENT", 1, "DELETE", event_id=2),
        ev("RESERVATION_EVENT", 1, event_id=1),
    ]
    plan = plan_changes(events)
    assert plan.delete == {"reservations": {1}}
    assert (plan.first_event_id, plan.last_event_id) == (1, 2)


def test_plan_tracks_the_cursor_and_tables() -> None:
    plan = plan_changes(
        [
            ev("RESERVATION_EVENT", 1, event_id=41, eventDate="2026-11-01T10:00:00.000"),
            ev(
                "CUSTOMER_EVENT",
                10,
                "MERGE",
                oldEntityId=11,
                event_id=42,
                eventDate="2026-11-01T10:00:01.500",
            ),
            ev("AVAILABILITY_EVENT", 1001, event_id=43, eventDate="2026-11-01T10:00:02.000"),
        ]
    )
    assert plan.last_event_id == 43
    assert plan.last_event_date == "2026-11-01T10:00:02.000"
    assert plan.tables() == {
        "reservations",
        "reserved_resources",
        "bill_lines",
        "reservation_subjects",
        "customers",
        "customer_merges",
        "availability",
        "availability_prices",
    }
    assert plan.summary()["merges"] == 1


def test_empty_feed_is_an_empty_plan() -> None:
    plan = plan_changes([])
    assert plan.empty and plan.events == 0 and plan.last_event_id is None

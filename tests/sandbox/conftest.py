"""Fixtures for the sandbox's HTTP layer: a tiny hand-made world and running servers.

`TinyWorld` implements the `World` protocol with a few records per collection whose values are
known, so tests can assert exact results. The generated world (`sandbox.world.World`) is used
where it exists, for conformance checks that hold for any world.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta
from typing import Any

import httpx
import pytest

from sandbox.protocol import CHILDREN, COLLECTIONS, Record, WorldError
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox

TODAY = datetime(2026, 3, 1, 12, 0, 0)
STATUSES = (12, 21, 31, 41, -12, 10, 11, -5)
ACTIONS = {
    (12, "CONFIRM"): 21,
    (21, "CANCEL"): -12,
    (21, "CHECKED_IN"): 31,
    (31, "CHECKED_OUT"): 41,
}


def _ts(day: date | datetime, minute: int = 0) -> str:
    moment = datetime(day.year, day.month, day.day) + timedelta(minutes=minute)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000")


class TinyWorld:
    """A deterministic in-memory world: a few records per collection, values known to tests."""

    def __init__(self, *, empty: Sequence[str] = ()) -> None:
        self.lock = threading.RLock()
        self.now = TODAY
        self.churned: list[str] = []
        self.data: dict[str, list[Record]] = {name: [] for name in COLLECTIONS}
        self._build()
        for name in empty:
            self.data[name] = []

    def _build(self) -> None:
        d = self.data
        d["distributionchannels"] = [
            {
                "distributionChannelId": 1,
                "code": "WEB",
                "name": "Website",
                "type": "DIRECT",
                "parentId": None,
                "currencyId": 1,
                "currencyCode": "EUR",
                "commissionPercentage": 0.0,
                "activeStartDate": "2020-01-01",
                "activeEndDate": None,
                "archivedFrom": None,
                "allotmentOnly": False,
            },
            {
                "distributionChannelId": 2,
                "code": "OTA",
                "name": "Booking Partner",
                "type": "RESELLER",
                "parentId": None,
                "currencyId": 1,
                "currencyCode": "EUR",
                "commissionPercentage": 15.0,
                "activeStartDate": "2021-05-01",
                "activeEndDate": None,
                "archivedFrom": "2026-12-31",
                "allotmentOnly": False,
            },
            {
                "distributionChannelId": 3,
                "code": "OLD",
                "name": "Old tour operator",
                "type": "TOUROPERATOR",
                "parentId": 2,
                "currencyId": 2,
                "currencyCode": "GBP",
                "commissionPercentage": 20.0,
                "activeStartDate": "2019-01-01",
                "activeEndDate": "2025-12-31",
                "archivedFrom": "2026-01-01",
                "allotmentOnly": True,
            },
        ]
        d["locations"] = [
            {
                "locationId": i,
                "code": f"L{i}",
                "locationNumber": 100 + i,
                "parentId": None,
                "adminOrganisationId": 1,
                "companyId": 1,
                "bookableLocation": True,
                "archivedFrom": None,
                "minAgeForBooking": 18,
                "translations": [{"language": "en", "name": f"Park {i}", "description": ""}],
                "visitAddress": {
                    "address1": "Lane 1",
                    "zipCode": "1000",
                    "city": "Dune",
                    "countryCode": "NL",
                },
            }
            for i in (1, 2)
        ]
        d["accommodationtypes"] = [
            {
                "resourceId": 10 + i,
                "code": f"T{i}",
                "locationId": 1 + i % 2,
                "accotypeKindId": 1,
                "kindCode": "BUNGALOW",
                "type": "ACCOMMODATIONTYPE",
                "nrOfBedrooms": 1 + i,
                "nrOfBathrooms": 1.0,
                "numberOfPersons": 2 + 2 * i,
                "hasObjects": True,
                "priority": i,
                "checkinTime": "15:00:00",
                "checkoutTime": "10:00:00",
                "archivedFrom": None,
                "translations": [],
                "capacities": [
                    {
                        "capacityId": 100 + i,
                        "capacity": 2 + 2 * i,
                        "subjectId": 1,
                        "startDate": "2020-01-01",
                        "endDate": None,
                        "name": "Persons",
                    }
                ],
            }
            for i in range(3)
        ]
        d["units"] = [
            {
                "unitId": 100 + i,
                "resourceId": 10 + i % 3,
                "code": f"U{i}",
                "roomCode": f"R{i}",
                "nrOfBedrooms": 2,
                "nrOfBathrooms": 1.0,
                "choosableOnInternet": i % 2 == 0,
                "cleaningStatus": "CLEAN",
                "setupDate": "2020-01-01",
                "archivedFrom": "2026-02-01" if i == 4 else None,
                "translations": [],
            }
            for i in range(5)
        ]
        d["ratetypes"] = [
            {
                "rateTypeId": 1,
                "code": "BAR",
                "name": "Best available",
                "currencyCode": "EUR",
                "distributionChannelIds": [1, 2],
                "priority": 1,
            },
            {
                "rateTypeId": 2,
                "code": "TO",
                "name": "Tour operator",
                "currencyCode": "GBP",
                "distributionChannelIds": [3],
                "priority": 2,
            },
        ]
        d["rateoptions"] = [
            {
                "rateOptionId": i,
                "rateTypeId": 1 + i % 2,
                "code": f"O{i}",
                "name": f"Option {i}",
                "optionType": "PER_NIGHT" if i % 2 else "LENGTH_OF_STAY",
            }
            for i in (1, 2, 3)
        ]
        d["rates"] = [
            {
                "rateId": i,
                "resourceId": 10 + i % 3,
                "rateTypeId": 1,
                "rateTypeIds": [1],
                "rateOptionId": 1,
                "value": 80.0 + i,
                "quantifier": "OVERRIDE",
                "valueType": "single",
                "priority": 1,
                "validFrom": "2026-01-01",
                "validTo": "2026-12-31",
                "bookdateFrom": None,
                "bookdateTo": None,
                "minDuration": None,
                "maxDuration": None,
                "applicableDays": None,
                "status": 1,
            }
            for i in (1, 2, 3, 4)
        ]
        d["companies"] = [
            {
                "companyId": i,
                "code": f"C{i}",
                "name": f"Company {i}",
                "adminOrganisationId": 1,
                "currencyCode": "EUR",
                "countryCode": "NL",
            }
            for i in (1, 2)
        ]
        d["journalreports"] = [
            {
                "journalReportId": i,
                "companyId": 1,
                "reportNumber": i,
                "type": "MUTATION_REPORT",
                "periodFrom": f"2026-02-0{i}",
                "periodTo": f"2026-02-0{i}",
                "createdDate": _ts(date(2026, 2, i + 1)),
                "currencyCode": "EUR",
            }
            for i in (1, 2)
        ]
        d["journalentries"] = [
            {
                "journalEntryId": i,
                "reportId": 1 + i % 2,
                "type": "REVENUE",
                "reportNumber": 1,
                "mutationDate": "2026-02-01",
                "reservationId": 1000 + i,
                "reservationNumber": f"R{1000 + i}",
                "locationId": 1,
                "resourceCode": "T1",
                "ledgerNumber": "8000",
                "secondLedgerNumber": None,
                "costCenter": None,
                "debitVatIncluded": 0.0,
                "creditVatIncluded": 100.0,
                "debitVatExcluded": 0.0,
                "creditVatExcluded": 90.0,
                "customerId": 1,
                "distributionChannelId": 1,
                "reservedResourceId": None,
                "comments": None,
            }
            for i in (1, 2, 3, 4)
        ]
        d["cashaccounts"] = [
            {
                "cashAccountId": i,
                "companyId": 1,
                "locationId": i,
                "code": f"K{i}",
                "name": f"Till {i}",
                "currencyCode": "EUR",
            }
            for i in (1, 2)
        ]
        d["cashclearances"] = [
            {
                "cashClearanceId": i,
                "cashAccountId": 1 + i % 2,
                "clearanceNumber": i,
                "clearanceDate": f"2026-02-0{i}",
                "clearedAt": _ts(date(2026, 2, i), 1200),
                "startBalance": 100.0,
                "expectedAmount": 250.0,
                "countedCash": 150.0,
                "countedCard": 100.0,
                "countedCheque": 0.0,
                "countedAncv": 0.0,
                "difference": 0.0,
                "differenceReason": None,
                "startBalanceNextDay": 100.0,
                "employeeId": 7,
            }
            for i in (1, 2, 3)
        ]
        d["customers"] = [
            {
                "customerId": i,
                "countryCode": ("NL", "DE", "BE")[i % 3],
                "language": ("nl", "de", "fr")[i % 3],
                "birthYear": None if i % 5 == 0 else 1960 + i,
                "loyaltyLevel": None,
                "createdDate": _ts(date(2025, 1, 1), i),
                "modifiedDate": _ts(date(2025, 6, 1), i),
                "firstName": f"Guest{i}",
                "lastName": "Doe",
                "email": f"g{i}@example.test",
            }
            for i in range(1, 26)
        ]
        reservations, resources, lines, subjects = [], [], [], []
        for n in range(30):
            rid = 1000 + n
            arrival = date(2026, 3, 1) + timedelta(days=n)
            departure = arrival + timedelta(days=3 + n % 4)
            reservations.append(
                {
                    "reservationId": rid,
                    "reservationNumber": f"R{rid}",
                    "reservationCategoryId": 1,
                    "categoryCode": "GUEST",
                    "categoryName": "Guest",
                    "type": "RESERVATION",
                    "status": STATUSES[n % len(STATUSES)],
                    "arrivalDate": arrival.isoformat(),
                    "departureDate": departure.isoformat(),
                    "expectedArrivalDateTime": None,
                    "expectedDepartureDateTime": None,
                    "customerId": 1 + n % 25,
                    "distributionChannelId": 1 + n % 2,
                    "distributionChannelCode": ("WEB", "OTA")[n % 2],
                    "locationId": 1 + n % 2,
                    "reservationDate": _ts(date(2026, 1, 1) + timedelta(days=n), 600),
                    "modifiedDate": _ts(date(2026, 2, 1) + timedelta(days=n % 20), 600),
                    "cancelDate": None,
                    "voucher": None if n % 3 else f"V{n}",
                    "validationStatus": 21,
                }
            )
            resources.append(
                {
                    "reservedResourceId": 5000 + n,
                    "reservationId": rid,
                    "resourceId": 10 + n % 3,
                    "unitId": 100 + n % 5,
                    "rateTypeId": 1,
                    "type": "ACCOMMODATIONTYPE",
                    "code": f"T{n % 3}",
                    "name": "Bungalow",
                    "quantity": 1,
                    "startDate": arrival.isoformat(),
                    "endDate": departure.isoformat(),
                    "statusName": "BOOKED",
                    "overrideValue": None,
                }
            )
            for k, payer in enumerate(("CUSTOMER", "AGENT") if n % 2 else ("CUSTOMER",)):
                for j, (kind, total) in enumerate(((10, 300.0), (70, 300.0))):
                    lines.append(
                        {
                            "reservationBillLineId": 9000 + 10 * n + 4 * k + j,
                            "reservationBillId": 7000 + 2 * n + k,
                            "reservationId": rid,
                            "payerType": payer,
                            "billLineType": kind,
                            "resourceId": 10 + n % 3 if kind == 10 else None,
                            "resourceType": "ACCOMMODATIONTYPE" if kind == 10 else None,
                            "reservedResourceId": 5000 + n if kind == 10 else None,
                            "rateId": 1,
                            "rateTypeId": 1,
                            "description": "Rent",
                            "quantity": 1,
                            "multiplier": 1,
                            "value": total,
                            "total": total,
                            "vatRate": 9.0,
                            "startDate": None,
                            "endDate": None,
                        }
                    )
            subjects.append(
                {
                    "reservationSubjectId": 8000 + n,
                    "reservationId": rid,
                    "subjectId": 1,
                    "type": "PERSON",
                    "ageFrom": 18,
                    "ageTo": None,
                    "quantity": 2,
                }
            )
        d["reservations"] = reservations
        d["reservedresources"] = resources
        d["billlines"] = lines
        d["subjects"] = subjects
        d["events"] = [
            {
                "eventId": 1 + i,
                "eventType": "RESERVATION_EVENT",
                "entityId": 1000 + i % 30,
                "entityType": "RESERVATION",
                "entityAction": "UPDATE" if i % 4 else "CREATE",
                "oldEntityId": None,
                "eventDate": _ts(date(2026, 2, 1), 7 * i),
            }
            for i in range(50)
        ]

    # -- the World protocol -------------------------------------------------------------------

    def keys(self, collection: str) -> list[int]:
        pk = COLLECTIONS[collection]
        return [r[pk] for r in self.data[collection]]

    def records(self, collection: str) -> list[Record]:
        return self.data[collection]

    def get(self, collection: str, key: int) -> Record | None:
        pk = COLLECTIONS[collection]
        return next((r for r in self.data[collection] if r[pk] == key), None)

    def children(self, collection: str, parent_key: int) -> list[Record]:
        link = CHILDREN[collection][1]
        return [r for r in self.data[collection] if r[link] == parent_key]

    def availability(
        self,
        *,
        arrival_from: date,
        arrival_to: date,
        resource_ids: Any = None,
        location_id: int | None = None,
        durations: Any = None,
        rate_type_id: int | None = None,
        distribution_channel_code: str | None = None,
    ) -> list[Record]:
        out = []
        day = arrival_from
        while day <= arrival_to:
            for acc in self.data["accommodationtypes"]:
                if resource_ids and acc["resourceId"] not in resource_ids:
                    continue
                if location_id is not None and acc["locationId"] != location_id:
                    continue
                for duration in durations or (2, 3, 4, 7):
                    out.append(
                        {
                            "resourceId": acc["resourceId"],
                            "accommodationKindId": 1,
                            "locationId": acc["locationId"],
                            "locationCode": f"L{acc['locationId']}",
                            "arrivalDate": day.isoformat(),
                            "departureDate": (day + timedelta(days=duration)).isoformat(),
                            "duration": duration,
                            "availableUnits": 1,
                            "units": [100],
                            "maxCapacity": 4,
                            "petCapacity": 0,
                            "prices": [
                                {"rateTypeId": 1, "currencyCode": "EUR", "price": 80.0 * duration}
                            ],
                        }
                    )
            day += timedelta(days=1)
        return out

    def create_reservation(self, body: Record) -> Record:
        if not body.get("accommodationTypes"):
            raise WorldError("accommodationTypes is required")
        rid = (
            self.data["reservations"][-1]["reservationId"] + 1
            if self.data["reservations"]
            else 1000
        )
        record = dict(self.data["reservations"][0]) if self.data["reservations"] else {}
        record.update({"reservationId": rid, "reservationNumber": f"R{rid}", "status": 12})
        self.data["reservations"].append(record)
        return {"reservationId": rid, "reservationNumber": f"R{rid}", "status": 12}

    def update_reservation(self, reservation_id: int, body: Record) -> Record:
        record = self.get("reservations", reservation_id)
        if record is None:
            raise WorldError(f"reservation {reservation_id} not found")
        target = ACTIONS.get((record["status"], body.get("action")))
        if target is None:
            raise WorldError(f"action {body.get('action')!r} not allowed from {record['status']}")
        record["status"] = target
        return {"reservationId": reservation_id, "status": target}

    def advance(self, hours: float) -> Record:
        self.now += timedelta(hours=hours)
        return {"hours": hours}

    def churn(self, collection: str) -> None:
        """Insert a record at the end and delete the first (offset paging then skips one)."""
        rows = self.data[collection]
        if not rows:
            return
        pk = COLLECTIONS[collection]
        new = dict(rows[-1])
        new[pk] = rows[-1][pk] + 1
        rows.append(new)
        del rows[0]
        self.churned.append(collection)


def authenticate(handle: SandboxHandle, client: httpx.Client | None = None) -> str:
    http = client or httpx.Client()
    response = http.post(
        handle.base_url + "/authenticate",
        data={
            "grantType": "client_credentials",
            "clientId": handle.client_id,
            "clientSecret": handle.client_secret,
            "scope": handle.scope,
        },
    )
    response.raise_for_status()
    body = response.json()
    return f"{body['token_type']} {body['access_token']}"


@contextlib.contextmanager
def signed_in(handle: SandboxHandle, timeout: float = 30) -> Iterator[httpx.Client]:
    """An httpx client on the sandbox, with the bearer token of the client-credentials grant."""
    with httpx.Client(base_url=handle.base_url, timeout=timeout) as client:
        client.headers["Authorization"] = authenticate(handle, client)
        yield client


@pytest.fixture(scope="module")
def tiny_sandbox() -> Iterator[SandboxHandle]:
    with run_sandbox(SandboxSettings(max_page_size=50), world=TinyWorld()) as handle:
        yield handle


@pytest.fixture(scope="module")
def api(tiny_sandbox: SandboxHandle) -> Iterator[httpx.Client]:
    """An authenticated client on the tiny sandbox."""
    with httpx.Client(base_url=tiny_sandbox.base_url, timeout=10) as client:
        client.headers["Authorization"] = authenticate(tiny_sandbox, client)
        yield client


def generated_world_class() -> Any:
    try:
        from sandbox.world import World
    except ImportError:
        return None
    return World


@pytest.fixture(scope="session")
def world_sandbox() -> Iterator[SandboxHandle]:
    """The sandbox over the generated world (skipped until sandbox.world exposes World)."""
    world_class = generated_world_class()
    if world_class is None:
        pytest.skip("sandbox.world.World is not available yet")
    with run_sandbox(SandboxSettings()) as handle:
        yield handle


@pytest.fixture(scope="session")
def world_api(world_sandbox: SandboxHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=world_sandbox.base_url, timeout=30) as client:
        client.headers["Authorization"] = authenticate(world_sandbox, client)
        yield client

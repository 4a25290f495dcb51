"""A fake reservation service for tests: the client's facade method names, fixture pages.

Pages are wire-format records (camelCase, ISO strings, JSON numbers), split into small pages so
the assets see several pages per stream.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import AsyncIterator
from datetime import date, timedelta
from types import SimpleNamespace
from typing import Any, ClassVar

from pipelines.resources import ReservationServiceResource

PAGE_SIZE = 2
Record = dict[str, Any]
FIXTURES: dict[str, dict[str, Any]] = {}
# catalogue entries read by the generic keyset list (no facade method): path -> fixture name
KEYSET_PATHS = {
    "/operations/tasks": "operation_tasks",
    "/operations/periodicalTasks": "periodical_tasks",
    "/allotments": "allotments",
    "/rentability/sets": "rentability_sets",
    "/rentability/config": "rentability_config",
    "/resourcereservability": "resource_reservability",
    "/offers": "offers",
    "/accommodationtypes/additions": "accommodation_type_additions",
    "/offers/additions": "offer_additions",
}


def _tr(en: str) -> list[Record]:
    return [{"language": "nl", "name": en + " (nl)"}, {"language": "en", "name": en}]


def _bill(line_id: int, rid: int, line_type: int, total: float, **kw: Any) -> Record:
    return {
        "reservationBillLineId": line_id,
        "reservationBillId": rid * 10,
        "reservationId": rid,
        "billLineType": line_type,
        "resourceType": "ACCOMMODATIONTYPE",
        "description": "x",
        "quantity": 1,
        "multiplier": 1,
        "value": total,
        "total": total,
        "vatRate": 9.0,
        **kw,
    }


def reservation(rid: int, **header: Any) -> Record:
    """One /reservations/details record with every section."""
    return {
        "reservationId": rid,
        "reservationNumber": f"R{rid:05d}",
        "reservationCategoryId": 1,
        "categoryCode": "GUEST",
        "categoryName": "Guest",
        "type": "RESERVATION",
        "status": 21,
        "arrivalDate": "2026-07-01",
        "departureDate": "2026-07-05",
        "expectedArrivalDateTime": None,
        "expectedDepartureDateTime": None,
        "customerId": 500 + rid,
        "distributionChannelId": 1,
        "distributionChannelCode": "WEB",
        "locationId": 1,
        "reservationDate": "2026-01-02T10:11:12.345",
        "modifiedDate": "2026-01-03T00:00:00.000",
        "cancelDate": None,
        "voucher": None,
        "validationStatus": 21,
        "reservedResources": [
            {
                "reservedResourceId": rid * 10,
                "reservationId": rid,
                "resourceId": 11,
                "unitId": 101,
                "rateTypeId": 1,
                "type": "ACCOMMODATIONTYPE",
                "code": "B4",
                "name": "Bungalow",
                "quantity": 1,
                "startDate": "2026-07-01",
                "endDate": "2026-07-05",
                "statusName": "ok",
                "overrideValue": None,
            },
        ],
        "customerBill": [
            _bill(rid * 100 + 1, rid, 10, 400.10, startDate="2026-07-01", endDate="2026-07-05"),
            _bill(rid * 100 + 2, rid, 70, 400.10),
        ],
        "payingCustomerBill": [_bill(rid * 100 + 3, rid, 70, 0)],
        "agentBill": [_bill(rid * 100 + 4, rid, 100, 19.99), _bill(rid * 100 + 5, rid, 70, 0.1)],
        "subjects": [
            {
                "reservationSubjectId": rid * 10,
                "reservationId": rid,
                "subjectId": 1,
                "type": "PERSON",
                "ageFrom": 18,
                "ageTo": 99,
                "quantity": 2,
            }
        ],
        **header,
    }


def default_fixture() -> dict[str, Any]:
    return {
        "distribution_channels": [
            {
                "distributionChannelId": 1,
                "code": "WEB",
                "name": "Web",
                "type": "DIRECT",
                "parentId": None,
                "currencyId": 1,
                "currencyCode": "EUR",
                "commissionPercentage": 0,
                "activeStartDate": "2020-01-01",
                "activeEndDate": None,
                "archivedFrom": None,
                "allotmentOnly": False,
            },
            {
                "distributionChannelId": 2,
                "code": "TO-UK",
                "name": "Tour operator",
                "type": "TOUROPERATOR",
                "parentId": None,
                "currencyId": 2,
                "currencyCode": "GBP",
                "commissionPercentage": 12.5,
                "activeStartDate": "2020-01-01",
                "activeEndDate": None,
                "archivedFrom": None,
                "allotmentOnly": False,
                "commissionAddons": [
                    {
                        "commissionAddonId": 2,
                        "distributionChannelId": 2,
                        "name": "Commission TO-UK",
                        "percentage": 12.5,
                        "calculationBase": "BILL_TOTAL",
                        "vatRate": 21.0,
                        "validFrom": "2020-01-01",
                        "validTo": None,
                    }
                ],
                "cancellationAddons": [
                    {
                        "cancellationAddonId": 2,
                        "distributionChannelId": 2,
                        "resourceId": 900010,
                        "name": "Cancellation insurance",
                        "percentage": 4.5,
                        "validFrom": "2020-01-01",
                        "validTo": None,
                    }
                ],
            },
        ],
        "locations": [
            {
                "locationId": 1,
                "code": "P1",
                "locationNumber": 1,
                "parentId": None,
                "adminOrganisationId": 1,
                "companyId": 1,
                "bookableLocation": True,
                "archivedFrom": None,
                "minAgeForBooking": 18,
                "translations": _tr("Dune Park"),
                "visitAddress": {
                    "address1": "Strand 1",
                    "zipCode": "1234",
                    "city": "Zee",
                    "countryCode": "NL",
                },
            },
        ],
        "accommodation_types": [
            {
                "resourceId": 11 + i,
                "code": f"B{i}",
                "locationId": 1,
                "accotypeKindId": 1,
                "kindCode": "BUNGALOW",
                "type": "ACCOMMODATIONTYPE",
                "nrOfBedrooms": 2,
                "nrOfBathrooms": 1.5,
                "numberOfPersons": 4,
                "hasObjects": True,
                "priority": i,
                "checkinTime": "15:00:00",
                "checkoutTime": "10:00:00",
                "archivedFrom": None,
                "translations": _tr(f"Bungalow {i}"),
                "capacities": [
                    {
                        "capacityId": 1,
                        "capacity": 4,
                        "subjectId": 1,
                        "startDate": "2020-01-01",
                        "endDate": "2030-12-31",
                        "name": "p",
                    },
                    {
                        "capacityId": 2,
                        "capacity": 1,
                        "subjectId": 2,
                        "startDate": "2020-01-01",
                        "endDate": "2030-12-31",
                        "name": "d",
                    },
                ],
            }
            for i in range(3)
        ],
        "units": [
            {
                "unitId": 101 + i,
                "resourceId": 11,
                "code": f"U{i}",
                "roomCode": f"{i}",
                "nrOfBedrooms": 2,
                "nrOfBathrooms": 1,
                "choosableOnInternet": True,
                "cleaningStatus": "CLEAN",
                "setupDate": "2020-01-01",
                "archivedFrom": None,
                "translations": _tr(f"Unit {i}"),
            }
            for i in range(3)
        ],
        "rate_types": [
            {
                "rateTypeId": 1,
                "code": "BAR",
                "name": "Best",
                "currencyCode": "EUR",
                "distributionChannelIds": [1, 2],
                "priority": 1,
            }
        ],
        "rate_options": [
            {
                "rateOptionId": 1,
                "rateTypeId": 1,
                "code": "N",
                "name": "Night",
                "optionType": "PER_NIGHT",
            }
        ],
        "rates": lambda resource_id: [
            {
                "rateId": resource_id * 10 + k,
                "resourceId": resource_id,
                "rateTypeId": 1,
                "rateTypeIds": [1],
                "rateOptionId": 1,
                "value": 89.95 + k,
                "quantifier": "OVERRIDE",
                "valueType": "single",
                "priority": 1,
                "validFrom": "2026-01-01",
                "validTo": "2026-12-31",
                "bookdateFrom": None,
                "bookdateTo": None,
                "minDuration": None,
                "maxDuration": None,
                "applicableDays": ["SAT", "SUN"] if k else None,
                "status": 1,
            }
            for k in range(2)
        ],
        "companies": [
            {
                "companyId": 1,
                "code": "C1",
                "name": "Parks BV",
                "adminOrganisationId": 1,
                "currencyCode": "EUR",
                "countryCode": "NL",
            }
        ],
        "journal_reports": [
            {
                "journalReportId": 7 + i,
                "companyId": 1,
                "reportNumber": i,
                "type": "REVENUE_DISTRIBUTION",
                "periodFrom": "2026-01-01",
                "periodTo": "2026-01-31",
                "createdDate": "2026-02-01T03:00:00.000",
                "currencyCode": "EUR",
            }
            for i in range(2)
        ],
        "journal_entries": lambda report_id: [
            {
                "journalEntryId": report_id * 100 + k,
                "reportId": report_id,
                "type": "REVENUE",
                "reportNumber": 1,
                "mutationDate": "2026-01-15",
                "reservationId": 1,
                "reservationNumber": "R00001",
                "locationId": 1,
                "resourceCode": "B0",
                "ledgerNumber": "8000",
                "secondLedgerNumber": None,
                "costCenter": None,
                "debitVatIncluded": 0,
                "creditVatIncluded": 109.0,
                "debitVatExcluded": 0,
                "creditVatExcluded": 100.0,
                "customerId": 501,
                "distributionChannelId": 1,
                "reservedResourceId": 10,
                "comments": None,
            }
            for k in range(3)
        ],
        "cash_accounts": [
            {
                "cashAccountId": 1,
                "companyId": 1,
                "locationId": 1,
                "code": "K1",
                "name": "Reception",
                "currencyCode": "EUR",
            }
        ],
        "cash_clearances": [
            {
                "cashClearanceId": 1,
                "cashAccountId": 1,
                "clearanceNumber": 1,
                "clearanceDate": "2026-01-05",
                "clearedAt": "2026-01-05T18:00:00.000",
                "startBalance": 100.0,
                "expectedAmount": 250.55,
                "countedCash": 150.55,
                "countedCard": 100.0,
                "countedCheque": 0,
                "countedAncv": 0,
                "difference": 0,
                "differenceReason": None,
                "startBalanceNextDay": 100.0,
                "employeeId": 3,
            }
        ],
        "operation_tasks": [
            {
                "taskId": 1,
                "issueIncidentId": 7,
                "locationId": 1,
                "resourceId": 11,
                "unitId": 101,
                "taskType": "REPAIR",
                "description": "Broken heating",
                "status": "DONE",
                "outOfOrder": True,
                "outOfOrderFrom": "2026-01-02",
                "outOfOrderTo": "2026-01-04",
                "createdDate": "2026-01-01T09:00:00.000",
                "modifiedDate": "2026-01-01T09:00:00.000",
            },
            {
                "taskId": 2,
                "issueIncidentId": None,
                "locationId": 1,
                "resourceId": 11,
                "unitId": 101,
                "taskType": "CLEANING",
                "description": "Deep clean",
                "status": "DONE",
                "outOfOrder": False,
                "outOfOrderFrom": None,
                "outOfOrderTo": None,
                "createdDate": "2026-01-01T08:00:00.000",
                "modifiedDate": "2026-01-01T08:00:00.000",
            },
        ],
        "allotments": [
            {
                "allotmentId": 1,
                "resourceId": 11,
                "distributionChannelId": 2,
                "startDate": "2026-01-01",
                "endDate": "2026-01-29",
                "quantity": 1,
                "releaseDays": 14,
                "createdDate": "2025-09-01T10:00:00.000",
                "modifiedDate": "2025-09-01T10:00:00.000",
            }
        ],
        "rentability_sets": [
            {
                "rentabilitySetId": 1,
                "name": "Saturday, a week",
                "arrivalDays": ["SATURDAY"],
                "minDuration": 7,
                "maxDuration": 21,
            }
        ],
        "rentability_config": [
            {
                "rentabilityConfigId": 1,
                "resourceId": 11,
                "resourceType": "ACCOMMODATIONTYPE",
                "distributionChannelId": None,
                "rentabilitySetId": 1,
                "startDate": "2026-01-01",
                "endDate": "2026-04-01",
                "modifiedDate": "2025-09-01T10:00:00.000",
            }
        ],
        "resource_reservability": [
            {
                "reservabilityId": 1,
                "resourceId": 11,
                "resourceType": "ACCOMMODATIONTYPE",
                "reservable": True,
                "reservableOnInternet": True,
                "modifiedDate": "2025-09-01T10:00:00.000",
            }
        ],
        "periodical_tasks": [
            {
                "periodicalTaskId": 1,
                "locationId": 1,
                "taskType": "INSPECTION",
                "description": "Yearly safety inspection",
                "intervalDays": 365,
                "startDate": "2025-01-10",
                "endDate": None,
            }
        ],
        "customers": [
            {
                "customerId": 500 + i,
                "countryCode": "NL",
                "language": "nl",
                "birthYear": 1980,
                "loyaltyLevel": None,
                "createdDate": "2025-01-01T00:00:00.000",
                "modifiedDate": "2025-01-01T00:00:00.000",
                "firstName": "Anna",
                "lastName": "Jansen",
                "email": "anna@example.org",
                "phone": "+31 6 1234",
                "address": {"city": "Zee"},
            }
            for i in range(1, 6)
        ],
        "addons": [
            {
                "resourceId": 900001,
                "code": "LINEN",
                "name": "Bed linen package",
                "type": "EXTRA",
                "addonCategoryId": 1,
                "categoryCode": "LINEN",
                "categoryName": "Linen and towels",
                "priceType": "PERSON",
                "vatRate": 21.0,
                "choosableOnInternet": True,
                "description": "Bed linen package",
                "archivedFrom": None,
                "prices": [
                    {
                        "addonPriceId": 1,
                        "resourceId": 900001,
                        "currencyCode": "EUR",
                        "price": 12.5,
                        "validFrom": "2020-01-01",
                        "validTo": None,
                    }
                ],
            }
        ],
        "offers": [
            {
                "resourceId": 900009,
                "code": "EARLYBIRD",
                "name": "Early booking discount",
                "type": "SPECIAL",
                "description": "Early booking discount",
                "discountPercentage": 10.0,
                "minDaysBeforeArrival": 120,
                "maxDaysBeforeArrival": None,
                "rateTypeIds": [1],
                "choosableOnInternet": True,
                "validFrom": "2020-01-01",
                "validTo": None,
                "archivedFrom": None,
                "rates": [
                    {
                        "rateId": 1,
                        "resourceId": 900009,
                        "rateTypeId": 1,
                        "rateTypeIds": [1],
                        "value": -10.0,
                        "quantifier": "RELATIVE",
                        "valueType": "single",
                        "priority": 10,
                        "validFrom": "2020-01-01",
                        "validTo": None,
                        "minDeviation": 120,
                        "status": 1,
                    }
                ],
            }
        ],
        # implies per holder (kind, resourceId); the facade stamps holderKind and holderId
        "implies": [
            {
                "implyId": 1,
                "resourceId": 11,
                "holderType": "ACCOMMODATIONTYPE",
                "impliedResourceId": 900002,
                "impliedCode": "CLEANING",
                "quantity": 1,
                "validFrom": "2020-01-01",
                "validTo": None,
            },
            {
                "implyId": 2,
                "resourceId": 900009,
                "holderType": "OFFER",
                "impliedResourceId": 900002,
                "impliedCode": "CLEANING",
                "quantity": 1,
                "validFrom": "2020-01-01",
                "validTo": None,
            },
        ],
        "accommodation_type_additions": [
            {
                "additionId": 1,
                "resourceId": 11,
                "addonResourceId": 900001,
                "addonCode": "LINEN",
                "mandatory": False,
                "maxQuantity": 4,
                "validFrom": "2020-01-01",
                "validTo": None,
            }
        ],
        "offer_additions": [
            {
                "additionId": 1,
                "resourceId": 900009,
                "addonResourceId": 900001,
                "addonCode": "LINEN",
                "mandatory": False,
                "maxQuantity": 2,
                "validFrom": "2020-01-01",
                "validTo": None,
            }
        ],
        "owners": [
            {
                "ownerId": 7000 + i,
                "code": f"OWN{7000 + i}",
                "firstName": "Bram",
                "lastName": "Visser",
                "email": "bram@example.org",
                "phone": "+31 6 5678",
                "address": {"city": "Ede"},
                "countryCode": "NL",
                "language": "nl",
                "createdDate": "2025-01-01T00:00:00.000",
                "modifiedDate": "2025-01-01T00:00:00.000",
                "contracts": [
                    {
                        "contractId": i,
                        "ownerId": 7000 + i,
                        "unitId": i,
                        "resourceId": 11,
                        "contractType": "RENTAL_POOL",
                        "shareBasis": "ROOM_REVENUE_EXCL_VAT",
                        "revenueSharePercentage": 65.0,
                        "startDate": "2025-01-01",
                        "endDate": None,
                    }
                ],
            }
            for i in range(1, 3)
        ],
        "reservation_details": [reservation(i) for i in range(1, 6)],
        "events": [
            {
                "eventId": 1,
                "eventType": "RESERVATION_EVENT",
                "entityId": 1,
                "entityType": "RESERVATION",
                "entityAction": "UPDATE",
                "oldEntityId": None,
                "eventDate": "2026-01-03T00:00:00.000",
            },
            {
                "eventId": 2,
                "eventType": "CUSTOMER_EVENT",
                "entityId": 501,
                "entityType": "CUSTOMER",
                "entityAction": "MERGE",
                "oldEntityId": 599,
                "eventDate": "2026-01-04T00:00:00.000",
            },
        ],
    }


def register(name: str, data: dict[str, Any]) -> str:
    FIXTURES[name] = data
    return name


class FakeService:
    """Same method names as `service.api.ReservationService`; pages from a fixture."""

    # the catalogue's keyset streams (no facade method): path -> fixture list
    KEYSET: ClassVar[dict[str, str]] = {
        "/owners": "owners",
        "/add-ons": "addons",
        **KEYSET_PATHS,
    }

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.stats: Counter[str] = Counter()
        self.client = SimpleNamespace(iter_keyset=self._keyset)

    def _keyset(
        self, path: str, key: str, *, params: dict[str, Any] | None = None
    ) -> AsyncIterator[list[Record]]:
        name = self.KEYSET[path]
        return self._pages(name, self.data.get(name, []))

    async def __aenter__(self) -> FakeService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def _pages(self, endpoint: str, records: list[Record]) -> AsyncIterator[list[Record]]:
        records = copy.deepcopy(records)
        for start in range(0, max(len(records), 1), PAGE_SIZE):
            self.stats[endpoint] += 1
            page = records[start : start + PAGE_SIZE]
            if page:
                yield page

    def _list(self, name: str) -> AsyncIterator[list[Record]]:
        return self._pages(name, self.data[name])

    def distribution_channels(self) -> AsyncIterator[list[Record]]:
        return self._list("distribution_channels")

    def locations(self) -> AsyncIterator[list[Record]]:
        return self._list("locations")

    def accommodation_types(self, with_capacities: bool = True) -> AsyncIterator[list[Record]]:
        return self._list("accommodation_types")

    def units(self) -> AsyncIterator[list[Record]]:
        return self._list("units")

    def rate_types(self) -> AsyncIterator[list[Record]]:
        return self._list("rate_types")

    def rate_options(self) -> AsyncIterator[list[Record]]:
        return self._list("rate_options")

    def rates(self, resource_id: int) -> AsyncIterator[list[Record]]:
        return self._pages("rates", self.data["rates"](resource_id))

    def holder_list(
        self, path: str, key: str, *, holder_kind: str, holder_id: int
    ) -> AsyncIterator[list[Record]]:
        """One holder's implies, stamped like `ReservationService.holder_list` stamps them."""
        records = [
            {**r, "holderKind": holder_kind, "holderId": holder_id}
            for r in self.data.get("implies", [])
            if r["resourceId"] == holder_id and r["holderType"] == holder_kind
        ]
        return self._pages("implies", records)

    def availability(
        self,
        arrival_from: date,
        arrival_to: date,
        resource_id: int | None = None,
        durations: list[int] | None = None,
    ) -> AsyncIterator[list[Record]]:
        records = []
        day = arrival_from
        while day <= arrival_to:
            for rt in self.data["accommodation_types"]:
                if resource_id is not None and rt["resourceId"] != resource_id:
                    continue  # the real service's resourceId filter
                for d in durations or (2, 7):
                    records.append(
                        {
                            "resourceId": rt["resourceId"],
                            "accommodationKindId": 1,
                            "locationId": 1,
                            "locationCode": "P1",
                            "arrivalDate": day.isoformat(),
                            "departureDate": (day + timedelta(days=d)).isoformat(),
                            "duration": d,
                            "availableUnits": 2,
                            "units": [101, 102],
                            "maxCapacity": 4,
                            "petCapacity": 0,
                            "prices": [{"rateTypeId": 1, "currencyCode": "EUR", "price": 99.9 * d}],
                        }
                    )
                    # a test's change to one record: (resourceId, arrivalDate, duration) -> fields
                    changes = self.data.get("availability_changes", {})
                    records[-1].update(changes.get((rt["resourceId"], day.isoformat(), d), {}))
            day += timedelta(days=1)
        return self._pages("availability", records)

    def companies(self) -> AsyncIterator[list[Record]]:
        return self._list("companies")

    def journal_reports(self) -> AsyncIterator[list[Record]]:
        return self._list("journal_reports")

    def journal_entries(self, report_id: int) -> AsyncIterator[list[Record]]:
        return self._pages("journal_entries", self.data["journal_entries"](report_id))

    def cash_accounts(self) -> AsyncIterator[list[Record]]:
        return self._list("cash_accounts")

    def cash_clearances(self) -> AsyncIterator[list[Record]]:
        return self._list("cash_clearances")

    def customers(self, ids: list[int] | None = None) -> AsyncIterator[list[Record]]:
        return self._list("customers")

    def reservation_details(
        self, ids: list[int] | None = None, modified_since: Any = None, sections: Any = None
    ) -> AsyncIterator[list[Record]]:
        return self._list("reservation_details")

    def events(self, after_event_id: int = 0) -> AsyncIterator[list[Record]]:
        return self._pages(
            "events", [e for e in self.data["events"] if e["eventId"] > after_event_id]
        )


class FakeServiceResource(ReservationServiceResource):
    """The service resource with the client swapped for the fake."""

    fixture: str = "default"

    def open_client(self) -> FakeService:  # type: ignore[override]
        data = FIXTURES.get(self.fixture)
        if data is None:
            data = FIXTURES.setdefault("default", default_fixture())
        return FakeService(data)

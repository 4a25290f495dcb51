"""The seam between the sandbox's HTTP layer (`sandbox.server`) and its world (`sandbox.world`).

The server knows HTTP, paging, filters, auth, throttling and faults; the world knows the business
and its clock. Records cross this seam as plain dicts in the service's wire format (camelCase
keys, ISO date strings, money as JSON numbers) exactly as `docs/contracts.md` lists them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, Protocol

Record = dict[str, Any]

# Collection names the world serves; the server maps endpoints onto them.
COLLECTIONS: dict[str, str] = {
    # name: primary key field
    "distributionchannels": "distributionChannelId",
    "locations": "locationId",
    "accommodationtypes": "resourceId",
    "units": "unitId",
    "ratetypes": "rateTypeId",
    "rateoptions": "rateOptionId",
    "rates": "rateId",
    "companies": "companyId",
    "journalreports": "journalReportId",
    "journalentries": "journalEntryId",
    "cashaccounts": "cashAccountId",
    "cashclearances": "cashClearanceId",
    "customers": "customerId",
    "owners": "ownerId",
    "addons": "resourceId",
    "offers": "resourceId",
    "offerrates": "rateId",
    "typeadditions": "additionId",
    "offeradditions": "additionId",
    "implies": "implyId",
    "unitimplies": "implyId",
    "reservations": "reservationId",
    "reservedresources": "reservedResourceId",
    "billlines": "reservationBillLineId",
    "subjects": "reservationSubjectId",
    "operationtasks": "taskId",
    "periodicaltasks": "periodicalTaskId",
    "allotments": "allotmentId",
    "rentabilitysets": "rentabilitySetId",
    "rentabilityconfig": "rentabilityConfigId",
    "reservability": "reservabilityId",
    "events": "eventId",
}

# Child collections and the field that links them to their parent.
CHILDREN: dict[str, tuple[str, str]] = {
    # child: (parent collection, link field on the child)
    "reservedresources": ("reservations", "reservationId"),
    "billlines": ("reservations", "reservationId"),
    "subjects": ("reservations", "reservationId"),
    "journalentries": ("journalreports", "reportId"),
    "rates": ("accommodationtypes", "resourceId"),
    "allotments": ("accommodationtypes", "resourceId"),
    "rateoptions": ("ratetypes", "rateTypeId"),
    "offerrates": ("offers", "resourceId"),
    "typeadditions": ("accommodationtypes", "resourceId"),
    "offeradditions": ("offers", "resourceId"),
    # implies of accommodation types, add-ons and offers (resourceIds are unique across them)
    "implies": ("accommodationtypes", "resourceId"),
    "unitimplies": ("units", "unitId"),
}


class WorldError(Exception):
    """A request the world refuses (illegal state move, unknown resource): the server answers 400."""


class World(Protocol):
    """What the server needs from the world. All methods are safe to call under `lock`."""

    lock: threading.RLock
    now: datetime  # the sandbox clock, UTC (naive datetimes are UTC)

    def keys(self, collection: str) -> Sequence[int]:
        """Primary keys of the collection in ascending order (for bisect keyset paging)."""

    def records(self, collection: str) -> Sequence[Record]:
        """All records of the collection, in ascending primary-key order."""

    def get(self, collection: str, key: int) -> Record | None:
        """One record by primary key, or None."""

    def children(self, collection: str, parent_key: int) -> list[Record]:
        """Records of a child collection (see CHILDREN) that belong to one parent, in pk order."""

    def availability(
        self,
        *,
        arrival_from: date,
        arrival_to: date,
        resource_ids: Sequence[int] | None = None,
        location_id: int | None = None,
        durations: Sequence[int] | None = None,
        rate_type_id: int | None = None,
        distribution_channel_code: str | None = None,
    ) -> list[Record]:
        """Availability records (contracts.md) for the arrival window, computed from state."""

    def create_reservation(self, body: Record) -> Record:
        """POST /reservations. Raises WorldError with a message on invalid input."""

    def update_reservation(self, reservation_id: int, body: Record) -> Record:
        """PUT /reservations/{id}: status action and expected times. WorldError if illegal."""

    def advance(self, hours: float) -> Record:
        """Move the clock forward, simulating the business; returns a summary of changes."""

"""A reservation of the world in memory (`Res`) and its wire fields."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sandbox.world.block import record_factory

from .clock import dtstr

EXPIRY = timedelta(days=7)  # OPTIONAL / QUOTATION expire when not confirmed within this
SUBJECTS = (  # subjectId, type, ageFrom, ageTo
    (1, "PERSON", 18, None),
    (2, "PERSON", 3, 17),
    (3, "PERSON", 0, 2),
)


RESERVED_RESOURCE_FIELDS = (
    "reservedResourceId",
    "reservationId",
    "resourceId",
    "unitId",
    "rateTypeId",
    "type",
    "code",
    "name",
    "quantity",
    "startDate",
    "endDate",
    "statusName",
    "overrideValue",
)
_RR = record_factory("ReservedResource", RESERVED_RESOURCE_FIELDS)

RESERVATION_FIELDS = (
    "reservationId",
    "reservationNumber",
    "reservationCategoryId",
    "categoryCode",
    "categoryName",
    "type",
    "status",
    "arrivalDate",
    "departureDate",
    "expectedArrivalDateTime",
    "expectedDepartureDateTime",
    "customerId",
    "distributionChannelId",
    "distributionChannelCode",
    "locationId",
    "reservationDate",
    "modifiedDate",
    "cancelDate",
    "voucher",
    "validationStatus",
)
_RESERVATION = record_factory("Reservation", RESERVATION_FIELDS)
_SUBJECT = record_factory(
    "ReservationSubject",
    ("reservationSubjectId", "reservationId", "subjectId", "type", "ageFrom", "ageTo", "quantity"),
)


class Res:
    """Typed state of one reservation beside its wire record (`rec`)."""

    __slots__ = (
        "acc_rr",
        "arr",
        "autopilot",
        "bills",
        "cancelled_value",
        "category",
        "ch",
        "created",
        "cust",
        "dep",
        "discount_pct",
        "extra_rrs",
        "hist",
        "holding",
        "persons",
        "pets",
        "rec",
        "rent_payer",
        "rid",
        "rt",
        "status",
        "ti",
        "unit",
    )

    def __init__(self) -> None:
        self.hist: list[tuple[datetime, str]] = []
        self.bills: dict[str, Any] = {}
        self.extra_rrs: dict[str, dict[str, Any]] = {}
        self.holding = False
        self.autopilot = True
        self.cancelled_value: int | None = None  # cents of the bills when last cancelled

    def touch(self, t: datetime) -> None:
        stamp = dtstr(t)
        if stamp > self.rec["modifiedDate"]:  # never move backwards (ISO strings sort by time)
            self.rec["modifiedDate"] = stamp

    @property
    def guest(self) -> bool:
        return self.category not in ("OWNER", "BLOCK")

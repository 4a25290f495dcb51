"""How the strict profile serves a record: the real service's field names, and the fields the
notes never promise left out at random (seeded, so every request and the ground truth see the
same record).

`real-service-notes.md` names the fields of most records but never says that a field is always
present. The strict profile therefore serves:

- no field the real service does not have (`DROPPED`): locations carry `adminOrganisationId`
  and no `companyId` (8.2), availability records list `units[]` and have no `availableUnits`
  (6.1);
- a null value left out (the field absent) in about half of the cases, so a client meets both
  `"cancelDate": null` and no `cancelDate` at all;
- the informational fields of `OPTIONAL` left out of about a fifth of the records. None of them
  feeds a mart, so the marts' ground truth (computed from the same served records) is unchanged.

Primary keys are always present: a record without its key is not a record.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

from sandbox.protocol import COLLECTIONS, Record

# fields the real service does not have (docs/contracts.md lists both spellings)
DROPPED: dict[str, frozenset[str]] = {
    "locations": frozenset({"companyId"}),
    "availability": frozenset({"availableUnits"}),
}
# informational fields that the strict profile leaves out of some records
OPTIONAL: dict[str, frozenset[str]] = {
    "distributionchannels": frozenset({"allotmentOnly"}),
    "locations": frozenset({"locationNumber", "minAgeForBooking"}),
    "accommodationtypes": frozenset({"nrOfBathrooms", "checkinTime", "checkoutTime", "hasObjects"}),
    "units": frozenset({"roomCode", "cleaningStatus", "choosableOnInternet", "nrOfBathrooms"}),
    "companies": frozenset({"countryCode"}),
    "journalentries": frozenset({"comments", "costCenter", "secondLedgerNumber", "resourceCode"}),
    "cashaccounts": frozenset({"name"}),
    "customers": frozenset({"language", "loyaltyLevel"}),
    "reservations": frozenset(
        {
            "categoryName",
            "voucher",
            "validationStatus",
            "expectedArrivalDateTime",
            "expectedDepartureDateTime",
        }
    ),
    "reservedresources": frozenset({"statusName", "name", "overrideValue"}),
    "billlines": frozenset({"description", "multiplier"}),
    "subjects": frozenset({"ageFrom", "ageTo"}),
}
# an owner journal entry names its unit only by `resourceCode`: always sent there
OWNER_REPORT_TYPE = "OWNER_MUTATION_REPORT"
OWNER_ENTRY_KEPT = frozenset({"resourceCode"})
NULL_OMIT_SHARE = 0.5  # chance that a null value is left out instead of sent as null
OPTIONAL_OMIT_SHARE = 0.2  # chance that an optional field is left out
# what a null or optional field may never be: the record's key and the links to its parents
KEPT: dict[str, frozenset[str]] = {
    "reservedresources": frozenset({"reservationId"}),
    "billlines": frozenset({"reservationId", "payerType", "billLineType", "total"}),
    "subjects": frozenset({"reservationId"}),
    "journalentries": frozenset({"reportId"}),
    "rates": frozenset({"resourceId"}),
    "rateoptions": frozenset({"rateTypeId"}),
    "events": frozenset({"eventType", "entityId", "entityType", "entityAction", "eventDate"}),
}


def draw(seed: int, collection: str, key: Any, name: str) -> float:
    """A number in [0, 1) fixed by (seed, collection, key, field): the same on every request."""
    return zlib.crc32(f"{seed}|{collection}|{key}|{name}".encode()) / 2**32


class Shaper:
    """Shapes the records of one strict sandbox (its `seed` fixes every draw)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def omitted(self, collection: str, key: Any, name: str, value: Any) -> bool:
        if value is None:
            return draw(self.seed, collection, key, name) < NULL_OMIT_SHARE
        if name in OPTIONAL.get(collection, ()):
            return draw(self.seed, collection, key, "~" + name) < OPTIONAL_OMIT_SHARE
        return False

    def shape(self, collection: str, record: Mapping[str, Any], key: Any = None) -> Record:
        """The record as the strict profile serves it (a new dict; `record` is not changed)."""
        pk = COLLECTIONS.get(collection)
        if key is None and pk is not None:
            key = record.get(pk)
        dropped = DROPPED.get(collection, frozenset())
        kept = KEPT.get(collection, frozenset())
        if collection == "journalentries" and record.get("type") == OWNER_REPORT_TYPE:
            kept = kept | OWNER_ENTRY_KEPT
        out: Record = {}
        for name, value in record.items():
            if name in dropped:
                continue
            if name != pk and name not in kept and self.omitted(collection, key, name, value):
                continue
            out[name] = value
        return out

    def availability(self, record: Mapping[str, Any]) -> Record:
        """An availability record: no `availableUnits` (its `units[]` lists them); nothing else
        is left out (the record is keyed by type, arrival date and duration, not by an id)."""
        return {k: v for k, v in record.items() if k not in DROPPED["availability"]}

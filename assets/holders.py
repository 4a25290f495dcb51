"""Streams read per holder: the interface lists some records only under the record that holds
them (implies: `/accommodationtypes|offers|add-ons/{resourceId}/implies`, no list of all), so a
full read is one request per holder id in the lake, and an event naming a holder re-reads it.

Resource ids are one space (a resource is an accommodation type, an offer or an add-on), and an
offer is also listed by `/add-ons` as a SPECIAL add-on: each id is read once, as the first kind
that lists it, in the full read and in an event's re-read alike (`holder_ids`). Unit implies are
not read: one request per unit (40 / 1,178 / 11,583 at small / medium / large) for a table no
figure reads, and a table refetched only for the units events name would be partial.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assets.endpoints import FanOut, Holder, holder_call
from lake.store import Lake

UNIT_IMPLIES_NOT_READ = (
    "unit implies are not extracted: one request per unit (about 11,600 a read at the large "
    "scale), and refetching only the units events name would leave the table partial"
)


IMPLY_HOLDERS = (
    Holder(
        "ACCOMMODATIONTYPE",
        "/accommodationtypes/{resourceId}/implies",
        "accommodation_types",
        "resource_id",
        ("ACCOMMODATIONTYPE", "ACCOMMODATION_TYPE"),
    ),
    Holder("OFFER", "/offers/{resourceId}/implies", "offers", "resource_id", ("OFFER", "SPECIAL")),
    Holder("ADDON", "/add-ons/{resourceId}/implies", "addons", "resource_id", ("ADDON", "ADD_ON")),
)


def holder_ids(holders: tuple[Holder, ...], lake: Lake) -> dict[int, str]:
    """Every holder id in the lake -> its kind; an id two lists hold is the earlier kind's."""
    out: dict[int, str] = {}
    for h in holders:
        for i in lake.current_ids(h.table, h.id_column):
            out.setdefault(int(i), h.kind)
    return out


def per_holder(holders: tuple[Holder, ...], key: str) -> Callable[[FanOut], list[dict[str, Any]]]:
    """The fan-out of a full read: one call per holder id in the lake."""
    by_kind = {h.kind: h for h in holders}

    def calls(ctx: FanOut) -> list[dict[str, Any]]:
        return [holder_call(by_kind[k], i, key) for i, k in holder_ids(holders, ctx.lake).items()]

    return calls

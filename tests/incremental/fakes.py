"""A fake service with the facade methods the incremental run uses (id lists, events, mark).

Built on the assets' fake (wire-format fixture records); adds id filtering, `get_by_ids`,
`latest_event_id`, a `client.iter_keyset` for filtered lists, and a way to fail mid-stream.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Iterable
from types import SimpleNamespace
from typing import Any

from pipelines.resources import ReservationServiceResource
from service.errors import BadRequest
from tests.assets.fake_service import FakeService, default_fixture, reservation

Record = dict[str, Any]
DATA: dict[str, dict[str, Any]] = {}

_ID_FIELDS = {
    "/units": ("units", "unitId"),
    "/locations": ("locations", "locationId"),
    "/distributionchannels": ("distribution_channels", "distributionChannelId"),
    "/distributionchannels/details": ("distribution_channels", "distributionChannelId"),
    "/accommodationtypes/details": ("accommodation_types", "resourceId"),
    "/customers": ("customers", "customerId"),
    "/owners": ("owners", "ownerId"),
    "/add-ons": ("addons", "resourceId"),
    "/cashreservations/clearance": ("cash_clearances", "cashClearanceId"),
    "/operations/tasks": ("operation_tasks", "taskId"),
    "/operations/periodicalTasks": ("periodical_tasks", "periodicalTaskId"),
    "/allotments": ("allotments", "allotmentId"),
    "/rentability/sets": ("rentability_sets", "rentabilitySetId"),
    "/rentability/config": ("rentability_config", "rentabilityConfigId"),
    "/resourcereservability": ("resource_reservability", "reservabilityId"),
    "/offers": ("offers", "resourceId"),
    "/accommodationtypes/additions": ("accommodation_type_additions", "additionId"),
    "/offers/additions": ("offer_additions", "additionId"),
}


class Boom(RuntimeError):
    """The simulated crash."""


def fixture() -> dict[str, Any]:
    """The assets' default fixture plus an event feed the tests extend."""
    data = default_fixture()
    data["fail_on"] = set()  # endpoint names that raise after their first page
    return data


def event(
    event_id: int, event_type: str, entity_id: int, action: str = "UPDATE", old: int | None = None
) -> Record:
    return {
        "eventId": event_id,
        "eventType": event_type,
        "entityId": entity_id,
        "entityType": event_type.removesuffix("_EVENT"),
        "entityAction": action,
        "oldEntityId": old,
        "eventDate": f"2026-01-05T00:00:{event_id % 60:02d}.000",
    }


class IncrementalFakeService(FakeService):
    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.config = SimpleNamespace(max_url_length=4000, base_url="http://fake/service/v2")
        self.client = SimpleNamespace(
            limiter=SimpleNamespace(limit=4), iter_keyset=self._iter_keyset
        )

    async def _pages(self, endpoint: str, records: list[Record]) -> AsyncIterator[list[Record]]:
        n = 0
        async for page in super()._pages(endpoint, records):
            if n and endpoint in self.data.get("fail_on", ()):
                raise Boom(f"connection lost while reading {endpoint}")
            n += 1
            yield page

    async def latest_event_id(self) -> int | None:
        self.stats["events"] += 1
        ids = [e["eventId"] for e in self.data["events"]]
        return max(ids) if ids else None

    def events(
        self,
        after_event_id: int | None = 0,
        page_size: int | None = None,
        *,
        since: Any = None,
        up_to_event_id: int | None = None,
    ) -> AsyncIterator[list[Record]]:
        if since is not None:  # like a service that does not filter its feed by date
            return self._refused()
        after = after_event_id or 0
        return self._pages(
            "events",
            sorted(
                (
                    e
                    for e in self.data["events"]
                    if e["eventId"] > after
                    and (up_to_event_id is None or e["eventId"] <= up_to_event_id)
                ),
                key=lambda e: e["eventId"],
            ),
        )

    async def _refused(self) -> AsyncIterator[list[Record]]:
        raise BadRequest("GET /events failed", endpoint="/events", server_message="unknown filter")
        yield []  # an async generator, failing when read like the client's pages

    async def latest_event(self, up_to_event_id: int | None = None) -> Record | None:
        """The newest event's id only: this feed's events carry no usable date for a mark."""
        if up_to_event_id is None:
            newest = await self.latest_event_id()
        else:
            self.stats["events"] += 1
            ids = [e["eventId"] for e in self.data["events"] if e["eventId"] <= up_to_event_id]
            newest = max(ids) if ids else None
        return None if newest is None else {"eventId": newest}

    def _filtered(self, name: str, field: str, ids: Iterable[int] | None) -> list[Record]:
        records = self.data[name]
        if ids is None:
            return records
        wanted = {int(i) for i in ids}
        return [r for r in records if r[field] in wanted]

    def customers(self, ids: Iterable[int] | None = None) -> AsyncIterator[list[Record]]:
        return self._pages("customers", self._filtered("customers", "customerId", ids))

    def reservation_details(
        self, ids: Iterable[int] | None = None, modified_since: Any = None, sections: Any = None
    ) -> AsyncIterator[list[Record]]:
        records = self._filtered("reservation_details", "reservationId", ids)
        if modified_since is not None:
            since = modified_since.isoformat(timespec="milliseconds")
            records = [r for r in records if r["modifiedDate"] >= since]
        return self._pages("reservation_details", records)

    def get_by_ids(self, path: str, id_field: str, ids: Iterable[int]) -> AsyncIterator[list]:
        name, field = _ID_FIELDS[path]
        return self._pages(name, self._filtered(name, field, ids))

    def _iter_keyset(
        self, path: str, id_field: str, *, params: dict[str, Any] | None = None, **_: Any
    ) -> AsyncIterator[list[Record]]:
        name, field = _ID_FIELDS[path]
        records = self.data[name]
        for text in (params or {}).get("filter", []):
            if ":[" in text:
                ids = {int(x) for x in text.split(":[", 1)[1].rstrip("]").split(",") if x}
                records = [r for r in records if r[field] in ids]
        return self._pages(name, records)


class IncrementalFakeResource(ReservationServiceResource):
    """The service resource handing out the fake (fixture by name from `DATA`)."""

    fixture: str = "incremental"

    def open_client(self) -> IncrementalFakeService:  # type: ignore[override]
        return IncrementalFakeService(DATA[self.fixture])


def opener(data: dict[str, Any]) -> Any:
    return lambda: IncrementalFakeService(data)


def changed_reservation(rid: int, **header: Any) -> Record:
    record = reservation(rid, **header)
    return copy.deepcopy(record)

"""The incremental fake plus the plain `/reservations` list the sweep reads its ids from.

`data["id_list"]` chooses what the list answers: "ok" (the fixture's reservations), "empty"
(nothing, like an outage answering 204) or "other_tenant" (ids the lake never saw). Requests
are counted per endpoint in `stats` like the other fake lists: `reservations` for list pages,
`reservations_by_id` for id lookups.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Iterable
from typing import Any

from tests.incremental.fakes import IncrementalFakeService

Record = dict[str, Any]
SECTIONS = ("reservedResources", "customerBill", "payingCustomerBill", "agentBill", "subjects")
DEFAULT_SIZE = 1000


def header(record: Record) -> Record:
    """A /reservations record: the details record without its sections."""
    return {k: copy.deepcopy(v) for k, v in record.items() if k not in SECTIONS}


class IdListFakeService(IncrementalFakeService):
    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.config.page_size = DEFAULT_SIZE
        self.asked_sizes: list[int] = []

    def _headers(self) -> list[Record]:
        mode = self.data.get("id_list", "ok")
        if mode == "empty":
            return []
        records = [header(r) for r in self.data["reservation_details"]]
        if mode == "other_tenant":
            for r in records:
                r["reservationId"] += 1_000_000
        return sorted(records, key=lambda r: r["reservationId"])

    async def _sized(self, endpoint: str, records: list[Record], size: int) -> Any:
        for start in range(0, max(len(records), 1), size):  # an empty list costs one request
            self.stats[endpoint] += 1
            page = records[start : start + size]
            if page:
                yield page

    def _iter_keyset(
        self, path: str, id_field: str, *, params: dict[str, Any] | None = None, **kw: Any
    ) -> AsyncIterator[list[Record]]:
        if path != "/reservations":
            return super()._iter_keyset(path, id_field, params=params, **kw)
        size = kw.get("size") or DEFAULT_SIZE
        self.asked_sizes.append(size)
        return self._sized("reservations", self._headers(), size)

    def reservations(
        self, ids: Iterable[int] | None = None, *, modified_since: Any = None
    ) -> AsyncIterator[list[Record]]:
        records = self._headers()
        if ids is None:
            return self._sized("reservations", records, DEFAULT_SIZE)
        wanted = {int(i) for i in ids}
        found = [r for r in records if r["reservationId"] in wanted]
        return self._sized("reservations_by_id", found, DEFAULT_SIZE)


def id_opener(data: dict[str, Any]) -> Any:
    return lambda: IdListFakeService(data)

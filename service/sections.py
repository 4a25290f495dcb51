"""The sections of reservation details, negotiated with the service.

The client asks `/reservations/details` for the sections the lake needs
(`RESERVATION_SECTIONS`). The real service's `returnSections` enum is only partly known
(real-service-notes 4.3: PAYINGCUSTOMERBILL and SUBJECTS are not in the part that could be read),
so a service may refuse the request with 400. Then, before any page has come:

1. `negotiate` asks for each section alone (one small request each) to learn which ones the
   service refuses; when it refuses none of them, the 400 was about something else and is raised;
2. the refused sections are dropped for the rest of the run (this object lives as long as the
   facade: one run), which the run report says once (`notes`);
3. `complete` fills each record's refused section from the endpoint that serves it per
   reservation: bills from `GET /reservations/bills?reservationIds=..&payerType=..` (paged,
   notes 4.4), reserved resources from `GET /reservations/{id}/content` (paged, 4.5), subjects
   from `GET /reservations/{id}/subjects` (interface). A reservation whose endpoint answers
   400 or 404 keeps that section empty; the notes count them.

Nothing of this costs a request while the service accepts every section.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from service.errors import BadRequest, NotFound
from service.filters import batch_ids

log = logging.getLogger("service.sections")

Record = dict[str, Any]
DETAILS_PATH = "/reservations/details"
# returnSections value -> the field of the details record that holds it
SECTION_FIELDS = {
    "RESERVEDRESOURCES": "reservedResources",
    "CUSTOMERBILL": "customerBill",
    "PAYINGCUSTOMERBILL": "payingCustomerBill",
    "AGENTBILL": "agentBill",
    "SUBJECTS": "subjects",
}
BILL_PAYERS = {
    "CUSTOMERBILL": "CUSTOMER",
    "PAYINGCUSTOMERBILL": "PAYING_CUSTOMER",
    "AGENTBILL": "AGENT",
}
FALLBACK_PATHS = {
    "RESERVEDRESOURCES": "/reservations/{reservationId}/content",
    "SUBJECTS": "/reservations/{reservationId}/subjects",
    **{name: f"/reservations/bills (payerType {payer})" for name, payer in BILL_PAYERS.items()},
}
IDS_BUDGET = 1500  # characters of reservation ids per bills request (URL-safe)


def _rid(record: Any) -> int | None:
    value = record.get("reservationId") if isinstance(record, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _line_id(line: Record) -> int:
    value = line.get("reservationBillLineId")
    return value if isinstance(value, int) else -1


class DetailSections:
    """Which sections the service refuses, and how their data is read instead (one run)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.refused: frozenset[str] = frozenset()
        self._negotiated = False
        self._lock: asyncio.Lock | None = None
        self._note: str | None = None
        self.left_empty: Counter[str] = Counter()  # section -> reservations left without it

    @property
    def notes(self) -> list[str]:
        """What the run report says about the sections (empty while all were accepted)."""
        out = [self._note] if self._note else []
        out += [
            f"reservation details: {n} reservation(s) left without {SECTION_FIELDS[s]} "
            f"({FALLBACK_PATHS[s]} answered 400 or 404)"
            for s, n in sorted(self.left_empty.items())
        ]
        return out

    async def negotiate(self, asked: Sequence[str], error: BadRequest) -> frozenset[str]:
        """The sections of `asked` the service refuses (dropped from now on); raises `error`
        when it accepts each of them alone (the 400 was about something else)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._negotiated and self.refused & set(asked):
                return self.refused  # a concurrent read found out meanwhile
            refused = {s for s in asked if not await self._accepts(s)}
            if not refused or (refused == set(asked) and not await self._accepts(None)):
                raise error
            self.refused = self.refused | refused
            self._negotiated = True
            names = sorted(refused, key=list(SECTION_FIELDS).index)
            said = error.server_message or str(error)
            self._note = (
                f"reservation details: the service refused returnSections {', '.join(names)} "
                f"(HTTP 400: {said[:160]}); dropped for this run, read instead from "
                + "; ".join(f"{SECTION_FIELDS[s]}: {FALLBACK_PATHS[s]}" for s in names)
            )
            log.warning("%s", self._note)
            return self.refused

    async def _accepts(self, section: str | None) -> bool:
        params: dict[str, Any] = {"page": 0, "size": 1}
        if section is not None:
            params["returnSections"] = section
        try:
            await self.client.get_page(DETAILS_PATH, params=params, template=DETAILS_PATH)
        except BadRequest:
            return False
        return True

    async def complete(self, page: Sequence[Record], dropped: Sequence[str]) -> list[Record]:
        """The page's records with each dropped section read from its own endpoint."""
        records = list(page)  # decodes a lazy page
        ids = [rid for rid in map(_rid, records) if rid is not None]
        for section in dropped:
            found = await self._read(section, ids)
            field = SECTION_FIELDS[section]
            for record in records:
                rid = _rid(record)
                if rid is not None:
                    record[field] = found.get(rid, [])
        return records

    async def _read(self, section: str, ids: list[int]) -> dict[int, list[Record]]:
        if not ids:
            return {}
        payer = BILL_PAYERS.get(section)
        if payer is not None:
            return await self._bills(payer, ids)
        if section == "SUBJECTS":
            return await self._each(section, ids, self._subjects)
        if section == "RESERVEDRESOURCES":
            return await self._each(section, ids, self._content)
        raise ValueError(f"no endpoint serves the section {section!r}")

    async def _bills(self, payer: str, ids: list[int]) -> dict[int, list[Record]]:
        section = next(name for name, p in BILL_PAYERS.items() if p == payer)
        out: dict[int, list[Record]] = {rid: [] for rid in ids}
        for batch in batch_ids(ids, budget=IDS_BUDGET):
            params = {"reservationIds": ",".join(map(str, batch)), "payerType": payer}
            lines: list[Record] = []
            try:
                async for page in self.client.iter_keyset(
                    "/reservations/bills", "reservationBillLineId", params=params
                ):
                    lines.extend(page)
            except (NotFound, BadRequest):
                self.left_empty[section] += len(batch)
                continue
            for line in lines:
                rid = _rid(line)
                if rid in out:
                    out[rid].append(line)
        for found in out.values():
            found.sort(key=_line_id)
        return out

    async def _each(
        self,
        section: str,
        ids: list[int],
        read: Callable[[int], Awaitable[list[Record]]],
    ) -> dict[int, list[Record]]:
        async def one(rid: int) -> tuple[int, list[Record]]:
            try:
                return rid, await read(rid)
            except (NotFound, BadRequest):
                self.left_empty[section] += 1
                return rid, []

        # the client's own limit bounds the requests in flight
        return dict(await asyncio.gather(*(one(rid) for rid in ids)))

    async def _subjects(self, rid: int) -> list[Record]:
        body = await self.client.get_json(
            f"/reservations/{rid}/subjects", template=FALLBACK_PATHS["SUBJECTS"]
        )
        return [r for r in body or () if isinstance(r, dict)]

    async def _content(self, rid: int) -> list[Record]:
        out: list[Record] = []
        async for page in self.client.iter_pages(
            f"/reservations/{rid}/content", template=FALLBACK_PATHS["RESERVEDRESOURCES"]
        ):
            out.extend(r for r in page if isinstance(r, dict))
        return out

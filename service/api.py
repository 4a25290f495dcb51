"""`ReservationService`: one method per endpoint the pipeline reads.

List methods are async generators of pages (sequences of records, in no particular order
across pages; `LazyRecords` decoded where first used); single-object endpoints are coroutines returning JSON. Big lists use parallel id-keyset
paging (see `service.paging`), so records changing during the read are neither skipped nor
repeated. Where the interface and the notes spell a path differently, both are accepted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import date, datetime, timedelta
from typing import Any

import httpx

from service.client import ServiceClient
from service.config import DEFAULT_AVAILABILITY_WINDOW_DAYS, ServiceConfig
from service.errors import BadRequest, NotFound
from service.filters import F, batch_ids, format_value
from service.page import Record
from service.responses import clean_params
from service.sections import DetailSections
from service.streams import stream
from service.throttle import ConcurrencyLimiter

Pages = AsyncIterator[Sequence[Record]]  # lists, or `LazyRecords` decoded on first use

RESERVATION_SECTIONS = (
    "RESERVEDRESOURCES",
    "CUSTOMERBILL",
    "PAYINGCUSTOMERBILL",
    "AGENTBILL",
    "SUBJECTS",
)
KEYSET_PARAMS_ALLOWANCE = 160  # room kept in the URL for keyset filters, sort, page and size


CHANNEL_DETAIL_SECTIONS = "COMMISSION_ADDONS,CANCELLATION_ADDONS"


class ReservationService:
    """Typed facade over a `ServiceClient`; use `async with ReservationService.connect(cfg)`."""

    def __init__(self, client: ServiceClient, *, owns_client: bool = False):
        self.client = client
        self._owns_client = owns_client
        # the reservation-details sections the service refused, for as long as this facade lives
        self.sections = DetailSections(client)

    @classmethod
    def connect(
        cls,
        config: ServiceConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        limiter: ConcurrencyLimiter | None = None,
        used_today: int = 0,
    ) -> ReservationService:
        client = ServiceClient(config, transport=transport, limiter=limiter, used_today=used_today)
        return cls(client, owns_client=True)

    async def __aenter__(self) -> ReservationService:
        if self._owns_client:
            await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._owns_client:
            await self.client.aclose()

    @property
    def config(self) -> ServiceConfig:
        return self.client.config

    @property
    def stats(self) -> dict[str, Any]:
        return self.client.stats_snapshot()

    @property
    def notes(self) -> list[str]:
        """What the run report should say about this facade's reading (refused sections)."""
        return self.sections.notes

    # ---------------------------------------------------------------- reference data

    def distribution_channels(self, *, with_details: bool = True) -> Pages:
        """Channels; with their commission and cancellation add-ons from the details list
        (real-service-notes 8.3) unless `with_details` is False."""
        if with_details:
            return self.client.iter_keyset(
                "/distributionchannels/details",
                "distributionChannelId",
                params={"returnSections": CHANNEL_DETAIL_SECTIONS},
            )
        return self.client.iter_keyset("/distributionchannels", "distributionChannelId")

    def locations(self) -> Pages:
        return self.client.iter_keyset("/locations", "locationId")

    def accommodation_types(self, *, with_capacities: bool = True) -> Pages:
        if with_capacities:
            return self.client.iter_keyset(
                "/accommodationtypes/details",
                "resourceId",
                params={"returnSections": "CAPACITIES"},
            )
        return self.client.iter_keyset("/accommodationtypes", "resourceId")

    def units(self) -> Pages:
        return self.client.iter_keyset("/units", "unitId")

    def rate_types(self) -> Pages:
        return self.client.iter_keyset("/ratetypes", "rateTypeId")

    def rate_options(self) -> Pages:
        return self.client.iter_keyset("/ratetypes/rateoptions", "rateOptionId")

    async def rates(self, resource_id: int) -> Pages:
        """Rates of one accommodation type; falls back to the singular path on 404."""
        plural = f"/accommodationtypes/{int(resource_id)}/rates"
        singular = f"/accommodationtype/{int(resource_id)}/rates"
        yielded = False
        try:
            async for page in self.client.iter_keyset(
                plural, "rateId", template="/accommodationtypes/{resourceId}/rates"
            ):
                yielded = True
                yield page
        except NotFound:
            if yielded:
                raise
            async for page in self.client.iter_keyset(
                singular, "rateId", template="/accommodationtype/{resourceId}/rates"
            ):
                yield page

    async def holder_list(self, path: str, key: str, *, holder_kind: str, holder_id: int) -> Pages:
        """The records one holder lists at `path` (`{resourceId}` filled in), each stamped with
        `holderKind` and `holderId`: an imply does not say which kind of record holds it."""
        url = path.replace("{resourceId}", str(int(holder_id)))
        stamp = {"holderKind": holder_kind, "holderId": int(holder_id)}
        async for page in self.client.iter_keyset(url, key, template=path):
            yield [{**record, **stamp} for record in page]

    def availability(
        self,
        arrival_from: date,
        arrival_to: date,
        *,
        resource_id: int | None = None,
        durations: Sequence[int] | None = None,
    ) -> Pages:
        """Availability records for arrivals in [from, to], in calls of at most 31 arrival days."""
        if arrival_to < arrival_from:
            raise ValueError("arrival_to is before arrival_from")
        windows = list(date_windows(arrival_from, arrival_to, DEFAULT_AVAILABILITY_WINDOW_DAYS))
        calls: list[dict[str, Any]] = []
        for start, end in windows:
            for duration in durations or (None,):
                calls.append(
                    {
                        "arrivalDateFrom": start.isoformat(),
                        "arrivalDateTo": end.isoformat(),
                        "resourceId": resource_id,
                        "duration": duration,
                    }
                )

        async def one(params: dict[str, Any]) -> Pages:
            body = await self.client.get_json(
                "/accommodationtypes/availability",
                params=params,
                template="/accommodationtypes/availability",
            )
            if body:
                yield body if isinstance(body, list) else [body]

        return merge([one(p) for p in calls], maxsize=self.client.limiter.limit * 2)

    # ---------------------------------------------------------------- finance

    def companies(self) -> Pages:
        return self.client.iter_keyset("/companies", "companyId")

    def journal_reports(self) -> Pages:
        return self.client.iter_keyset("/companies/journalreports", "journalReportId")

    def journal_entries(self, report_id: int) -> Pages:
        return self.client.iter_keyset(
            f"/companies/journalreports/{int(report_id)}/entries",
            "journalEntryId",
            template="/companies/journalreports/{journalReportId}/entries",
        )

    def cash_accounts(self) -> Pages:
        return self.client.iter_keyset("/cashreservations/accounts", "cashAccountId")

    def cash_clearances(self) -> Pages:
        return self.client.iter_keyset("/cashreservations/clearance", "cashClearanceId")

    # ---------------------------------------------------------------- guests and bookings

    def customers(self, ids: Iterable[int] | None = None) -> Pages:
        if ids is not None:
            return self.get_by_ids("/customers", "customerId", ids)
        return self.client.iter_keyset("/customers", "customerId")

    async def reservation_details(
        self,
        ids: Iterable[int] | None = None,
        *,
        modified_since: datetime | None = None,
        sections: Sequence[str] = RESERVATION_SECTIONS,
    ) -> Pages:
        """Reservation headers with their children in one stream (keyset on reservationId).

        Sections the service refuses are negotiated once and then read from their own
        endpoints (`service.sections`); a refusal never fails the read.
        """
        ids = None if ids is None else list(ids)
        while True:
            dropped = [s for s in sections if s in self.sections.refused]
            wanted = [s for s in sections if s not in self.sections.refused]
            params: dict[str, Any] = {"returnSections": ",".join(wanted)} if wanted else {}
            pages = self._reservations(
                "/reservations/details", params, ids, modified_since, size=self.config.details_size
            )
            yielded = False
            try:
                async for page in pages:
                    yielded = True
                    yield await self.sections.complete(page, dropped) if dropped else page
                return
            except BadRequest as exc:
                if yielded or not wanted:
                    raise
                await self.sections.negotiate(wanted, exc)  # raises exc when not about them

    def reservations(
        self, ids: Iterable[int] | None = None, *, modified_since: datetime | None = None
    ) -> Pages:
        return self._reservations("/reservations", {}, ids, modified_since)

    def _reservations(
        self,
        path: str,
        params: dict[str, Any],
        ids: Iterable[int] | None,
        modified_since: datetime | None,
        *,
        size: int | None = None,
    ) -> Pages:
        if modified_since is not None:
            params = {**params, "filter": [(F("modifiedDate") >= modified_since).render()]}
        if ids is None:
            return self.client.iter_keyset(path, "reservationId", params=params, size=size)
        budget = self._url_budget(path, {**params, "reservationIds": ""})
        batches = batch_ids((int(i) for i in ids), budget=budget)
        return merge(
            [
                self.client.iter_keyset(
                    path,
                    "reservationId",
                    params={**params, "reservationIds": ",".join(map(str, batch))},
                    size=size,
                )
                for batch in batches
            ],
            maxsize=self.client.limiter.limit * 2,
        )

    def get_by_ids(self, path: str, id_field: str, ids: Iterable[Any]) -> Pages:
        """Records of `path` whose `id_field` is in `ids` (`filter=id:[...]`, URL-safe batches)."""
        budget = self._url_budget(path, {"filter": f"{id_field}:[]"})
        return merge(
            [
                self.client.iter_keyset(
                    path, id_field, params={"filter": [F(id_field).isin(batch).render()]}
                )
                for batch in batch_ids(ids, budget=budget)
            ],
            maxsize=self.client.limiter.limit * 2,
        )

    # ---------------------------------------------------------------- events

    def events(
        self,
        after_event_id: int | None = None,
        page_size: int | None = None,
        *,
        since: datetime | None = None,
        up_to_event_id: int | None = None,
    ) -> Pages:
        """Events with eventId > after_event_id, in eventId order (so a cursor can follow).

        `since` keeps events with `eventDate >= since` and `up_to_event_id` those with
        `eventId <= up_to_event_id` (both as `filter` terms): together they re-read the overlap
        window just before a cursor, where an event committed late may have appeared.
        """
        terms = []
        if since is not None:
            terms.append((F("eventDate") >= since).render())
        if up_to_event_id is not None:
            terms.append((F("eventId") <= int(up_to_event_id)).render())
        return self.client.iter_keyset(
            self.config.events_path,
            "eventId",
            params={"filter": terms} if terms else None,
            after=after_event_id,
            ordered=True,
            size=page_size,
        )

    async def latest_event(self, up_to_event_id: int | None = None) -> Record | None:
        """The newest event (at or below `up_to_event_id` when given), in one small request."""
        params: dict[str, Any] = {"sort": "eventId,desc", "size": 1, "page": 0}
        if up_to_event_id is not None:
            params["filter"] = [(F("eventId") <= int(up_to_event_id)).render()]
        page = await self.client.get_page(self.config.events_path, params=params)
        return page.content[0] if page.content else None

    async def latest_event_id(self) -> int | None:
        """The newest eventId, in one small request (None when the feed is empty)."""
        event = await self.latest_event()
        value = event.get("eventId") if isinstance(event, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    # ---------------------------------------------------------------- single objects

    async def get(self, path: str, *, params: dict[str, Any] | None = None) -> Any:
        """Any single-object GET (e.g. `/reservations/{id}/details`)."""
        return await self.client.get_json(path, params=params)

    def _url_budget(self, path: str, params: dict[str, Any]) -> int:
        url = httpx.URL(self.config.base_url + "/" + path.lstrip("/")).copy_merge_params(
            clean_params(params) or []
        )
        used = len(str(url)) + KEYSET_PARAMS_ALLOWANCE
        return max(32, self.config.max_url_length - used)


def date_windows(start: date, end: date, days: int) -> Iterable[tuple[date, date]]:
    """`start` .. `end` (both included) in consecutive windows of at most `days` dates."""
    current = start
    while current <= end:
        last = min(end, current + timedelta(days=days - 1))
        yield current, last
        current = last + timedelta(days=1)


def merge(iterators: Sequence[Pages], *, maxsize: int) -> Pages:
    """Drain several page iterators concurrently into one stream (used for batches/windows)."""

    async def run(emit: Any, spawn: Any) -> None:
        async def drain(iterator: Pages) -> None:
            async for page in iterator:
                await emit(page)

        for iterator in iterators:
            spawn(drain(iterator))

    return stream(run, maxsize=maxsize)


__all__ = ["RESERVATION_SECTIONS", "ReservationService", "format_value", "merge"]

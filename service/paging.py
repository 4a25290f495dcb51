"""Reading whole lists: page-number paging and parallel id-keyset paging.

Both yield pages (lists of records; `LazyRecords`, decoded by whoever uses them, unless the
config's `lazy_pages` is off) as they arrive, not in order, through a bounded queue, so a
slow consumer holds back the readers and memory stays at a few pages.

Page-number paging reads page 0, learns `totalPages` and the size the server really used (it
clamps silently), then fetches the remaining pages concurrently. Without totals it walks pages in
order until `last`, an empty page or a short page.

Keyset paging (`filter=id>x`, `sort=id,asc`, always page 0) never skips or repeats a record that
exists for the whole read, whatever is inserted or deleted meanwhile. To read in parallel with
few wasted requests:

1. page 0 ascending gives the low end and `totalElements`; one descending page gives the high end
   (both are full pages of data, not probes);
2. the id space between them is cut into ranges (as many as the concurrency cap, each expected
   to hold at least two pages) and every range is walked by its own keyset chain;
3. a chain stops as soon as fewer than one page is left in its range (the filtered
   `totalElements` says so) and leaves that remainder;
4. remainders are packed together, several ranges per request: `id>a`, `id<d` and `id<b||id>c`
   select the union of (a, b) and (c, d), so the partial pages of all ranges cost about one
   request in total rather than one each.

So a large list costs about ceil(total/size) + 1 requests, while up to `limit` requests run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any, Protocol

from service.errors import BadRequest, ServiceError
from service.lazy import LazyRecords
from service.page import Page, Record
from service.ranges import Gap, Packer, pack_gaps, split_range, union_filters
from service.stats import endpoint_template
from service.streams import Emit, Spawn, stream

log = logging.getLogger("service.paging")

# A list that ends with less than this share of the count its first page gave was cut off.
TRUNCATED_SHARE = 0.5


class FetchPage(Protocol):
    """How paging reads one page (the client's `get_page`)."""

    def __call__(
        self,
        path: str,
        *,
        params: Mapping[str, Any],
        template: str,
        lazy: bool = ...,
        key: str | None = ...,
    ) -> Awaitable[Page]: ...


QUEUE_PAGES_PER_SLOT = 2  # pages buffered per concurrency slot before readers wait


def _base(params: Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    base = dict(params or {})
    raw = base.pop("filter", None)
    if raw is None:
        filters: list[str] = []
    elif isinstance(raw, str):
        filters = [raw]
    else:
        filters = [str(f) for f in raw]
    for key in ("page", "size", "sort"):
        base.pop(key, None)
    return base, filters


def iter_pages(
    fetch: FetchPage,
    path: str,
    *,
    page_size: int,
    parallel: int,
    lazy: bool = True,
    params: Mapping[str, Any] | None = None,
    template: str | None = None,
    size: int | None = None,
    sort: str | None = None,
) -> AsyncIterator[Sequence[Record]]:
    """Every record of a paged list by page number (not churn-safe; use keyset for big lists).

    `fetch` reads one page; `parallel` pages are read at once (the client's concurrency)."""
    template = template or endpoint_template(path)
    asked = size or page_size
    base = dict(params or {})
    if sort is not None:
        base["sort"] = sort

    def query(page: int, size_: int) -> dict[str, Any]:
        return {**base, "page": page, "size": size_}

    async def run(emit: Emit, spawn: Spawn) -> None:
        first = await fetch(path, params=query(0, asked), template=template, lazy=lazy)
        told.append(first.total_elements)
        await emit(first.content)
        size_ = first.effective_size(asked)
        if first.ends_list(size_):
            return
        if first.total_pages is None:
            await _sequential(emit, 1, size_, first.signature())
            return
        window = asyncio.Semaphore(parallel * QUEUE_PAGES_PER_SLOT)
        last_page: dict[int, Page] = {}

        async def read(number: int) -> None:
            async with window:
                page = await fetch(path, params=query(number, size_), template=template, lazy=lazy)
                if number == first.total_pages - 1:
                    last_page[number] = page
                await emit(page.content)

        async with asyncio.TaskGroup() as group:
            for number in range(1, first.total_pages):
                group.create_task(read(number))
        # The data decides where the list ends: a last page (by the total) that is full means
        # the list grew, or the total was wrong; either way reading goes on in order.
        tail = first if first.total_pages <= 1 else last_page.get(first.total_pages - 1)
        if tail is not None and not tail.ends_list(size_):
            # The list grew while we read it: continue in order from where the total ended.
            await _sequential(emit, max(first.total_pages, 1), size_)

    async def _sequential(
        emit: Emit, start: int, size_: int, before: tuple[int, bytes] | None = None
    ) -> None:
        number = start
        while True:
            page = await fetch(path, params=query(number, size_), template=template, lazy=lazy)
            if page.content and page.signature() == before:
                # The service ignores the page number (it sent the same page again): what it
                # sent is all it has; reading on would repeat it without end.
                log.warning(
                    "%s: page %d repeats page %d; the list ends there", template, number, number - 1
                )
                return
            await emit(page.content)
            if page.ends_list(size_):
                return
            before = page.signature()
            number += 1

    told: list[int | None] = []
    return _cross_checked(stream(run, maxsize=parallel * QUEUE_PAGES_PER_SLOT), template, told)


def iter_keyset(
    fetch: FetchPage,
    path: str,
    id_field: str,
    *,
    page_size: int,
    parallel: int,
    lazy: bool = True,
    params: Mapping[str, Any] | None = None,
    template: str | None = None,
    after: int | None = None,
    ordered: bool = False,
    size: int | None = None,
) -> AsyncIterator[Sequence[Record]]:
    """Every record with id > `after` by id-keyset paging; parallel unless `ordered`.

    `fetch` reads one page; up to `parallel` id ranges are read at once."""
    template = template or endpoint_template(path)
    asked = size or page_size
    base, base_filters = _base(params)

    def query(filters: list[str], direction: str, size_: int) -> dict[str, Any]:
        return {
            **base,
            "filter": [*base_filters, *filters],
            "sort": f"{id_field},{direction}",
            "page": 0,
            "size": size_,
        }

    def ids_of(records: list[Record] | LazyRecords) -> list[int]:
        # Damaged records (null or non-numeric key) are passed on for quarantine but cannot
        # move the cursor. A lazy page knows its keys without being decoded.
        if isinstance(records, LazyRecords):
            ids = records.key_values
        else:
            ids = [r.get(id_field) for r in records]
        valid = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]
        if not valid:
            raise ServiceError(
                f"{template}: no record of the page has an integer {id_field!r}; keyset "
                "paging needs it",
                endpoint=template,
            )
        return valid

    def advanced(before: int, after: int) -> int:
        """The keyset cursor must move past every id read; a service that ignores the id filter
        would otherwise be asked for the same page without end."""
        if after <= before:
            raise ServiceError(
                f"{template}: asked for {id_field} > {before}, the service answered with "
                f"records up to {id_field} {after}: it does not apply the keyset filter, so "
                "reading would never end; nothing of this list was landed",
                endpoint=template,
            )
        return after

    told: list[int | None] = []

    async def get(filters: list[str], direction: str, size_: int) -> Page:
        return await fetch(
            path,
            params=query(filters, direction, size_),
            template=template,
            lazy=lazy,
            key=id_field,
        )

    async def run(emit: Emit, spawn: Spawn) -> None:
        low_filter = [f"{id_field}>{after}"] if after is not None else []
        first = await get(low_filter, "asc", asked)
        told.append(first.total_elements)
        await emit(first.content)
        size_ = first.effective_size(asked)
        if first.ends_list(size_):
            return
        low = max(ids_of(first.content))
        remaining = (
            None if first.total_elements is None else first.total_elements - len(first.content)
        )
        if ordered or remaining is None or remaining <= size_:
            await chain(emit, Gap(low, _NO_HIGH, remaining or 0), size_, stop_short=False)
            return
        top = await get([f"{id_field}>{low}"], "desc", size_)
        await emit(top.content)
        if top.ends_list(size_):
            return
        high = min(ids_of(top.content))
        if top.total_elements is None:
            await chain(emit, Gap(low, high, 0), size_, stop_short=False)
            return
        gap_count = top.total_elements - len(top.content)
        if gap_count <= 0:
            # The total says nothing lies between the two ends; a service whose totals are
            # wrong would lose those records, so one read checks (an empty page when true).
            await chain(emit, Gap(low, high, 0), size_, stop_short=False)
            return
        parts = min(parallel, gap_count // (2 * size_))
        if parts <= 1:
            await chain(emit, Gap(low, high, gap_count), size_, stop_short=False)
            return
        packer = Packer(size_)

        async def walk(lo: int, hi: int) -> None:
            rest = await chain(emit, Gap(lo, hi, 0), size_, stop_short=True)
            if rest is not None:
                packer.add(rest)
                for group in packer.take_full():
                    spawn(union_chain(emit, group, size_))

        async with asyncio.TaskGroup() as group:
            for lo, hi in split_range(low, high, parts):
                group.create_task(walk(lo, hi))
        for members in pack_gaps(packer.drain(), size_):
            spawn(union_chain(emit, members, size_))

    async def chain(emit: Emit, gap: Gap, size_: int, *, stop_short: bool) -> Gap | None:
        """Walk (gap.low, gap.high) in id order; with stop_short, hand back a sub-page remainder."""
        cursor = gap.low
        while True:
            filters = [f"{id_field}>{cursor}"]
            if gap.high is not _NO_HIGH:
                filters.append(f"{id_field}<{gap.high}")
            page = await get(filters, "asc", size_)
            ended = page.ends_list(size_)
            if not ended:
                cursor = advanced(cursor, max(ids_of(page.content)))
            left = None if page.total_elements is None else page.total_elements - len(page.content)
            await emit(page.content)
            # Not held while the next page is read: the consumer frees it when done with it,
            # so each reader keeps one page less alive.
            del page
            if ended:
                return None
            if left is None or left <= 0:
                # A full page whose total says nothing is left: the data decides (the next
                # page is empty or short when the total was right).
                continue
            if stop_short and left < size_:
                return Gap(cursor, gap.high, left)

    async def union_chain(emit: Emit, gaps: list[Gap], size_: int) -> None:
        gaps = sorted(gaps, key=lambda g: g.low)
        if len(gaps) == 1:
            await chain(emit, gaps[0], size_, stop_short=False)
            return
        try:
            while gaps:
                page = await get(union_filters(id_field, gaps), "asc", size_)
                await emit(page.content)
                if page.ends_list(size_):
                    return
                cursor = advanced(min(g.low for g in gaps), max(ids_of(page.content)))
                gaps = [
                    Gap(max(g.low, cursor), g.high, g.count) for g in gaps if g.high - 1 > cursor
                ]
        except BadRequest:
            # A server without OR chains: read the remainders one by one instead.
            log.info(
                "%s: OR filters refused; reading %d remainders separately", template, len(gaps)
            )
            for g in gaps:
                await chain(emit, g, size_, stop_short=False)

    return _cross_checked(stream(run, maxsize=parallel * QUEUE_PAGES_PER_SLOT), template, told)


_NO_HIGH: Any = None


async def _cross_checked(
    pages: AsyncIterator[Sequence[Record]], template: str, told: list[int | None]
) -> AsyncIterator[Sequence[Record]]:
    """Pass the pages on; at the end, refuse a list whose data stopped far short of its count.

    The data decides where a list ends, but a list that ends with less than `TRUNCATED_SHARE`
    of what the service itself counted on the first page was cut off (a proxy or a service
    that stops sending, pages that come back empty): raising here, before the caller commits,
    lands nothing of it. A count below the data (a wrong total) is not a disagreement.
    """
    read = 0
    try:
        async for page in pages:
            read += len(page)
            yield page
    finally:
        await pages.aclose()  # type: ignore[attr-defined]  # a consumer that stops early
    counted = told[0] if told else None
    if counted is not None and counted > 0 and read < counted * TRUNCATED_SHARE:
        raise ServiceError(
            f"GET {template}: the list ended after {read:,} records while the service counted "
            f"{counted:,} on its first page: its data stopped early (empty or missing pages), "
            "so nothing of this list was landed. Run again; if it repeats, compare the count "
            f"of `GET {template}?size=1` (totalElements) with what the service lists.",
            endpoint=template,
        )

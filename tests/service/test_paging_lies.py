"""Paging trusts the data, not the service's totals.

A service whose `totalElements` / `totalPages` are wrong (equal to the page's own count, capped,
negative, zero) must not make a read stop early: every record comes back exactly once, at the
cost of at most a request or two more than with right totals.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from service.errors import ServiceError
from service.page import Page
from service.paging import iter_keyset, iter_pages

RECORDS = [{"id": i, "name": f"r{i}"} for i in range(1, 1001)]
Lie = Callable[[int, int], int]  # (true total, records on this page) -> total reported

LIES: dict[str, Lie] = {
    "own count": lambda total, n: n,
    "capped at 250": lambda total, n: min(total, 250),
    "negative": lambda total, n: -1,
    "zero": lambda total, n: 0,
    "true": lambda total, n: total,
}


def _keyset_fetch(lie: Lie, calls: list[dict[str, Any]]) -> Any:
    async def fetch(
        path: str,
        *,
        params: Mapping[str, Any],
        template: str,
        lazy: bool = True,
        key: str | None = None,
    ) -> Page:
        calls.append(dict(params))
        records = RECORDS
        for f in params.get("filter", []):
            if m := re.fullmatch(r"id>(\d+)", f):
                records = [r for r in records if r["id"] > int(m[1])]
            elif m := re.fullmatch(r"id<(\d+)", f):
                records = [r for r in records if r["id"] < int(m[1])]
            else:
                raise AssertionError(f"unexpected filter {f}")
        desc = params["sort"].endswith("desc")
        records = sorted(records, key=lambda r: r["id"], reverse=desc)
        size = params["size"]
        content = records[:size]
        return Page(content=content, size=size, total_elements=lie(len(records), len(content)))

    return fetch


def _paged_fetch(lie: Lie, calls: list[dict[str, Any]]) -> Any:
    async def fetch(
        path: str,
        *,
        params: Mapping[str, Any],
        template: str,
        lazy: bool = True,
        key: str | None = None,
    ) -> Page:
        calls.append(dict(params))
        page, size = params["page"], params["size"]
        content = RECORDS[page * size : (page + 1) * size]
        total = lie(len(RECORDS), len(content))
        return Page(
            content=content,
            size=size,
            number=page,
            total_elements=total,
            total_pages=max(total, 0) // size + (1 if max(total, 0) % size else 0),
        )

    return fetch


async def _drain(pages: Any) -> list[int]:
    return [r["id"] async for page in pages for r in page]


@pytest.mark.parametrize("lie", LIES, ids=list(LIES))
@pytest.mark.parametrize("ordered", [False, True])
def test_keyset_reads_every_record_once_whatever_the_totals_say(lie: str, ordered: bool) -> None:
    calls: list[dict[str, Any]] = []
    fetch = _keyset_fetch(LIES[lie], calls)
    pages = iter_keyset(fetch, "/things", "id", page_size=100, parallel=4, ordered=ordered)
    ids = asyncio.run(_drain(pages))
    assert sorted(ids) == [r["id"] for r in RECORDS]
    assert len(ids) == len(set(ids))
    assert len(calls) <= 10 + 6  # ten pages of data; range splits and checks add a few


@pytest.mark.parametrize("lie", LIES, ids=list(LIES))
def test_page_numbers_read_every_record_once_whatever_the_totals_say(lie: str) -> None:
    calls: list[dict[str, Any]] = []
    pages = iter_pages(_paged_fetch(LIES[lie], calls), "/things", page_size=100, parallel=4)
    ids = asyncio.run(_drain(pages))
    assert sorted(ids) == [r["id"] for r in RECORDS]
    assert len(ids) == len(set(ids))


def test_a_service_that_ignores_the_keyset_filter_is_refused_not_read_forever() -> None:
    calls: list[dict[str, Any]] = []

    async def fetch(
        path: str, *, params: Mapping[str, Any], template: str, lazy: bool = True, key: Any = None
    ) -> Page:
        calls.append(dict(params))  # every answer is the first page, whatever the filter
        return Page(content=RECORDS[:100], size=100, total_elements=len(RECORDS))

    pages = iter_keyset(fetch, "/things", "id", page_size=100, parallel=4, ordered=True)
    with pytest.raises(ServiceError, match="does not apply the keyset filter"):
        asyncio.run(_drain(pages))
    assert len(calls) <= 3


@pytest.mark.parametrize("count", [1000, 1500], ids=["exactly-a-page", "more-than-asked"])
def test_a_bare_array_that_ignores_the_page_number_is_read_once(count: int) -> None:
    """No envelope and no paging: every page is the whole list. It is read once, not forever."""
    calls: list[dict[str, Any]] = []

    async def fetch(path: str, *, params: Mapping[str, Any], template: str, **_: Any) -> Page:
        calls.append(dict(params))
        return Page.from_body(
            [dict(r) for r in RECORDS[:count]]
            if count <= 1000
            else [{"id": i} for i in range(1, count + 1)]
        )

    got = asyncio.run(_drain(iter_pages(fetch, "/x", page_size=1000, parallel=4)))
    assert sorted(got) == list(range(1, count + 1))
    assert len(calls) == 2  # the page, and the repeat that shows it was all


def test_a_full_page_marked_last_is_read_on_when_the_total_says_more() -> None:
    calls: list[dict[str, Any]] = []

    async def fetch(path: str, *, params: Mapping[str, Any], template: str, **_: Any) -> Page:
        calls.append(dict(params))
        page, size = params["page"], params["size"]
        content = RECORDS[page * size : (page + 1) * size]
        return Page(content=content, size=size, number=page, total_elements=len(RECORDS), last=True)

    got = asyncio.run(_drain(iter_pages(fetch, "/x", page_size=100, parallel=4)))
    assert sorted(got) == [r["id"] for r in RECORDS]


@pytest.mark.parametrize("keyset", [False, True], ids=["pages", "keyset"])
def test_a_list_cut_far_short_of_its_own_count_is_refused(keyset: bool) -> None:
    """The data stops after one page while the service counted 1,000: refused at the end of the
    read (before anything is committed), not taken for the whole list."""

    async def fetch(path: str, *, params: Mapping[str, Any], template: str, **_: Any) -> Page:
        first = params.get("page", 0) == 0 and not any(">" in f for f in params.get("filter", []))
        content = RECORDS[:100] if first else []
        return Page(
            content=content,
            size=100,
            number=0,
            total_elements=len(RECORDS),
            total_pages=10 if not keyset else None,
        )

    pages = (
        iter_keyset(fetch, "/x", "id", page_size=100, parallel=4)
        if keyset
        else iter_pages(fetch, "/x", page_size=100, parallel=4)
    )
    with pytest.raises(ServiceError, match="ended after 100 records"):
        asyncio.run(_drain(pages))

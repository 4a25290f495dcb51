"""Pages skimmed on arrival and decoded where they are used (service/lazy.py)."""

from __future__ import annotations

import pickle
from typing import Any

import httpx
import orjson
import pytest

from service.errors import ServiceError
from service.lazy import LazyRecords, skim
from service.page import Page
from service.sync import run
from tests.service.fakes import FakeService, fail_times, records
from tests.service.helpers import client_for

BODIES: list[Any] = [
    {"content": [{"unitId": 1, "n": {"a": [1, "é"]}}, {"unitId": 2}], "totalElements": 2},
    {
        "content": [{"unitId": 5}, {"unitId": None}, {"unitId": "7"}, {"other": 1}],
        "size": 4,
        "number": 0,
        "totalElements": 9,
        "totalPages": 3,
        "last": False,
        "numberOfElements": 4,
    },
    {"content": [], "last": True, "totalElements": None, "size": "x"},
    {"size": 10},  # no content at all
    [{"unitId": 3}, {"unitId": 4}],  # a bare array
]


@pytest.mark.parametrize("body", BODIES)
def test_a_skimmed_page_is_the_page_the_eager_decode_gives(body: Any) -> None:
    data = orjson.dumps(body)
    skimmed = skim(data, "unitId", "/units")
    assert skimmed is not None
    lazy, eager = Page.from_body(skimmed), Page.from_body(orjson.loads(data))
    assert isinstance(lazy.content, LazyRecords)
    assert lazy.content._records is None  # nothing decoded yet
    assert len(lazy.content) == len(eager.content)
    assert lazy.content.key_values == [r.get("unitId") for r in eager.content]
    assert (lazy.size, lazy.number, lazy.total_elements, lazy.total_pages, lazy.last) == (
        eager.size,
        eager.number,
        eager.total_elements,
        eager.total_pages,
        eager.last,
    )
    assert list(lazy.content) == eager.content
    assert lazy.content == eager.content


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b'{"content": [{"unitId": 1}, {"un', id="truncated"),
        pytest.param(b'{"content": null}', id="null-content"),
        pytest.param(b'{"content": [null, {"unitId": 1}]}', id="record-not-an-object"),
        pytest.param(b'{"content": 5}', id="content-not-a-list"),
        pytest.param(b'{"content": [{"unitId": 1, "x": tru}]}', id="malformed"),
        pytest.param(b'"just a string"', id="not-a-page"),
        pytest.param(b'{"content": [{"unitId": 1}], "numberOfElements": 2}', id="count-mismatch"),
    ],
)
def test_what_the_skim_cannot_read_goes_to_the_eager_path(data: bytes) -> None:
    assert skim(data, "unitId", "/units") is None


def test_a_page_the_skim_accepts_but_json_refuses_fails_clearly_when_decoded() -> None:
    # msgspec skips the invalid UTF-8 inside a string it does not read; orjson refuses it.
    data = b'{"content": [{"unitId": 1, "name": "\xff\xfe"}]}'
    skimmed = skim(data, "unitId", "/units")
    assert skimmed is not None
    page = Page.from_body(skimmed).content
    assert isinstance(page, LazyRecords) and page.key_values == [1]
    with pytest.raises(ServiceError, match="GET /units: a page that arrived whole is not valid"):
        page.records()


def test_an_undecoded_page_pickles_as_its_bytes() -> None:
    data = orjson.dumps({"content": records("unitId", [1, 2, 3])})
    skimmed = skim(data, "unitId", "/units")
    assert skimmed is not None
    page = Page.from_body(skimmed).content
    assert isinstance(page, LazyRecords)
    copy = pickle.loads(pickle.dumps(page))
    assert isinstance(copy, LazyRecords) and copy._records is None
    assert copy.nbytes == len(data) and copy.key_values == [1, 2, 3]
    assert copy.records() == records("unitId", [1, 2, 3])
    # once decoded, a page travels as the plain list it now is (its bytes are gone)
    assert page.records() and page._body is None
    assert type(pickle.loads(pickle.dumps(page))) is list
    assert page[1] == {"unitId": 2, "name": "n2"} and page[1:] == records("unitId", [2, 3])


@pytest.mark.parametrize("lazy", [True, False])
def test_keyset_paging_reads_the_same_records_lazy_or_not(
    fake: FakeService, limiter, lazy: bool
) -> None:
    rows = records("unitId", list(range(1, 96)))
    fake.add_list("/units", "unitId", rows)

    async def main() -> list[Any]:
        async with client_for(fake, limiter, lazy_pages=lazy) as client:
            return [page async for page in client.iter_keyset("/units", "unitId")]

    pages = run(main())
    assert all(isinstance(p, LazyRecords) is lazy for p in pages)
    assert sorted((r for page in pages for r in page), key=lambda r: r["unitId"]) == rows
    assert fake.paths["/units"] == 10  # ceil(95 / 10): no request more than the minimum


def test_a_lazy_page_whose_count_disagrees_with_its_envelope_is_retried(
    fake: FakeService, limiter
) -> None:
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 31))))
    lying = orjson.dumps({"content": [{"unitId": 1}], "numberOfElements": 2})
    fake.scripts.append(fail_times(1, lambda r: httpx.Response(200, content=lying), "/units"))

    async def main() -> tuple[list[Any], dict[str, Any]]:
        async with client_for(fake, limiter) as client:
            pages = [page async for page in client.iter_keyset("/units", "unitId")]
            return pages, client.stats_snapshot()

    pages, stats = run(main())
    assert sorted(r["unitId"] for page in pages for r in page) == list(range(1, 31))
    assert any("envelope" in reason for reason in stats["retries_by_reason"])

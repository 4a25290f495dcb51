from __future__ import annotations

import math
import random
from collections import Counter

import httpx
import pytest

from service.page import Page
from service.ranges import Gap, pack_gaps, split_range, union_filters
from service.sync import run
from tests.service.fakes import FakeService, records
from tests.service.helpers import client_for, drain, service_for


def ids(rows: list[dict], field: str) -> list[int]:
    return [r[field] for r in rows]


@pytest.mark.parametrize(
    ("body", "status", "expected"),
    [
        pytest.param(
            None, 204, Page(content=[], last=True, total_elements=0, total_pages=0), id="204"
        ),
        pytest.param([{"a": 1}], 200, Page(content=[{"a": 1}]), id="bare-array"),
        pytest.param(
            {"content": [], "size": 5, "totalElements": None, "last": None},
            200,
            Page(content=[], size=5),
            id="null-totals",
        ),
    ],
)
def test_page_from_body(body, status, expected) -> None:
    assert Page.from_body(body, status) == expected


def test_offset_paging_reads_page_zero_then_the_rest(fake: FakeService, limiter) -> None:
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 96))))

    async def main() -> list[dict]:
        async with client_for(fake, limiter) as client:
            return await drain(client.iter_pages("/units"))

    rows = run(main())
    assert sorted(ids(rows, "unitId")) == list(range(1, 96))
    assert fake.paths["/units"] == 10  # ceil(95 / 10), no extra request


def test_offset_paging_uses_the_clamped_size(fake: FakeService, limiter) -> None:
    fake.max_size = 7
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 51))))

    async def main() -> list[dict]:
        async with client_for(fake, limiter, page_size=1000) as client:
            return await drain(client.iter_pages("/units"))

    rows = run(main())
    assert sorted(ids(rows, "unitId")) == list(range(1, 51))
    assert fake.paths["/units"] == math.ceil(50 / 7)
    assert {r.url.params["size"] for r in fake.requests if "units" in r.url.path} == {"1000", "7"}


def test_offset_paging_without_totals_goes_until_a_short_page(fake: FakeService, limiter) -> None:
    fake.null_totals = True
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 36))))

    async def main() -> list[dict]:
        async with client_for(fake, limiter) as client:
            return await drain(client.iter_pages("/units"))

    rows = run(main())
    assert sorted(ids(rows, "unitId")) == list(range(1, 36))
    assert fake.paths["/units"] == 4


@pytest.mark.parametrize("null_totals", [False, True], ids=["totals", "null-totals"])
def test_empty_list_answered_with_204(fake: FakeService, limiter, null_totals: bool) -> None:
    fake.null_totals = null_totals
    fake.add_list("/reservations", "reservationId", [])

    async def main() -> tuple[list, list]:
        async with client_for(fake, limiter) as client:
            return (
                await drain(client.iter_pages("/reservations")),
                await drain(client.iter_keyset("/reservations", "reservationId")),
            )

    assert run(main()) == ([], [])
    assert fake.paths["/reservations"] == 2


@pytest.mark.parametrize(
    ("n", "size", "max_size"),
    [
        pytest.param(1, 10, 1000, id="one"),
        pytest.param(10, 10, 1000, id="exactly-one-page"),
        pytest.param(20, 10, 1000, id="two-pages"),
        pytest.param(35, 10, 1000, id="few-pages"),
        pytest.param(2000, 20, 1000, id="many-pages"),
        pytest.param(1200, 50, 13, id="clamped"),
    ],
)
def test_keyset_reads_everything_once_near_the_minimum(
    fake: FakeService, limiter, n: int, size: int, max_size: int
) -> None:
    rng = random.Random(n)
    keys = sorted(rng.sample(range(1, n * 3), n))  # gaps in the id space
    fake.max_size = max_size
    fake.add_list("/customers", "customerId", records("customerId", keys))

    async def main() -> list[dict]:
        async with client_for(fake, limiter, page_size=size) as client:
            return await drain(client.iter_keyset("/customers", "customerId"))

    rows = run(main())
    got = ids(rows, "customerId")
    assert Counter(got).most_common(1)[0][1] == 1
    assert sorted(got) == keys
    minimum = math.ceil(n / min(size, max_size))
    assert fake.paths["/customers"] <= max(minimum + 2, math.ceil(minimum * 1.02))
    filters = [r.url.params.get_list("filter") for r in fake.data_requests("/customers")]
    if n > 8 * min(size, max_size) * 2:
        assert any(any("||" in f for f in fs) for fs in filters), "remainders were packed"


def test_keyset_with_churn_reads_stable_records_exactly_once(fake: FakeService, limiter) -> None:
    rng = random.Random(3)
    data = records("reservationId", list(range(1, 1501)))
    fake.add_list("/reservations/details", "reservationId", data)
    stable = {r["reservationId"] for r in data}
    next_id = [1501]

    def churn(path: str) -> None:
        # Each page request inserts a record and deletes one: offset paging would drift.
        data.append({"reservationId": next_id[0], "name": "new"})
        next_id[0] += 1
        victim = data.pop(rng.randrange(len(data) - 1))
        stable.discard(victim["reservationId"])

    fake.before_page = churn

    async def main() -> list[dict]:
        async with service_for(fake, limiter, page_size=25) as service:
            return await drain(service.reservation_details())

    got = ids(run(main()), "reservationId")
    counts = Counter(got)
    assert max(counts.values()) == 1, "no record read twice"
    assert stable <= set(counts), "every record that existed throughout was read"


def test_keyset_falls_back_when_or_filters_are_refused(fake: FakeService, limiter) -> None:
    fake.add_list("/customers", "customerId", records("customerId", list(range(1, 1001))))

    def no_or(request: httpx.Request) -> httpx.Response | None:
        if any("||" in f for f in request.url.params.get_list("filter")):
            return httpx.Response(400, json={"message": "OR not supported"})
        return None

    fake.scripts.append(no_or)

    async def main() -> list[dict]:
        async with client_for(fake, limiter, page_size=15) as client:
            return await drain(client.iter_keyset("/customers", "customerId"))

    got = ids(run(main()), "customerId")
    assert sorted(got) == list(range(1, 1001))


def test_events_are_read_in_order_after_the_cursor(fake: FakeService, limiter) -> None:
    fake.add_list("/events", "eventId", records("eventId", list(range(1, 58))))

    async def main() -> tuple[list[int], int | None]:
        async with service_for(fake, limiter) as service:
            got = [r["eventId"] for r in await drain(service.events(after_event_id=20))]
            return got, await service.latest_event_id()

    got, latest = run(main())
    assert got == list(range(21, 58))
    assert latest == 57


def test_get_by_ids_batches_keep_urls_short(fake: FakeService, limiter) -> None:
    fake.add_list("/customers", "customerId", records("customerId", list(range(1, 5001))))
    wanted = list(range(1000, 4000, 2))

    async def main() -> list[dict]:
        async with service_for(fake, limiter, page_size=1000, max_url_length=600) as service:
            return await drain(service.customers(ids=wanted))

    got = ids(run(main()), "customerId")
    assert sorted(got) == wanted
    data = fake.data_requests("/customers")
    assert len(data) > 1
    assert all(len(str(r.url)) <= 600 for r in data)


def test_reservation_ids_are_batched_in_the_reservation_ids_param(fake, limiter) -> None:
    fake.add_list(
        "/reservations/details", "reservationId", records("reservationId", list(range(1, 400)))
    )

    def by_param(request: httpx.Request) -> httpx.Response | None:
        wanted = request.url.params.get("reservationIds")
        if wanted is None or not request.url.path.endswith("/details"):
            return None
        keep = {int(x) for x in wanted.split(",")}
        rows = [r for r in records("reservationId", sorted(keep)) if r["reservationId"] < 400]
        return httpx.Response(
            200,
            json={
                "content": rows,
                "size": 1000,
                "number": 0,
                "numberOfElements": len(rows),
                "totalElements": len(rows),
                "totalPages": 1,
                "last": True,
            },
        )

    fake.scripts.append(by_param)

    async def main() -> list[dict]:
        async with service_for(fake, limiter, page_size=1000, max_url_length=400) as service:
            return await drain(service.reservation_details(ids=range(1, 300)))

    got = ids(run(main()), "reservationId")
    assert sorted(got) == list(range(1, 300))
    assert all(len(str(r.url)) <= 400 for r in fake.requests)


@pytest.mark.parametrize(
    ("low", "high", "parts"),
    [(0, 101, 4), (10, 12, 5), (5, 1000, 15), (0, 2, 3)],
)
def test_split_range_covers_each_id_once(low: int, high: int, parts: int) -> None:
    pieces = split_range(low, high, parts)
    covered = [i for a, b in pieces for i in range(a + 1, b)]
    assert covered == list(range(low + 1, high))


def test_union_filters_select_exactly_the_gaps() -> None:
    gaps = [Gap(50, 60, 3), Gap(10, 20, 5), Gap(80, 90, 1)]
    terms = union_filters("id", gaps)
    assert terms == ["id>10", "id<90", "id<20||id>50", "id<60||id>80"]

    def selected(i: int) -> bool:
        return i > 10 and i < 90 and (i < 20 or i > 50) and (i < 60 or i > 80)

    assert [i for i in range(100) if selected(i)] == [
        *range(11, 20),
        *range(51, 60),
        *range(81, 90),
    ]


def test_pack_gaps_fills_pages() -> None:
    gaps = [Gap(i * 10, i * 10 + 5, c) for i, c in enumerate([6, 5, 4, 3, 2])]
    groups = pack_gaps(gaps, 10)
    assert all(sum(g.count for g in grp) <= 10 for grp in groups)
    assert len(groups) == 2

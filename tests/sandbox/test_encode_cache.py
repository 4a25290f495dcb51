"""Pre-encoded responses (sandbox/encode.py): byte-identical to encoding the page at once, and
never stale: a record changed by the world (advance, update, payment) is served fresh."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from sandbox.encode import RecordCache, page_bytes
from sandbox.filters import Condition, SortOrder, build_predicate
from sandbox.query import envelope, plan_keys, select, select_keyed
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from tests.sandbox.conftest import authenticate, generated_world_class

SECTIONS = (
    ("reservedResources", "reservedresources", None),
    ("customerBill", "billlines", "CUSTOMER"),
    ("payingCustomerBill", "billlines", "PAYING_CUSTOMER"),
    ("agentBill", "billlines", "AGENT"),
    ("subjects", "subjects", None),
)


# -- pure functions ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 3])
@pytest.mark.parametrize("orders", [(), (SortOrder("id"), SortOrder("name", descending=True))])
def test_page_bytes_equal_encoding_the_envelope(n: int, orders: tuple[SortOrder, ...]) -> None:
    records = [{"id": i, "name": f"n{i}", "x": None, "v": 1.5, "tags": [i]} for i in range(n)]
    for page, total in ((0, n), (2, 95), (9, 95)):
        expected = orjson.dumps(envelope(records, page=page, size=10, total=total, orders=orders))
        got = page_bytes(
            [orjson.dumps(r) for r in records], page=page, size=10, total=total, orders=orders
        )
        assert got == expected


class _Gen:
    def __init__(self) -> None:
        self.generation = 0


def test_cache_is_cleared_when_the_generation_moves() -> None:
    world, cache = _Gen(), RecordCache()
    record = {"id": 1, "v": "old"}
    assert cache.sync(world)
    assert cache.encode_all("c", [record], "id", orjson.dumps, enabled=True) == [
        b'{"id":1,"v":"old"}'
    ]
    record["v"] = "new"  # changed in place, as the world does
    assert cache.encode_all("c", [record], "id", orjson.dumps, enabled=True) == [
        b'{"id":1,"v":"old"}'
    ]
    world.generation += 1
    assert cache.sync(world)
    assert cache.encode_all("c", [record], "id", orjson.dumps, enabled=True) == [
        b'{"id":1,"v":"new"}'
    ]


def test_cache_off_without_generation_or_budget() -> None:
    assert not RecordCache().sync(object())
    assert not RecordCache(0).sync(_Gen())
    small = RecordCache(max_bytes=10)
    assert small.sync(_Gen())
    small.encode_all("c", [{"id": 1, "v": "a long value"}], "id", orjson.dumps, enabled=True)
    assert small.entries == {} and small.nbytes == 0


def test_a_full_cache_drops_its_oldest_batches() -> None:
    records = [{"id": i, "v": "x" * 90} for i in range(60)]
    size = len(orjson.dumps(records[0]))
    cache = RecordCache(max_bytes=10 * size)
    assert cache.sync(_Gen())
    for start in range(0, 60, 4):  # pages of 4 records
        page = records[start : start + 4]
        got = cache.encode_all("c", page, "id", orjson.dumps, enabled=True)
        assert got == [orjson.dumps(r) for r in page]
        assert cache.nbytes <= cache.max_bytes
        assert cache.nbytes == sum(map(len, cache.entries["c"].values()))
        assert set(cache.entries["c"]) >= {r["id"] for r in page}
    assert set(cache.entries["c"]) == set(range(52, 60))  # the last two pages
    assert cache.describe()["evicted"] == 52
    # a batch larger than the whole budget is served, not kept
    big = [{"id": 100 + i, "v": "x" * 90} for i in range(11)]
    assert cache.encode_all("d", big, "id", orjson.dumps, enabled=True) == list(
        map(orjson.dumps, big)
    )
    assert "d" not in cache.entries and set(cache.entries["c"]) == set(range(52, 60))


def test_a_large_batch_drops_as_many_small_ones_as_it_needs() -> None:
    cache = RecordCache(max_bytes=200)
    assert cache.sync(_Gen())
    small = [{"id": i, "v": "x"} for i in range(8)]  # 16 bytes each, a batch of 2 a page
    for start in range(0, 8, 2):
        cache.encode_all("c", small[start : start + 2], "id", orjson.dumps, enabled=True)
    held = cache.nbytes
    assert len(cache.batches) == 4 and held == 128
    big = [{"id": 100, "v": "y" * 133}]  # 150 bytes: the oldest batches go until it fits
    cache.encode_all("c", big, "id", orjson.dumps, enabled=True)
    assert cache.nbytes == 32 + 150
    assert cache.nbytes == sum(map(len, cache.entries["c"].values()))
    assert sorted(cache.entries["c"]) == [6, 7, 100]
    assert cache.describe()["evicted"] == 6


def test_keyset_unions_match_a_scan() -> None:
    rng = random.Random(3)
    keys = sorted(rng.sample(range(1, 5000), 700))
    records = [{"id": k} for k in keys]
    types = {"id": "int"}
    for _ in range(300):
        cuts = sorted(rng.sample(range(0, 5100), 4))
        ops = [rng.choice([">", ">:"]), rng.choice(["<", "<:"])]
        filters = [
            [Condition("id", ops[0], cuts[0])],
            [Condition("id", ops[1], cuts[3])],
            [
                Condition("id", rng.choice(["<", "<:"]), cuts[1]),
                Condition("id", rng.choice([">", ">:"]), cuts[2]),
            ],
        ]
        orders = rng.choice([(), (SortOrder("id"),), (SortOrder("id", descending=True),)])
        page = rng.randrange(3)
        plan = plan_keys(filters, "id")
        assert plan.unions and not plan.rest
        got = select_keyed(
            keys, records, plan, build_predicate(plan.rest, types), orders, "id", page, 50
        )
        want = select(records, build_predicate(filters, types), orders, page, 50)
        assert (got.content, got.total) == (want.content, want.total)


# -- over HTTP, a generated world -----------------------------------------------------------------


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxHandle]:
    world_class = generated_world_class()
    with run_sandbox(SandboxSettings(seed=11, scale="small"), world=world_class(seed=11)) as sb:
        yield sb


@pytest.fixture(scope="module")
def client(sandbox: SandboxHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox.base_url, timeout=30) as c:
        c.headers["Authorization"] = authenticate(sandbox, c)
        yield c


def expected_details(world: Any, rid: int) -> dict[str, Any]:
    """The details record built the straightforward way from the world's current state."""
    with world.lock:
        out = dict(world.get("reservations", rid))
        for name, collection, payer in SECTIONS:
            children = world.children(collection, rid)
            out[name] = [c for c in children if payer is None or c["payerType"] == payer]
        return orjson.loads(orjson.dumps(out))


def details_page(client: httpx.Client, *filters: str) -> httpx.Response:
    response = client.get(
        "/reservations/details",
        params={"filter": list(filters), "sort": "reservationId,asc", "size": 50},
    )
    assert response.status_code == 200
    return response


def test_pages_are_canonical_and_served_from_cache(
    client: httpx.Client, sandbox: SandboxHandle
) -> None:
    cache = sandbox.app.state.service.cache
    first = details_page(client)
    hits = cache.hits
    second = details_page(client)
    assert cache.hits >= hits + 50
    assert first.content == second.content
    body = orjson.loads(first.content)
    assert orjson.dumps(body) == first.content  # what encoding the whole page gives
    world = sandbox.world
    for record in body["content"]:
        assert record == expected_details(world, record["reservationId"])
    for path in ("/customers", "/units", "/events", "/companies/journalreports"):
        response = client.get(path, params={"size": 40})
        assert orjson.dumps(orjson.loads(response.content)) == response.content


def test_update_is_served_fresh(client: httpx.Client, sandbox: SandboxHandle) -> None:
    world = sandbox.world
    rid = orjson.loads(details_page(client).content)["content"][3]["reservationId"]
    before = client.get(f"/reservations/{rid}/details").json()
    assert before == expected_details(world, rid)
    generation = world.generation
    response = client.put(
        f"/reservations/{rid}", json={"expectedArrivalDateTime": "2031-05-06T15:30:00"}
    )
    assert response.status_code == 200, response.text
    assert world.generation > generation
    after = client.get(f"/reservations/{rid}/details").json()
    assert after["expectedArrivalDateTime"].startswith("2031-05-06T15:30:00")
    assert after == expected_details(world, rid)
    listed = [
        r
        for r in orjson.loads(details_page(client).content)["content"]
        if r["reservationId"] == rid
    ]
    assert listed == [after]
    plain = client.get("/reservations", params={"filter": f"reservationId:{rid}"}).json()
    assert plain["content"][0]["expectedArrivalDateTime"] == after["expectedArrivalDateTime"]


def test_advance_and_payment_are_served_fresh(client: httpx.Client, sandbox: SandboxHandle) -> None:
    world = sandbox.world
    details_page(client)  # warm
    response = httpx.post(sandbox.admin_url + "/advance", params={"hours": 24 * 20})
    assert response.status_code == 200
    for record in orjson.loads(details_page(client).content)["content"]:
        assert record == expected_details(world, record["reservationId"])
    # a payment adds bill lines (billing changes without a status move)
    payable = orjson.loads(details_page(client, "status:[12,21,31]").content)["content"]
    for rid in [r["reservationId"] for r in payable]:
        details_page(client, "status:[12,21,31]")  # warm the cache again
        before = client.get(f"/reservations/{rid}/details").json()
        try:
            world.pay(rid)
        except Exception:  # nothing to pay on this one
            continue
        after = client.get(f"/reservations/{rid}/details").json()
        assert after == expected_details(world, rid)
        if after != before:
            break
    else:
        pytest.skip("no reservation of the page could take a payment")


def test_warm_cache_serves_the_first_read_from_bytes(
    client: httpx.Client, sandbox: SandboxHandle
) -> None:
    service = sandbox.app.state.service
    assert service.warm_cache() > 0
    misses = service.cache.misses
    body = orjson.loads(details_page(client, "reservationId>0").content)
    customers = client.get("/customers", params={"size": 100})
    assert service.cache.misses == misses
    for record in body["content"]:
        assert record == expected_details(sandbox.world, record["reservationId"])
    assert orjson.dumps(orjson.loads(customers.content)) == customers.content

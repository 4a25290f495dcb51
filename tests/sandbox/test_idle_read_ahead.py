"""Reading ahead while the page thread is idle (sandbox/readahead.py): the next records of a
keyset scan are encoded into the cache in chunks, up to the low water mark ahead of the last
page served, never past the scan's end, and forgotten when the world moves; over HTTP the pages
are the same bytes with it and without it, and the next page of a scan is cached before it is
asked for."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import orjson
import pytest

from sandbox.encode import RecordCache
from sandbox.filters import Condition, SortOrder
from sandbox.query import plan_keys, select_keyed
from sandbox.readahead import IdleReadAhead
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from sandbox.world import World
from tests.sandbox.conftest import authenticate


class _Rows(list):  # type: ignore[type-arg]
    """Records rendered on demand, as the world's frozen blocks are (`take`)."""

    def take(self, positions: list[int]) -> list[dict[str, Any]]:
        return [self[i] for i in positions]


class _Gen:
    def __init__(self) -> None:
        self.generation = 0


def _encode_many(records: Any) -> list[bytes]:
    return [orjson.dumps(record) for record in records]


def _scan_page(records: _Rows, op: str, key: int, page: int, *, descending: bool = False) -> Any:
    keys = [r["id"] for r in records]
    plan = plan_keys([[Condition("id", op, key)]], "id")
    orders = [SortOrder("id", descending=descending)]
    return select_keyed(keys, records, plan, None, orders, "id", page, 100).content


def _served(cache: RecordCache, page: Any) -> None:
    got = cache.encode_all("c", page, "id", orjson.dumps, enabled=True, encode_many=_encode_many)
    assert got == [orjson.dumps(r) for r in page]


@pytest.mark.parametrize("descending", [False, True])
def test_steps_fill_the_scan_ahead_in_chunks_up_to_the_low_water(descending: bool) -> None:
    records = _Rows({"id": k, "v": f"r{k}"} for k in range(5000))
    cache = RecordCache(read_ahead=100)  # the cold path reads no further than its page
    assert cache.sync(_Gen())
    ahead = IdleReadAhead(cache, low_water=500, chunk=200)
    op, key = ("<", 4000) if descending else (">", 999)
    page = _scan_page(records, op, key, 0, descending=descending)
    _served(cache, page)
    ahead.note("c", page, _encode_many)
    assert ahead.pending()
    steps = 0
    while ahead.step():
        steps += 1
    assert steps == 3 and not ahead.pending()  # 200 + 200 + 200 >= 500
    step = -1 if descending else 1
    first = page.page_keys[-1] + step
    want = set(page.page_keys) | set(range(first, first + 600 * step, step))
    assert set(cache.entries["c"]) == want
    assert all(cache.entries["c"][k] == orjson.dumps(records[k]) for k in want)
    # the next pages come from the cache; after the first, 500 are ahead: nothing to do;
    # after the second, 400: one chunk
    for number, steps in ((1, 0), (2, 1)):
        nxt = _scan_page(records, op, key, number, descending=descending)
        hits = cache.hits
        _served(cache, nxt)
        assert cache.hits == hits + 100
        ahead.note("c", nxt, _encode_many)
        assert [ahead.step() for _ in range(steps + 1)] == [True] * steps + [False]
    assert len(cache.entries["c"]) == 100 + 600 + 200


def test_a_scan_is_read_no_further_than_its_end() -> None:
    records = _Rows({"id": k} for k in range(1000))
    cache = RecordCache(read_ahead=100)
    assert cache.sync(_Gen())
    ahead = IdleReadAhead(cache, low_water=500, chunk=500)
    page = _scan_page(records, "<", 250, 1)  # ids 100..199 of 0..249
    _served(cache, page)
    ahead.note("c", page, _encode_many)
    assert ahead.step() and not ahead.step()
    assert set(cache.entries["c"]) == set(range(100, 250))
    last = _scan_page(records, "<", 250, 2)  # the scan's last page: nothing follows
    _served(cache, last)
    ahead.note("c", last, _encode_many)
    assert not ahead.scans


def test_scans_are_forgotten_when_the_world_moves() -> None:
    records = _Rows({"id": k} for k in range(3000))
    world = _Gen()
    cache = RecordCache(read_ahead=100)
    assert cache.sync(world)
    ahead = IdleReadAhead(cache)
    page = _scan_page(records, ">", -1, 0)
    _served(cache, page)
    ahead.note("c", page, _encode_many)
    world.generation += 1
    assert cache.sync(world)
    assert not ahead.step() and not ahead.scans
    assert cache.entries == {}


# -- over HTTP ------------------------------------------------------------------------------------


def _sandbox(idle: bool) -> Any:
    settings = SandboxSettings(seed=3, scale="small", idle_read_ahead=idle)
    return run_sandbox(settings, world=World(seed=3, scale="small"))


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[SandboxHandle, SandboxHandle]]:
    with _sandbox(True) as on, _sandbox(False) as off:
        yield on, off


@contextmanager
def _client(sandbox: SandboxHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox.base_url, timeout=30) as client:
        client.headers["Authorization"] = authenticate(sandbox, client)
        yield client


def _details(client: httpx.Client, page: int) -> httpx.Response:
    response = client.get(
        "/reservations/details",
        params={"filter": "reservationId>0", "sort": "reservationId,asc", "size": 20, "page": page},
    )
    assert response.status_code == 200
    return response


def test_the_next_page_is_cached_before_it_is_asked_and_the_bytes_are_the_same(
    pair: tuple[SandboxHandle, SandboxHandle],
) -> None:
    on, off = pair
    service = on.app.state.service
    service.cache.read_ahead = 20  # a cold page reads no further than itself
    with _client(on) as a, _client(off) as b:
        first = _details(a, 0)
        assert first.content == _details(b, 0).content
        keys = [r["reservationId"] for r in orjson.loads(_details(b, 1).content)["content"]]
        assert len(keys) == 20
        deadline = time.monotonic() + 10
        while service.idle_ahead.records == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert service.idle_ahead.steps >= 1
        with on.world.lock:
            entries = service.cache.entries[next(iter(service.cache.entries))]
            assert all(k in entries for k in keys)
        for page in range(1, 8):
            assert _details(a, page).content == _details(b, page).content
        stats = httpx.get(on.admin_url + "/stats", timeout=30).json()
    assert stats["encodeCache"]["idleReadAhead"]["idleSteps"] >= 1
    assert off.app.state.service.idle_ahead.steps == 0

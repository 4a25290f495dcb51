"""Encode workers (sandbox/server/encode_pool.py): forked copies of the generated world encode
cold batches; served bytes equal those of a sandbox without workers, before and after the world
changes, under concurrent reads; a change while a worker encodes drops its bytes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import orjson
import pytest

from sandbox.query import LazyPage
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from sandbox.server.encode_pool import StalePage
from sandbox.world import World
from tests.sandbox.conftest import authenticate

DETAILS = "reservations/details:RESERVEDRESOURCES,CUSTOMERBILL,PAYINGCUSTOMERBILL,AGENTBILL,SUBJECTS:subjects"


def _walk(client: httpx.Client, path: str, pk: str, size: int, **bounds: Any) -> list[bytes]:
    """A keyset walk as the pipeline's client reads a range (`low` < pk <= `high`)."""
    out, last = [], bounds.get("low")
    while True:
        filters = [f"{pk}<:{bounds['high']}"] if "high" in bounds else []
        if last is not None:
            filters.append(f"{pk}>{last}")
        response = client.get(path, params={"size": size, "sort": f"{pk},asc", "filter": filters})
        out.append(response.content)
        if response.status_code == 204:
            return out
        assert response.status_code == 200, response.text
        content = orjson.loads(response.content)["content"]
        if len(content) < size:
            return out
        last = content[-1][pk]


def _read(handle: SandboxHandle, world: World) -> list[bytes]:
    """Reservation details in four ranges at once, and some plain lists."""
    keys = list(world.keys("reservations"))
    cuts = [keys[0] - 1, *(keys[len(keys) * i // 4] for i in (1, 2, 3)), keys[-1]]
    with httpx.Client(base_url=handle.base_url, timeout=60) as client:
        client.headers["Authorization"] = authenticate(handle, client)
        with ThreadPoolExecutor(4) as pool:
            ranges = pool.map(
                lambda i: _walk(
                    client,
                    "/reservations/details",
                    "reservationId",
                    40,
                    low=cuts[i],
                    high=cuts[i + 1],
                ),
                range(4),
            )
            out = [page for pages in ranges for page in pages]
        for path, pk in (("/customers", "customerId"), ("/events", "eventId")):
            out += _walk(client, path, pk, 500)
        report = world.keys("journalreports")[0]
        out += _walk(client, f"/companies/journalreports/{report}/entries", "journalEntryId", 200)
        out.append(client.get(f"/reservations/{keys[5]}/details").content)
    return out


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[SandboxHandle, SandboxHandle]]:
    """The same world served with two encode workers and without."""
    with (
        run_sandbox(SandboxSettings(seed=5, scale="small", encode_workers=2), World(5)) as pooled,
        run_sandbox(SandboxSettings(seed=5, scale="small"), World(5)) as plain,
    ):
        yield pooled, plain


def test_workers_serve_the_same_bytes_before_and_after_a_change(
    pair: tuple[SandboxHandle, SandboxHandle],
) -> None:
    pooled, plain = pair
    service = pooled.app.state.service
    assert service.encode_pool is not None and len(service.encode_pool.pids) >= 1
    first = _read(pooled, pooled.world)
    assert first == _read(plain, plain.world)
    stats = httpx.get(pooled.admin_url + "/stats").json()["encodeCache"]["pool"]
    report = pooled.world.keys("journalreports")[0]
    entries = len(pooled.world.child_view("journalentries", report))
    assert stats["batches"] > 0 and entries > 0
    assert stats["records"] >= len(pooled.world.keys("reservations")) + entries
    assert stats["retired"] is None
    # a report's journal entries (a parent's children) are encoded by the workers too
    other = pooled.world.keys("journalreports")[1]
    with httpx.Client(base_url=pooled.base_url, timeout=60) as client:
        client.headers["Authorization"] = authenticate(pooled, client)
        path = f"/companies/journalreports/{other}/entries"
        assert _walk(client, path, "journalEntryId", 200)
    done = httpx.get(pooled.admin_url + "/stats").json()["encodeCache"]["pool"]["records"]
    assert done - stats["records"] == len(pooled.world.child_view("journalentries", other)) > 0
    assert _read(pooled, pooled.world) == first  # warm: from the cache
    # the world changes: the workers' copy is old, the server encodes from now on
    for handle in pair:
        assert httpx.post(handle.admin_url + "/advance", params={"hours": 30}).status_code == 200
    after = _read(pooled, pooled.world)
    assert after == _read(plain, plain.world)
    assert after != first
    stats = httpx.get(pooled.admin_url + "/stats").json()["encodeCache"]["pool"]
    assert stats["retired"] == "the world changed"


def test_a_change_while_a_worker_encodes_drops_its_bytes() -> None:
    world = World(seed=3, scale="small")
    with run_sandbox(SandboxSettings(seed=3, scale="small", encode_workers=1), world) as handle:
        pool = handle.app.state.service.encode_pool
        source = world.records("reservations")
        keys = list(world.keys("reservations"))[:1000]
        page = LazyPage(source, list(range(len(keys))), keys)
        with world.lock:
            # a mutation waits for the lock; it gets it while the worker encodes
            waiting = threading.Thread(target=world.advance, args=(5,))
            waiting.start()
            generation = world.generation
            with pytest.raises(StalePage):
                pool.encode(world, DETAILS, "reservations", page)
            assert world.generation > generation
        waiting.join()
        assert pool.describe()["stale"] == 1 and not pool.usable(world)

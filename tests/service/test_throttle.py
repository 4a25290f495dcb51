from __future__ import annotations

import asyncio
import threading

from service.sync import run
from service.throttle import ConcurrencyLimiter, limiter_for, origin_of
from tests.service.fakes import FakeService, records
from tests.service.helpers import client_for, drain


def test_in_flight_never_exceeds_the_cap(fake: FakeService) -> None:
    fake.latency = 0.002
    fake.add_list("/customers", "customerId", records("customerId", list(range(1, 401))))
    limiter = ConcurrencyLimiter(4)

    async def main() -> None:
        async with client_for(fake, limiter, page_size=10) as client:
            await asyncio.gather(
                drain(client.iter_keyset("/customers", "customerId")),
                drain(client.iter_pages("/customers")),
            )

    run(main())
    assert fake.peak_in_flight <= 4
    assert limiter.peak <= 4
    assert limiter.in_flight == 0


def test_one_cap_shared_by_clients_in_several_threads(fake: FakeService) -> None:
    fake.latency = 0.002
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 301))))
    limiter = ConcurrencyLimiter(3)
    errors: list[BaseException] = []

    def worker() -> None:
        async def main() -> None:
            async with client_for(fake, limiter, page_size=10) as client:
                await drain(client.iter_pages("/units"))

        try:
            run(main())
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert limiter.peak <= 3 and limiter.in_flight == 0
    assert fake.peak_in_flight <= 3


def test_cancelled_waiter_gives_its_slot_back() -> None:
    limiter = ConcurrencyLimiter(1)

    async def main() -> None:
        await limiter.acquire()
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        limiter.release()
        await asyncio.gather(waiter, return_exceptions=True)
        async with limiter.slot():
            assert limiter.in_flight == 1

    run(main())
    assert limiter.in_flight == 0


def test_registry_is_keyed_by_origin_and_only_tightens() -> None:
    a = limiter_for("https://svc.example.test/service/v2", 15)
    b = limiter_for("https://SVC.example.test:443/other", 20)
    assert a is b and a.limit == 15
    limiter_for("https://svc.example.test/x", 5)
    assert a.limit == 5
    assert origin_of("http://127.0.0.1:8765/service/v2") == "http://127.0.0.1:8765"

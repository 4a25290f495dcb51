from __future__ import annotations

from pathlib import Path

from service.api import ReservationService
from service.client import ServiceClient
from service.replay import RecordingTransport, ReplayTransport
from service.sync import collect_pages, extract, run
from tests.service.fakes import SECRET, FakeService, make_config, records
from tests.service.helpers import drain


def test_record_then_replay_gives_the_same_pages(
    fake: FakeService, limiter, tmp_path: Path
) -> None:
    fake.add_list("/locations", "locationId", records("locationId", list(range(1, 48))))
    recording = tmp_path / "rec.jsonl"

    async def read(transport) -> list[int]:
        async with ServiceClient(make_config(), transport=transport, limiter=limiter) as client:
            return sorted(
                r["locationId"] for r in await drain(client.iter_keyset("/locations", "locationId"))
            )

    live = run(read(RecordingTransport(fake.transport(), recording)))
    text = recording.read_text()
    assert SECRET not in text and "Bearer" not in text
    replayed = run(read(ReplayTransport(recording)))
    assert live == replayed == list(range(1, 48))


def test_collect_pages_streams_to_a_callback(fake: FakeService, limiter) -> None:
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 95))))
    seen: list[int] = []

    def factory():
        async def pages():
            async with ReservationService(
                ServiceClient(make_config(), transport=fake.transport(), limiter=limiter),
                owns_client=True,
            ) as service:
                async for page in service.units():
                    yield page

        return pages()

    count = collect_pages(factory, on_page=lambda page: seen.append(len(page)))
    assert count == 94 and sum(seen) == 94 and max(seen) <= 10


def test_extract_opens_and_closes_the_service(fake: FakeService, limiter) -> None:
    fake.add_list("/companies", "companyId", records("companyId", [1, 2, 3]))
    rows: list[dict] = []
    result = extract(
        make_config(),
        lambda s: s.companies(),
        on_page=rows.extend,
        transport=fake.transport(),
        limiter=limiter,
    )
    assert result.records == 3 and result.pages == 1
    assert result.stats["by_endpoint"]["/companies"] == 1
    assert [r["companyId"] for r in rows] == [1, 2, 3]

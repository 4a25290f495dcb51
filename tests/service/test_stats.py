from __future__ import annotations

import logging

from service.stats import RequestStats, endpoint_template
from service.sync import run
from tests.service.fakes import FakeService, records
from tests.service.helpers import client_for, drain


def test_counts_per_endpoint_template_and_status(fake: FakeService, limiter) -> None:
    fake.add_list(
        "/companies/journalreports/3/entries",
        "journalEntryId",
        records("journalEntryId", list(range(1, 26))),
    )
    fake.add_list(
        "/companies/journalreports/4/entries", "journalEntryId", records("journalEntryId", [1])
    )

    async def main() -> dict:
        async with client_for(fake, limiter) as client:
            for report in (3, 4):
                await drain(
                    client.iter_keyset(
                        f"/companies/journalreports/{report}/entries", "journalEntryId"
                    )
                )
            return client.stats_snapshot()

    stats = run(main())
    assert stats["by_endpoint"] == {"/authenticate": 1, "/companies/journalreports/{id}/entries": 4}
    assert stats["by_status"] == {"200": 5}
    assert stats["requests"] == 5 and stats["bytes_received"] > 0
    assert stats["projection"]["this_run"] == 5


def test_warns_before_the_free_daily_quota_is_passed(caplog) -> None:
    stats = RequestStats(used_today=22_000, daily_free=25_000)
    with caplog.at_level(logging.WARNING, logger="service.stats"):
        for _ in range(499):
            stats.count_request("/x")
        assert not caplog.records
        stats.count_request("/x")  # 22,500 = 90 %: warn while still inside the free quota
        assert len(caplog.records) == 1
        for _ in range(2600):
            stats.count_request("/x")
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2 and "used up" in messages[1]
    assert stats.projection()["over_free_quota"] is True


def test_endpoint_template() -> None:
    assert endpoint_template("/reservations/123/details?x=1") == "/reservations/{id}/details"
    assert endpoint_template("/accommodationtypes/details") == "/accommodationtypes/details"

"""Channel details against the sandbox over HTTP: `/distributionchannels/details` with the
COMMISSION_ADDONS and CANCELLATION_ADDONS sections (real-service-notes 8.3), the commission rule
the bills follow, DISTRIBUTIONCHANNEL_EVENT under `advance`, and the lake refreshed from those
events equal to a fresh full load."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assets.modes import apply_changes
from assets.plan import plan_changes
from assets.settings import IngestSettings
from lake.store import Lake
from tests.incremental.helpers import _data, sandbox_opener, table_differences
from tests.sandbox.conftest import signed_in

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

CHANNEL_TABLES = (
    "distribution_channels",
    "distribution_channel_commissions",
    "distribution_channel_cancellation_addons",
)


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    from sandbox.runner import SandboxSettings, run_sandbox

    with run_sandbox(SandboxSettings(seed=11, scale="small")) as handle:
        yield handle


def test_details_serve_the_sections_asked(sb: Any) -> None:
    with signed_in(sb) as api:
        both = api.get(
            "/distributionchannels/details",
            params={"returnSections": "COMMISSION_ADDONS,CANCELLATION_ADDONS"},
        ).json()["content"]
        plain = api.get("/distributionchannels").json()["content"]
        only = api.get(
            "/distributionchannels/4/details", params={"returnSections": "COMMISSION_ADDONS"}
        ).json()
        refused = api.get("/distributionchannels/details", params={"returnSections": "NOPE"})
    assert [c["distributionChannelId"] for c in both] == [c["distributionChannelId"] for c in plain]
    assert all(c["cancellationAddons"] for c in both)
    # the commission rule is the one the bills follow: the channel's percentage of the bill
    for c in both:
        pct = sum(a["percentage"] for a in c["commissionAddons"])
        assert pct == c["commissionPercentage"]
    assert "commissionAddons" in only and "cancellationAddons" not in only
    assert refused.status_code == 400 and refused.json()["code"] == "INVALID_PARAMETER"


def test_channel_events_refresh_the_lake_like_a_full_load(sb: Any, tmp_path: Path) -> None:
    opener = sandbox_opener(sb)

    def settings() -> IngestSettings:
        with sb.world.lock:
            return IngestSettings(today=sb.world.now.date(), horizon_days=3)

    lake = Lake(tmp_path / "incremental")
    assert apply_changes(lake, opener, settings()).mode == "bootstrap"
    before = lake.current("distribution_channel_cancellation_addons").num_rows
    assert lake.current("distribution_channel_commissions").num_rows >= 2

    summary = sb.world.advance(24 * 30)
    with sb.world.lock:
        events = [
            e
            for e in sb.world.records("events")
            if e["eventType"] == "DISTRIBUTIONCHANNEL_EVENT"
            and e["eventId"] >= summary["firstEventId"]
        ]
    assert events and plan_changes(events).refresh["distribution_channels"]
    run = apply_changes(lake, opener, settings())
    assert run.mode == "incremental"
    assert lake.current("distribution_channel_cancellation_addons").num_rows > before
    fresh = Lake(tmp_path / "fresh")
    apply_changes(fresh, opener, settings())
    for table in CHANNEL_TABLES:
        diff = table_differences(_data(lake.current(table)), _data(fresh.current(table)))
        assert diff is None, (table, diff)

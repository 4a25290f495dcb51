"""What `reservoir run` reports: every table landed, requests counted once, KPIs, the cap kept;
requests and seconds per table in every mode, and who holds the lake lock a run waits for.

One as-of clock: the modes' sandbox is served over HTTP and configured like an external service
(the pipeline knows nothing of its world), its clock is not this machine's; after the bootstrap,
a `reservoir sandbox advance` and an incremental run, the run summary, `reservoir status`, the
dashboard header, the headline KPIs, the warehouse's meta and the lake's run state all show the
same as-of date: the service's (here, where that bootstrap and run are made anyway)."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

import dagster as dg
import duckdb
import pytest
from rich.console import Console
from typer.testing import CliRunner

from assets import progress
from assets.modes import refresh_reservations
from assets.settings import IngestSettings
from assets.sweep import sweep
from lake.locks import writer_lock
from lake.state import read_as_of, read_cursor
from lake.store import Lake
from lake.tables import TABLES
from pipelines.cli import app
from pipelines.dashboard import build_dashboard
from pipelines.runner import ServiceTarget, run_pipeline
from pipelines.settings import Settings
from pipelines.status import print_status
from pipelines.summary import RUN_LEVEL_ROW, RunSummary
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from tests.e2e.conftest import PipelineRun
from tests.incremental.helpers import sandbox_opener

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

LAKE_TABLES = set(TABLES)  # every table of the lake, the supply areas' included


def test_every_table_lands_and_requests_are_counted_once(full_run: PipelineRun) -> None:
    summary = full_run.summary
    assert set(summary.tables) == LAKE_TABLES
    world = full_run.handle.world
    assert summary.tables["reservations"].rows == len(world.keys("reservations"))
    assert summary.tables["bill_lines"].rows == len(world.keys("billlines"))
    assert summary.tables["units"].rows == len(world.keys("units"))  # archived units included
    assert summary.tables["owners"].rows == len(world.keys("owners"))
    assert summary.tables["addons"].rows == len(world.keys("addons"))
    assert summary.tables["offers"].rows == len(world.keys("offers"))
    assert summary.tables["offer_rates"].rows == len(world.keys("offerrates"))
    assert summary.tables["accommodation_type_additions"].rows == len(world.keys("typeadditions"))
    assert summary.tables["offer_additions"].rows == len(world.keys("offeradditions"))
    served = full_run.handle.stats()
    assert summary.requests > 0
    # Every request the assets report was served; the few more the sandbox saw are token
    # requests and the warehouse-free event reads, which the asset metadata does not count.
    assert summary.requests <= served["requests"] <= summary.requests + 40


def test_headline_kpis_and_models(full_run: PipelineRun) -> None:
    names = [name for name, _ in full_run.summary.kpis]
    assert any(name.startswith("occupancy") for name in names)
    assert sum(name.startswith("ADR") for name in names) >= 2  # one per currency
    assert {"occupancy_daily", "revenue_daily", "booking_pace"} <= set(full_run.summary.models)


def test_the_concurrency_cap_is_never_exceeded(full_run: PipelineRun) -> None:
    stats = full_run.handle.stats()
    assert 1 <= stats["peakInFlightPerClient"] <= 15
    assert stats["throttled"] == 0  # the client never provoked a 429


def test_window_kpis_have_one_definition(full_run: PipelineRun) -> None:
    """`marts.kpi_window` (what the run summary and the dashboard read) equals the definitions
    computed here from the daily marts: occupancy and RevPAR over every unit's nights available,
    ADR over the currency's nights sold."""
    import duckdb

    from warehouse.kpis import headline

    con = duckdb.connect(str(full_run.settings.warehouse_path), read_only=True)
    try:
        today = full_run.handle.world.now.date()
        lo, hi = today - timedelta(days=30), today - timedelta(days=1)
        rows = con.execute(
            "select currency_code, nights_available, nights_sold, occupancy, room_revenue_net, "
            "currency_nights_sold, adr_net, revpar_net, room_revenue_gross, revpar_gross "
            "from marts.kpi_window(?, ?)",
            [lo, hi],
        ).fetchall()
        sold, available = con.execute(
            "select sum(nights_sold), sum(nights_available) from marts.occupancy_daily "
            "where date_day between ? and ?",
            [lo, hi],
        ).fetchone()
        revenue = dict(
            (c, (r, n, a, g))
            for c, r, n, a, g in con.execute(
                "select currency_code, sum(room_revenue_net), sum(nights_sold), "
                "sum(nights_available), sum(room_revenue_gross) from marts.revenue_daily "
                "where date_day between ? and ? group by 1",
                [lo, hi],
            ).fetchall()
        )
        lines = dict(headline(con, today.isoformat()))
    finally:
        con.close()
    assert {r[0] for r in rows} == set(revenue) == {"EUR", "GBP"}
    cent = Decimal("0.01")
    for currency, avail, nights, occupancy, net, c_nights, adr, revpar, gross, rp_gross in rows:
        assert (avail, nights) == (available, sold)
        assert occupancy == pytest.approx(sold / available)
        # every currency has a row for every night: its supply is all of it
        assert (net, c_nights, available, gross) == revenue[currency]
        assert 0 < net < gross
        assert adr == (net / c_nights).quantize(cent, ROUND_HALF_UP)
        assert revpar == (net / available).quantize(cent, ROUND_HALF_UP)
        assert rp_gross == (gross / available).quantize(cent, ROUND_HALF_UP)
    occupancy_line = next(v for k, v in lines.items() if k.startswith("occupancy, last"))
    assert occupancy_line == f"{sold / available:.1%}"


# -- every mode: requests and seconds per table; a run waiting for the lake lock says why ----


@dataclass
class Served:
    """A sandbox served over HTTP with a bootstrapped lake (`reservoir run`, mode auto)."""

    settings: Settings
    handle: SandboxHandle
    wall: date  # this machine's date when the sandbox started

    def run(self, console: Console) -> RunSummary:
        return run_pipeline(self.settings, mode="auto", console=console, target=self.external())

    def external(self) -> ServiceTarget:
        """The served sandbox as a configured service URL: no date and no world handed over."""
        h = self.handle
        return ServiceTarget(h.base_url, h.client_id, h.client_secret, h.scope)

    def advance(self, hours: int) -> None:
        """`reservoir sandbox advance` against the running sandbox's admin API."""
        result = CliRunner().invoke(
            app, ["sandbox", "advance", "--hours", str(hours), "--url", self.handle.admin_url]
        )
        assert result.exit_code == 0, result.output

    def ingest_settings(self) -> IngestSettings:
        return IngestSettings(today=self.handle.world.now.date(), horizon_days=7)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    saved = os.environ.get("DAGSTER_HOME")
    settings = Settings(data_dir=tmp_path_factory.mktemp("modes"))
    try:
        with run_sandbox(SandboxSettings(seed=5, scale="small")) as handle:
            found = Served(settings, handle, datetime.now(UTC).date())
            if handle.world.now.date() in (found.wall, found.wall - timedelta(days=1)):
                found.advance(72)  # keep the service's date apart from this machine's
            first = found.run(Console(file=io.StringIO()))
            assert first.mode == "bootstrap"
            yield found
    finally:
        if saved is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = saved


def _printed_row(out: str, table: str) -> list[str]:
    """The cells of one table's row of the printed summary."""
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0] == table:
            return cells
    raise AssertionError(f"no row for {table} in:\n{out}")


def test_an_incremental_run_shows_requests_and_seconds_per_table(served: Served) -> None:
    served.advance(24)
    out = io.StringIO()
    summary = served.run(Console(file=out, width=200))
    _assert_everything_shows_the_services_date(served, summary)
    assert summary.mode == "incremental"
    reservations = summary.tables["reservations"]
    assert reservations.rows > 0  # a day of bookings and changes was refetched
    assert reservations.requests > 0 and reservations.seconds > 0
    # each stream's requests once, plus the event reads: the run's total, all served
    assert summary.requests == sum(t.requests for t in summary.tables.values()) + (
        summary.extra_requests
    )
    assert summary.extra_requests > 0  # the event feed is read by no stream
    assert summary.requests <= served.handle.stats()["requests"]
    cells = _printed_row(out.getvalue(), "reservations")
    assert cells[1:4] == [
        f"{reservations.rows:,}",
        str(reservations.requests),
        (f"{reservations.seconds:.1f}"),
    ]
    assert _printed_row(out.getvalue(), RUN_LEVEL_ROW)[2] == str(summary.extra_requests)


def _assert_everything_shows_the_services_date(served: Served, second: RunSummary) -> None:
    """After the bootstrap, a day's advance and an incremental run: the service's date in the
    summary, the lake's run state, the warehouse's meta, `reservoir status` and the dashboard."""
    assert second.mode == "incremental"
    service_date = served.handle.world.now.date()
    assert service_date != served.wall
    day = service_date.isoformat()
    settings = served.settings

    lake = Lake(settings.lake_dir)
    recorded = read_as_of(lake)
    assert recorded is not None and recorded.business_date == service_date
    assert recorded.source == "the service's Date header"
    cursor = read_cursor(lake)
    assert cursor is not None and cursor.business_date == service_date

    con = duckdb.connect(str(settings.warehouse_path), read_only=True)
    try:
        meta = con.execute("select as_of, as_of_source from meta.build_settings").fetchone()
        pace = con.execute("select max(as_of_date) from marts.booking_pace").fetchone()
    finally:
        con.close()
    assert meta == (service_date, "the service's Date header")
    assert pace == (service_date,)

    assert second.as_of is not None and second.as_of.startswith(f"{day} (the service's Date")
    assert f"occupancy, last 30 nights to {day}" in [name for name, _ in second.kpis]

    out = io.StringIO()
    print_status(settings, Console(file=out, width=200))
    assert f"as of: {day} (the service's Date header" in out.getvalue()
    # every published relation is listed with its rows, a view marked as one
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        published = con.execute(
            "select table_schema || '.' || table_name, table_type = 'VIEW', "
            "from information_schema.tables where table_schema in ('core', 'marts')"
        ).fetchall()
    assert ("marts.allotment_pickup", True) in published
    for name, is_view in published:
        assert f"{name}{' (view)' if is_view else ''} " in out.getvalue(), name

    page = build_dashboard(settings.warehouse_path, settings.data_dir / "dashboard.html")
    text = page.read_text()
    assert f'As of <time datetime="{day}">' in text
    assert f"<title>Reservoir dashboard · {day}</title>" in text


def test_a_run_waiting_for_the_lake_lock_says_who_holds_it(served: Served) -> None:
    out = io.StringIO()
    held, released = threading.Event(), threading.Event()
    holder_failed: list[BaseException] = []
    waits: list[str | None] = []

    def on_event(event: progress.Event) -> None:
        if isinstance(event, progress.WaitEvent):
            waits.append(event.holder)
            if event.holder is not None:
                released.set()

    def first_run() -> None:
        """Holds the lake's writer lock until the run has said that it waits (a bound, not a
        speed check)."""
        try:
            with writer_lock(Lake(served.settings.lake_dir), holder="first-run-id"):
                held.set()
                released.wait(timeout=600)
        except BaseException as exc:  # reported below, in the test's thread
            holder_failed.append(exc)
            held.set()

    # The waiting run is made in the test's own thread, as `reservoir run` makes it in the
    # command's: there Dagster gives the run signal handlers of its own, which the log-mirroring
    # children of its steps (`tail`) start with. A run in another thread leaves them the
    # process's: in a suite started with SIGINT ignored (a background job of a shell without job
    # control), Dagster's restore after the module's first run had set SIGTERM to it as well, the
    # children ignored Dagster's SIGTERM and each step waited 30 s for them (62 s for this test
    # in a clean clone's `make test`, 3 s else; docs/benchmarks.md, session 19).
    unsubscribe = progress.subscribe(on_event)
    holder = threading.Thread(target=first_run)
    try:
        holder.start()
        assert held.wait(timeout=600)
        assert not holder_failed, holder_failed
        summary = served.run(Console(file=out, width=300))
    finally:
        released.set()  # the holder never outlives the test
        holder.join()
        unsubscribe()
    assert not holder_failed, holder_failed
    line = next(x for x in out.getvalue().splitlines() if "writer lock" in x)
    assert line.startswith("waiting for the lake's writer lock (")
    assert f"held by pid {os.getpid()}, run first-run-id, since 20" in line
    assert isinstance(summary, RunSummary) and summary.mode == "incremental"
    assert len(waits) == 2 and waits[1] is None  # told once, then told the wait was over
    # and the run's Dagster event log says so (a run launched from the UI has no display)
    logged = [
        e.user_message
        for e in dg.DagsterInstance.get().all_logs(summary.run_id)
        if "writer lock" in e.user_message
    ]
    assert logged[0].endswith(
        f"held by pid {os.getpid()}, run first-run-id, since " + (line.rsplit(", since ", 1)[1])
    )
    assert logged[1] == "the lake's writer lock is ours now"


def test_webhook_and_sweep_runs_report_each_streams_requests(served: Served) -> None:
    """Last in the module: it lands outside `reservoir run` (the modes' own entry points)."""
    lake = Lake(served.settings.lake_dir)
    opener = sandbox_opener(served.handle, show_archived=True)  # as the pipeline's resource
    ids = sorted(lake.current_ids("reservations", "reservation_id"))[:3]
    pushed = refresh_reservations(lake, opener, served.ingest_settings(), ids)
    landed = pushed.landed["reservations"]
    assert landed.rows["reservations"] == len(ids)
    assert landed.requests > 0 and landed.seconds > 0
    assert landed.requests <= pushed.requests

    swept = sweep(lake, opener, served.ingest_settings())
    assert swept.mode == "sweep"
    read = {name: r for name, r in swept.landed.items() if r.requests}
    # the changed reservations, each reference list and finance: every stream read counts its own
    assert {"reservations", "locations", "journal_reports", "cash_clearances"} <= set(read)
    assert all(r.seconds > 0 for r in read.values())
    # what no stream read (the reservation-id list) stays run-level, never counted twice
    assert sum(r.requests for r in swept.landed.values()) < swept.requests

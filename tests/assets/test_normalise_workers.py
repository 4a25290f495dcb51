"""Normalising in worker processes lands exactly what normalising in the asset's thread lands.

Pages reach `run_spec` as the real client delivers them: undecoded `LazyRecords` (skimmed JSON
bytes) through a `PageStream`. `WORKER_MIN_BYTES` is patched to 0 so even these small streams go
to the worker pool; the pool is the process's shared one, so the worker start is paid once.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import assets.pages
import service.lazy
from assets import page_queue, workers
from assets.catalogue import CATALOGUE, SPECS
from assets.endpoints import EndpointSpec
from assets.extract import run_spec
from assets.landing import Landing, LandReport
from assets.pages import PageStream
from assets.settings import IngestSettings
from assets.workers import NormaliseWorkerDied, NormaliseWorkerError
from lake.store import Lake
from service.errors import ServiceError
from service.lazy import LazyRecords, skim
from service.page import Page
from tests.assets.fake_service import reservation

BATCH = "20260101T000000Z-0000beef"
SPEC = {s.name: s for s in SPECS}
KEYS = {"reservation_details": "reservationId", "events": "eventId"}
PAGE_RECORDS = 3
Record = dict[str, Any]


def _reservations() -> list[Record]:
    """Reservations with bad headers, bad children, unknown and personal-looking fields."""
    out = []
    for rid in range(1, 41):
        r = reservation(rid)
        if rid % 7 == 0:
            r["arrivalDate"] = "2026-13-45"
        if rid % 11 == 0:
            r["customerBill"][0]["total"] = "lots"
        if rid % 5 == 0:
            r["newField"] = {"nested": rid}
            r["guestEmail"] = f"guest{rid}@example.org"
        if rid % 13 == 0:
            r["reservedResources"][0]["extraThing"] = rid
        if rid % 17 == 0:
            del r["reservationNumber"]
        out.append(r)
    return out


def _events() -> list[Record]:
    out = []
    for eid in range(1, 31):
        merge = eid % 3 == 0
        out.append(
            {
                "eventId": eid,
                "eventType": "CUSTOMER_EVENT" if merge or eid % 4 == 0 else "RESERVATION_EVENT",
                "entityId": "not an id" if eid == 9 else 500 + eid,
                "entityType": "CUSTOMER",
                "entityAction": "MERGE" if merge else "UPDATE",
                "oldEntityId": 900 + eid,
                "eventDate": f"2026-01-{1 + eid % 28:02d}T00:00:00.000",
            }
        )
    return out


RECORDS = {"reservations": _reservations, "customer_merges": _events}


def _bodies(records: list[Record]) -> list[bytes]:
    chunks = [records[i : i + PAGE_RECORDS] for i in range(0, len(records), PAGE_RECORDS)]
    return [
        orjson.dumps({"content": c, "last": i == len(chunks) - 1}) for i, c in enumerate(chunks)
    ]


class LazyClient:
    """A client double that delivers pages as the real one does: skimmed, undecoded."""

    def __init__(self, method: str, bodies: list[bytes]) -> None:
        self.method, self.bodies = method, bodies
        self.stats: dict[str, int] = {}

    async def __aenter__(self) -> LazyClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        if name != self.method:
            raise AttributeError(name)
        return self._pages

    async def _pages(self, **kwargs: Any) -> AsyncIterator[LazyRecords]:
        for body in self.bodies:
            skimmed = skim(body, KEYS[self.method], "/" + self.method)
            assert skimmed is not None
            page = Page.from_body(skimmed).content
            assert isinstance(page, LazyRecords)
            yield page


class _Clock(datetime):
    """`datetime` for `assets.pages` whose now() ticks one second per call from a fixed start, so
    that two runs stamp the same pages with the same (distinct) `_extracted_at`."""

    ticks = 0

    @classmethod
    def now(cls, tz: Any = None) -> _Clock:
        cls.ticks += 1
        return cls(2026, 1, 1, 12, 0, cls.ticks % 60, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets.pages, "datetime", _Clock)


def _run(
    spec: EndpointSpec, root: Path, bodies: list[bytes], workers: int, **kw: Any
) -> LandReport:
    _Clock.ticks = 0
    return run_spec(
        spec,
        lake=Lake(root),
        batch_id=BATCH,
        settings=IngestSettings(quarantine_threshold=1.0, normalise_workers=workers, **kw),
        open_client=lambda: LazyClient(spec.method, bodies),
    )


@pytest.fixture
def workers_always(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every page goes to the pool; records each pool request (its size)."""
    monkeypatch.setattr(page_queue, "WORKER_MIN_BYTES", 0)
    requested: list[int] = []
    shared = workers.shared_pool

    def spy(count: int) -> Any:
        requested.append(count)
        return shared(count)

    monkeypatch.setattr(workers, "shared_pool", spy)
    return requested


def _files(lake: Lake, spec: EndpointSpec) -> dict[str, bytes]:
    out = {}
    for table in spec.tables:
        for f in lake.files(table.name):
            out[f"{table.name}/{f.name}"] = f.read_bytes()
    for f in lake.quarantine_files(spec.table.name):
        out[f"_quarantine/{f.name}"] = f.read_bytes()
    return out


@pytest.mark.parametrize("name", ["reservations", "customer_merges"])
def test_workers_land_the_same_files_as_the_asset_thread(
    name: str, tmp_path: Path, workers_always: list[int]
) -> None:
    spec = SPEC[name]
    bodies = _bodies(RECORDS[name]())
    # Some flushes mid-stream, so parts and their row order are compared too.
    in_thread = _run(spec, tmp_path / "thread", bodies, 0, flush_rows=7)
    assert workers_always == []
    in_workers = _run(spec, tmp_path / "workers", bodies, 1, flush_rows=7)
    assert workers_always == [1]

    thread_lake, worker_lake = Lake(tmp_path / "thread"), Lake(tmp_path / "workers")
    for table in spec.tables:
        a = pq.read_table(thread_lake.table_dir(table.name))
        b = pq.read_table(worker_lake.table_dir(table.name))
        assert a.num_rows > 0, table.name
        assert b.equals(a), table.name
    qa = pa.concat_tables(map(pq.read_table, thread_lake.quarantine_files(spec.table.name)))
    qb = pa.concat_tables(map(pq.read_table, worker_lake.quarantine_files(spec.table.name)))
    assert qa.num_rows == in_thread.quarantined > 0
    assert qb.equals(qa)
    assert qb.column("reason").to_pylist() == qa.column("reason").to_pylist()
    # Byte for byte: the same parts, names and contents.
    assert _files(worker_lake, spec) == _files(thread_lake, spec)

    assert (in_thread.normalise_workers, in_workers.normalise_workers) == (0, 1)
    assert in_workers.records == in_thread.records
    assert in_workers.quarantined == in_thread.quarantined
    assert in_workers.reasons == in_thread.reasons
    assert in_workers.dropped_pii_fields == in_thread.dropped_pii_fields
    assert in_workers.batch_kind == in_thread.batch_kind
    assert in_workers.cursor == in_thread.cursor
    assert in_workers.unknown_fields == in_thread.unknown_fields
    if name == "reservations":
        assert in_thread.dropped_pii_fields and in_thread.unknown_fields["reservations"]
    else:  # the cursor is the largest event id seen, filtered out or not
        assert in_thread.cursor == 30
        assert worker_lake.read_state("cursor_customer_merges") == {"cursor": 30}


def test_a_result_crosses_the_pipe_as_ipc_and_arrives_whole() -> None:
    """What a worker sends back (`workers.shipped`, pickled as the pool pickles it) unpickles to
    a plain `Normalised` equal to the one normalised: every table (good rows, quarantine,
    partial and lost) with its schema, chunks and values, and every counter."""
    import pickle
    from multiprocessing.reduction import ForkingPickler

    from assets.columns import Normalised
    from assets.normalise import Normaliser

    spec = SPEC["reservations"]
    records = _reservations()
    # rid 11 and 22 have a bad bill (partial + lost), 7 a bad header, 5 unknown fields
    normalised = Normaliser(spec, batch_id=BATCH).normalise(
        records, datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert normalised.partial and normalised.lost and normalised.quarantine.num_rows
    assert normalised.unknown_fields and normalised.dropped_pii_fields and normalised.reasons
    sent = workers.shipped(workers.PageResult(7, normalised))
    wire = bytes(ForkingPickler.dumps(sent))
    arrived = pickle.loads(wire)
    assert arrived.cursor == 7
    got = arrived.normalised
    assert type(got) is Normalised
    for field in dataclasses.fields(Normalised):
        want, have = getattr(normalised, field.name), getattr(got, field.name)
        if isinstance(want, pa.Table):
            assert have.equals(want, check_metadata=True), field.name
            assert have.schema == want.schema, field.name
        elif isinstance(want, dict) and any(isinstance(v, pa.Table) for v in want.values()):
            assert have.keys() == want.keys(), field.name
            for name, table in want.items():
                assert have[name].equals(table, check_metadata=True), (field.name, name)
                assert have[name].schema == table.schema, (field.name, name)
        else:
            assert have == want, field.name
    # the tables travel as IPC streams, not as pickled Arrow tables
    assert b"pyarrow.lib" not in wire
    assert workers.shipped(workers.PageResult(3, None)) == workers.PageResult(3, None)


def test_an_error_in_a_worker_fails_the_spec_and_commits_nothing(
    tmp_path: Path, workers_always: list[int]
) -> None:
    spec = SPEC["reservations"]
    bodies = _bodies(_reservations())
    # Skimmed fine, refused by the full decode: an invalid UTF-8 byte inside a string.
    bodies[3] = bodies[3].replace(b'"R00010"', b'"R\xff0010"')
    assert skim(bodies[3], "reservationId", "/x") is not None

    with pytest.raises(ServiceError, match="not valid JSON") as caught:
        _run(spec, tmp_path, bodies, 1)
    assert workers_always == [1]
    # Raised in the worker process: the pool attaches the worker's traceback as the cause.
    assert type(caught.value.__cause__).__name__ == "_RemoteTraceback"
    lake = Lake(tmp_path)
    for table in spec.tables:
        assert lake.files(table.name) == [], table.name
    assert not list(tmp_path.rglob("*.tmp"))
    # What was quarantined before the failure is kept as evidence, as in-thread.
    assert lake.quarantine_files(spec.table.name)


class _KillsTheWorker:
    """A page whose unpickling ends the worker process at once (as an OOM kill would)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (os._exit, (3,))


def test_a_dead_worker_fails_the_run_clearly_and_the_next_run_works(
    tmp_path: Path, workers_always: list[int]
) -> None:
    spec = SPEC["reservations"]
    now = datetime.now(UTC)
    first = skim(_bodies([reservation(1)])[0], "reservationId", "/reservations")
    assert first is not None  # an undecoded page: its bytes start the pool
    pages: list[tuple[Any, datetime]] = [
        (Page.from_body(first).content, now),
        (_KillsTheWorker(), now),
        ([reservation(2)], now),
    ]
    settings = IngestSettings(normalise_workers=1)
    with pytest.raises(NormaliseWorkerDied, match="nothing of this table was committed"):
        run_spec(spec, lake=Lake(tmp_path / "a"), batch_id=BATCH, settings=settings, pages=pages)
    assert not any(Lake(tmp_path / "a").files(t.name) for t in spec.tables)
    assert not list(tmp_path.rglob("*.tmp"))

    report = _run(spec, tmp_path / "b", _bodies(_reservations()[:9]), 1)
    assert report.records == 9
    assert workers_always == [1, 1]
    assert Lake(tmp_path / "b").current("reservations").num_rows == 8  # rid 7 is bad


def test_an_unpicklable_error_is_sent_back_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    class Local(Exception):  # a local class cannot be pickled
        pass

    def fails(*args: Any) -> Any:
        raise Local("boom")

    monkeypatch.setattr(workers, "normalise_page", fails)
    job = workers.Job("reservations", BATCH, "full", False)
    with pytest.raises(NormaliseWorkerError, match="Local: boom"):
        workers.normalise_in_worker(job, [reservation(1)], datetime.now(UTC))


def test_small_specs_and_unregistered_specs_stay_in_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pool(count: int) -> Any:
        raise AssertionError("no pool expected")

    monkeypatch.setattr(workers, "shared_pool", no_pool)
    spec = SPEC["reservations"]
    bodies = _bodies(_reservations())
    # Below WORKER_MIN_BYTES of JSON (here: just below what the stream brings) no pool starts.
    monkeypatch.setattr(page_queue, "WORKER_MIN_BYTES", sum(map(len, bodies)))
    few = _run(spec, tmp_path / "few", bodies, 4)
    assert few.records == len(_reservations())
    # A spec the workers cannot look up by name (here: a changed copy) is normalised in-thread.
    changed = dataclasses.replace(spec, description="a copy")
    monkeypatch.setattr(page_queue, "WORKER_MIN_BYTES", 0)
    assert _run(changed, tmp_path / "copy", bodies, 4).records == 40


def test_automatic_worker_count(monkeypatch: pytest.MonkeyPatch) -> None:
    assert workers.worker_count(0) == 0
    assert workers.worker_count(3) == 3
    for cores, expected in ((1, 0), (2, 2), (3, 3), (16, workers.MAX_AUTO_WORKERS)):
        monkeypatch.setattr(workers.os, "sched_getaffinity", lambda _, n=cores: set(range(n)))
        assert workers.worker_count(None) == expected
    with pytest.raises(ValueError, match="0 or more"):
        workers.worker_count(-1)


def test_lazy_pages_cross_the_page_stream_undecoded(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded_in: list[str] = []
    loads = service.lazy.loads

    def spy(data: bytes) -> Any:
        decoded_in.append(threading.current_thread().name)
        return loads(data)

    monkeypatch.setattr(service.lazy, "loads", spy)
    bodies = _bodies(_reservations()[:7])
    stream = PageStream(
        lambda: LazyClient("reservation_details", bodies), CATALOGUE.by_name["reservations"], [{}]
    )
    seen: Iterator[tuple[Any, datetime]] = iter(stream)
    pages = []
    for page, _at in seen:
        assert isinstance(page, LazyRecords)
        assert "bytes" in repr(page)  # not decoded yet
        pages.append(page)
    assert decoded_in == []
    assert [len(p) for p in pages] == [3, 3, 1]
    assert pages[0][0]["reservationId"] == 1  # decoded here, by the consumer
    assert decoded_in == [threading.current_thread().name]
    assert decoded_in != ["service-pages"]


class _ListClient:
    """A test double that yields pages as tuples: they still arrive as lists."""

    stats: dict[str, int] = {}  # noqa: RUF012

    async def __aenter__(self) -> _ListClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def things(self) -> AsyncIterator[tuple[Record, ...]]:
        yield ({"a": 1}, {"a": 2})


def test_other_pages_still_arrive_as_lists() -> None:
    pages = [page for page, _at in PageStream(_ListClient, SimpleNamespace(method="things"), [{}])]
    assert pages == [[{"a": 1}, {"a": 2}]]
    assert type(pages[0]) is list


_POOL_THEN_WAIT = """
import os, sys, time
from assets import workers
pool = workers.shared_pool(2)
pids = {pool.submit(os.getpid).result() for _ in range(8)}
print(" ".join(map(str, sorted(pids))), flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_workers_end_when_the_run_process_is_killed() -> None:
    """A run killed with SIGKILL (or by the OOM killer) must not leave idle workers behind."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _POOL_THEN_WAIT],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the killed run's resource tracker warns about semaphores
        cwd=Path(__file__).resolve().parents[2],
        text=True,
    )
    try:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert pids and all(_alive(p) for p in pids)
    finally:
        proc.kill()
        proc.wait(10)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


@pytest.mark.parametrize(
    ("kind", "running", "starts"),
    [("full", False, True), ("delta", False, False), ("delta", True, True)],
    ids=["full", "delta-no-pool-yet", "delta-pool-running"],
)
def test_a_delta_landing_starts_the_pool_only_for_much_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, running: bool, starts: bool
) -> None:
    """Past WORKER_MIN_BYTES (and below DELTA_START_FACTOR times it) a full landing starts the
    pool; a delta one (an incremental run's) normalises in its thread unless the pool runs."""

    class Started(Exception):
        pass

    def spy(count: int) -> Any:
        raise Started

    monkeypatch.setattr(workers, "shared_pool", spy)
    monkeypatch.setattr(workers, "pool_running", lambda: running)
    bodies = _bodies(_reservations())
    monkeypatch.setattr(page_queue, "WORKER_MIN_BYTES", sum(map(len, bodies)) // 2)
    spec = SPEC["reservations"]
    held = Landing(Lake(tmp_path), spec, BATCH, kind, IngestSettings(normalise_workers=2))
    pages = [Page.from_body(skim(b, KEYS[spec.method], "/" + spec.method)).content for b in bodies]
    try:
        if starts:
            with pytest.raises(Started):
                for page in pages:
                    held.add_page(page)
        else:
            for page in pages:
                held.add_page(page)
            held.finish()
            assert held.report.records == len(_reservations())
            assert held.report.normalise_workers == 0
    finally:
        held.abort()

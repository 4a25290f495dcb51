"""Benchmark: normalise (+ write) pages of source records into a scratch lake.

`--kind details` (default) generates N synthetic `/reservations/details` records shaped like the
sandbox's (header, reserved resources, three bills, subjects; ~13 lake rows per record), or takes
them from the sandbox world (`--world small`). `--kind <spec>` (e.g. `journal_entries`, `rates`,
`customers`, `cash_clearances`, `units`) takes a flat list's records from the sandbox world
(`--world`, default small) as templates; one record is one lake row.

Pages arrive as the client delivers them: their JSON undecoded (`LazyRecords`), so the timed
work includes decoding (`--input dicts`: decoded records, as measured before 2026-11-25).
Two timed phases over the same pages, page generation measured apart and left out:
  1. normalise only (`Normaliser.normalise` per page), and
  2. normalise + Parquet writes (`assets.extract.run_spec` fed with the pages).
"Records" are source records (one reservation with all its children is one record); rows are
lake rows over all tables. Per core = CPU time of this process (`time.process_time()`, all
threads), so the figures are honest on a busy machine. Peak RSS stays flat as N grows because
pages are flushed every `flush_rows`.

    python -m bench.normalise --records 200000
    python -m bench.normalise --kind journal_entries --records 500000
    python -m bench.normalise --records 50000 --page-size 100 --skip-write  # details as fetched
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson

from assets.catalogue import SPECS
from assets.endpoints import EndpointSpec
from assets.extract import run_spec
from assets.normalise import Normaliser
from assets.settings import IngestSettings
from lake.parts import new_batch_id
from lake.store import Lake
from service.lazy import LazyRecords

PAGE_SIZE = 1000
POOL = 2000  # distinct template records; pages reuse them with fresh reservation ids


def _bill(rng: random.Random, line_id: int, rid: int, line_type: int, total: float) -> dict:
    return {
        "reservationBillLineId": line_id,
        "reservationBillId": rid * 10,
        "reservationId": rid,
        "payerType": "CUSTOMER",
        "billLineType": line_type,
        "resourceId": rng.randint(1, 500),
        "resourceType": "ACCOMMODATIONTYPE",
        "reservedResourceId": rid * 10,
        "rateId": 7,
        "rateTypeId": 1,
        "description": "Rent",
        "quantity": 4,
        "multiplier": 1,
        "value": round(total / 4, 2),
        "total": total,
        "vatRate": 9.0,
        "startDate": "2026-07-01",
        "endDate": "2026-07-05",
    }


def synthetic_record(rng: random.Random, rid: int) -> dict[str, Any]:
    arrival = date(2026, 1, 1) + timedelta(days=rng.randint(0, 364))
    nights = rng.choice((2, 3, 4, 7, 14))
    departure = arrival + timedelta(days=nights)
    rent = round(rng.uniform(200, 3000), 2)
    lines = [
        _bill(rng, rid * 20 + k, rid, t, rent if t in (10, 70) else 0.0)
        for k, t in enumerate((10, 20, 40, 60, 70, 80, 90, 120))
    ]
    return {
        "reservationId": rid,
        "reservationNumber": f"R{rid:08d}",
        "reservationCategoryId": 1,
        "categoryCode": "GUEST",
        "categoryName": "Guest",
        "type": "RESERVATION",
        "status": rng.choice((12, 21, 31, 41, -12)),
        "arrivalDate": arrival.isoformat(),
        "departureDate": departure.isoformat(),
        "expectedArrivalDateTime": None,
        "expectedDepartureDateTime": None,
        "customerId": rng.randint(1, 10**6),
        "distributionChannelId": rng.randint(1, 5),
        "distributionChannelCode": "WEB",
        "locationId": rng.randint(1, 150),
        "reservationDate": "2025-11-02T10:11:12.345",
        "modifiedDate": "2025-11-03T08:00:00.000",
        "cancelDate": None,
        "voucher": None,
        "validationStatus": 21,
        "reservedResources": [
            {
                "reservedResourceId": rid * 10 + k,
                "reservationId": rid,
                "resourceId": 11,
                "unitId": 101,
                "rateTypeId": 1,
                "type": "ACCOMMODATIONTYPE" if k == 0 else "EXTRA",
                "code": "B4",
                "name": "Bungalow",
                "quantity": 1,
                "startDate": arrival.isoformat(),
                "endDate": departure.isoformat(),
                "statusName": "ok",
                "overrideValue": None,
            }
            for k in range(2)
        ],
        "customerBill": lines,
        "payingCustomerBill": [],
        "agentBill": [_bill(rng, rid * 20 + 19, rid, 100, round(rent * 0.1, 2))],
        "subjects": [
            {
                "reservationSubjectId": rid * 10,
                "reservationId": rid,
                "subjectId": 1,
                "type": "PERSON",
                "ageFrom": 18,
                "ageTo": 99,
                "quantity": 2,
            }
        ],
    }


def world_records(scale: str, collection: str = "reservations") -> list[dict[str, Any]]:
    """Records of one sandbox collection as the world serves them (details where it has them)."""
    from sandbox.world import World

    world = World(seed=7, scale=scale)
    records = [world.details(collection, k) for k in world.keys(collection)]
    return [r for r in records if r is not None]


def reservation_pool(world: str | None) -> list[dict[str, Any]]:
    """The reservation details pages are built from: a sandbox world's (`world` a scale), or
    `POOL` synthetic ones."""
    if world:
        return world_records(world)
    rng = random.Random(7)
    return [synthetic_record(rng, i) for i in range(1, POOL + 1)]


class Pages:
    """Pages of `total` records built from a template pool; generation time is kept apart.

    `bytes` (the default): each page as the client delivers it, its JSON body undecoded
    (`LazyRecords`), so the timed work includes decoding it. `dicts`: already decoded records,
    the input of the figures measured before 2026-11-25 (decoding not counted)."""

    def __init__(
        self,
        pool: list[dict[str, Any]],
        total: int,
        key: str = "reservationId",
        source: str = "/reservations/details",
        form: str = "bytes",
        page_size: int = PAGE_SIZE,
    ) -> None:
        self.pool, self.total, self.key, self.gen_seconds = pool, total, key, 0.0
        self.source, self.form, self.page_size = source, form, page_size

    def __iter__(self) -> Iterator[tuple[Sequence[dict[str, Any]], datetime]]:
        for start in range(0, self.total, self.page_size):
            t0 = time.process_time()
            n = min(self.page_size, self.total - start)
            records = [
                {**self.pool[(start + i) % len(self.pool)], self.key: start + i + 1}
                for i in range(n)
            ]
            body = orjson.dumps({"content": records})
            page: Sequence[dict[str, Any]]
            if self.form == "bytes":
                keys = [r[self.key] for r in records]
                page = LazyRecords(body, n, keys, self.source)
            else:  # fresh objects, as the client's JSON parser hands them
                page = orjson.loads(body)["content"]
            now = datetime.now(UTC)
            self.gen_seconds += time.process_time() - t0
            yield page, now


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _normalise_only(spec: EndpointSpec, pages: Pages) -> tuple[int, int, float, float]:
    """records, rows, wall s, CPU s of normalising every page (nothing written)."""
    normaliser = Normaliser(spec, batch_id=new_batch_id())
    records = rows = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for page, extracted_at in pages:
        out = normaliser.normalise(page, extracted_at)
        records += out.records
        rows += sum(t.num_rows for t in out.tables.values())
    wall = time.perf_counter() - wall0 - pages.gen_seconds
    cpu = time.process_time() - cpu0 - pages.gen_seconds
    return records, rows, wall, cpu


def _line(label: str, records: int, rows: int, wall: float, cpu: float) -> str:
    return (
        f"{label:<18} : {wall:6.2f} s wall, {cpu:6.2f} s CPU | records/s per core "
        f"{records / cpu:>10,.0f} | rows/s per core {rows / cpu:>10,.0f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--kind", default="details", help="details, or a flat spec name")
    parser.add_argument("--world", default=None, help="take templates from the sandbox world")
    parser.add_argument("--flush-rows", type=int, default=50_000)
    parser.add_argument("--skip-write", action="store_true", help="only the normalise phase")
    parser.add_argument(
        "--page-size",
        type=int,
        default=PAGE_SIZE,
        help="records per page (the client asks for 100 reservation details a page)",
    )
    parser.add_argument(
        "--input",
        choices=("bytes", "dicts"),
        default="bytes",
        help="pages as undecoded JSON (as the client delivers them) or as decoded dicts",
    )
    args = parser.parse_args(argv)

    if args.kind == "details":
        spec = next(s for s in SPECS if s.name == "reservations")
        pool = reservation_pool(args.world)
    else:
        spec = next(s for s in SPECS if s.name == args.kind)
        pool = world_records(args.world or "small", args.kind.replace("_", ""))
    key = spec.table.columns[0].source
    rss_before = _peak_mb()
    print(f"endpoint           : {spec.source} ({len(pool):,} template records, {args.input})")

    pages = Pages(pool, args.records, key, spec.source, args.input, args.page_size)
    records, rows, wall, cpu = _normalise_only(spec, pages)
    print(f"records            : {records:,} source records -> {rows:,} lake rows")
    print(_line("normalise", records, rows, wall, cpu))
    if not args.skip_write:
        pages = Pages(pool, args.records, key, spec.source, args.input, args.page_size)
        with tempfile.TemporaryDirectory() as tmp:
            wall0, cpu0 = time.perf_counter(), time.process_time()
            report = run_spec(
                spec,
                lake=Lake(tmp),
                batch_id=new_batch_id(),
                pages=pages,
                # In this process: the figure is CPU per core, and worker processes' CPU
                # would not be counted by process_time().
                settings=IngestSettings(flush_rows=args.flush_rows, normalise_workers=0),
            )
            wall = time.perf_counter() - wall0 - pages.gen_seconds
            cpu = time.process_time() - cpu0 - pages.gen_seconds
        rows = sum(report.rows.values())
        print(_line("normalise + write", report.records, rows, wall, cpu))
    print(f"peak RSS           : {_peak_mb():,.0f} MB (before the runs {rss_before:,.0f} MB)")


if __name__ == "__main__":
    main()

"""The typed page read lands what the column-by-column read lands, on real sandbox pages.

Pages of every endpoint are fetched over HTTP from the sandbox in both profiles (the strict one
leaves optional fields out and shapes records as the real service's), then damaged at random
(bad values, missing required fields, unknown fields, PII-like fields, null or non-object child
items, reordered keys). Each page is normalised twice: from its bytes as the client delivers
them (`LazyRecords`, the typed read) and from dicts with the typed read switched off (every
column through its converter); tables, quarantine, held rows and drift counters must be equal.

Until commit 5d73646 the second read was the page-wide Arrow read (`pa.array(records,
type=<page struct>)`) that the typed read replaced; this test held the two equal on the same
pages (booleans in numeric fields and integers of 2**53 or more left out: the Arrow read took
them as doubles, landing `true` as 1 and quarantining big integers, where the converters and the
typed read quarantine the boolean and keep the integer exact).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pyarrow as pa
import pytest

from assets.catalogue import SPECS
from assets.endpoints import EndpointSpec
from assets.normalise import Normalised, Normaliser
from sandbox.runner import SandboxSettings, run_sandbox
from service.lazy import LazyRecords, skim
from tests.assets.same_normalised import assert_same
from tests.sandbox.conftest import authenticate

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
BATCH = "20260101T120000Z-00000001"
ODD = [None, "abc", 2.5, 7.0, -3, "7", "", "2026-13-45", "2026-02-30", "2026-02-01",
       "2026-04-02T09:53:24.866", {"x": 1}, [1, 2], 10**15, "CUSTOMER", 77, 21, True,
       2**53 + 1]  # fmt: skip
NUMERIC = {"id", "int", "float", "money"}
Pages = dict[str, list[bytes]]


def _fetch(client: httpx.Client, spec: EndpointSpec, ids: dict[str, int]) -> bytes:
    path, params = spec.source, {"size": 100}
    if "{journalReportId}" in path:
        path = path.replace("{journalReportId}", str(ids["journal_reports"]))
    if "{resourceId}" in path:
        path = path.replace("{resourceId}", str(ids["accommodation_types"]))
    if spec.name == "availability":
        params.update(arrivalDateFrom="2026-07-01", arrivalDateTo="2026-07-10")
    response = client.get(path, params=params)
    response.raise_for_status()
    return response.content


@pytest.fixture(scope="module", params=["default", "strict"])
def sandbox_pages(request: pytest.FixtureRequest) -> Iterator[Pages]:
    """The first page (up to 100 records) of every endpoint, as bytes."""
    settings = SandboxSettings(profile=request.param, max_page_size=100)
    with run_sandbox(settings) as handle, httpx.Client(base_url=handle.base_url) as client:
        client.headers["Authorization"] = authenticate(handle, client)
        pages: Pages = {}
        ids: dict[str, int] = {}
        for spec in SPECS:
            body = _fetch(client, spec, ids)
            records = _records(body)
            if spec.name in ("journal_reports", "accommodation_types") and records:
                ids[spec.name] = records[0][spec.table.columns[0].source]
            pages[spec.name] = [body]
        yield pages


def _records(body: bytes) -> list[dict[str, Any]]:
    content = orjson.loads(body)
    return content["content"] if isinstance(content, dict) else content


def _kinds(spec: EndpointSpec) -> dict[str, str]:
    return {c.source.split(".")[-1]: c.kind for t in spec.tables for c in t.columns}


def _damage(spec: EndpointSpec, records: list[dict[str, Any]], rng: random.Random) -> None:
    kinds = _kinds(spec)
    for rec in rng.sample(records, k=min(len(records), rng.randint(1, 4))):
        targets = [rec]
        for s in spec.sections:
            items = rec.get(s.field)
            if isinstance(items, list):
                targets.extend(x for x in items if isinstance(x, dict))
        targets.extend(v for v in list(rec.values()) if isinstance(v, dict))
        for _ in range(rng.randint(1, 3)):
            obj = rng.choice(targets)
            action = rng.choice(["set", "drop", "unknown", "reorder", "section"])
            keys = sorted(obj)
            if action == "set" and keys:
                key, value = rng.choice(keys), rng.choice(ODD)
                if isinstance(value, dict | list) and kinds.get(key) in NUMERIC:
                    continue
                obj[key] = value
            elif action == "drop" and keys:
                del obj[rng.choice(keys)]
            elif action == "unknown":
                obj[rng.choice(["energyLabel", "mobileNumber", "colour"])] = rng.choice(ODD)
            elif action == "reorder":
                items = list(obj.items())
                obj.clear()
                obj.update(reversed(items))
            elif action == "section" and spec.sections:
                field = rng.choice(spec.sections).field
                rec[field] = rng.choice([[None], ["x"], "oops", None, [], [[1]]])


def _lazy(spec: EndpointSpec, body: bytes) -> LazyRecords | list[dict[str, Any]]:
    """The page as the client delivers it: skimmed, undecoded."""
    page = skim(body, spec.table.columns[0].source, spec.source)
    assert page is not None
    return page if isinstance(page, LazyRecords) else page["content"]


def _both(spec: EndpointSpec, body: bytes, pii: bool) -> tuple[Normalised, Normalised]:
    """The page read typed from its bytes, and read column by column from dicts."""
    new = Normaliser(spec, batch_id=BATCH, include_pii=pii)
    old = Normaliser(spec, batch_id=BATCH, include_pii=pii)
    old._typed_page = lambda records: None  # type: ignore[method-assign]
    return new.normalise(_lazy(spec, body), NOW), old.normalise(_records(body), NOW)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_clean_sandbox_pages_land_the_same_rows(spec: EndpointSpec, sandbox_pages: Pages) -> None:
    for body in sandbox_pages[spec.name]:
        for pii in (False, True):
            got, want = _both(spec, body, pii)
            assert_same(got, want)
            assert got.records == len(_records(body))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_damaged_sandbox_pages_land_and_quarantine_the_same(
    spec: EndpointSpec, sandbox_pages: Pages
) -> None:
    rng = random.Random(spec.name)
    for body in sandbox_pages[spec.name]:
        if not _records(body):
            continue
        for _ in range(12):
            records = _records(body)
            _damage(spec, records, rng)
            damaged = orjson.dumps({"content": records})
            got, want = _both(spec, damaged, rng.random() < 0.5)
            assert_same(got, want)


def test_the_typed_read_takes_clean_pages(sandbox_pages: Pages) -> None:
    """Clean reservation details are read by the typed decoder, not the dict fallback."""
    spec = next(s for s in SPECS if s.name == "reservations")
    body = sandbox_pages["reservations"][0]
    normaliser = Normaliser(spec, batch_id=BATCH)
    page = _lazy(spec, body)
    assert isinstance(page, LazyRecords)
    assert normaliser._typed_page(page) is not None
    out = normaliser.normalise(page, NOW)
    assert page.body() is not None  # landed from its bytes: never decoded to dicts
    assert out.tables["bill_lines"].num_rows > 0
    assert isinstance(out.tables["reservations"], pa.Table)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_clean_sandbox_page_takes_the_typed_read(
    spec: EndpointSpec, sandbox_pages: Pages
) -> None:
    """No field the sandbox serves is unknown to the lake: an unknown one lands in `_extra` and
    makes the typed decoder refuse every page of the endpoint (read column by column instead,
    at about half the speed: docs/benchmarks.md, session 10)."""
    body = sandbox_pages[spec.name][0]
    records = _records(body)
    if not records:
        pytest.skip(f"the sandbox's first {spec.source} page is empty in this profile")
    normaliser = Normaliser(spec, batch_id=BATCH)
    page = normaliser._typed_page(_lazy(spec, body))
    assert page is not None, f"{spec.source}: the typed decoder refused a clean sandbox page"
    out = normaliser.normalise(records, NOW)
    assert out.unknown_fields == {}
    if spec.name == "rates":  # the rate's free-text remark lands in its own column
        want = [r.get("remark") for r in records]
        assert out.quarantined == 0
        assert out.tables["rates"].column("remark").to_pylist() == want
        assert any(want)

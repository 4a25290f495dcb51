"""JSON written straight from the frozen columns (sandbox/world/columns.py) is byte for byte what
rendering the records to dicts and giving them to orjson gives: every kind of column, odd values
(nulls, unicode and escapes, negative and zero money, amounts past the exact range), thawed
records, and a generated world after `advance`, payments and customer merges."""

from __future__ import annotations

import random
from datetime import date
from typing import Any

import httpx
import numpy as np
import orjson
import pytest

from sandbox.protocol import WorldError
from sandbox.query import LazyPage
from sandbox.runner import SandboxSettings, run_sandbox
from sandbox.server import RESERVATION_SECTIONS, create_app
from sandbox.world import World
from sandbox.world.block import (
    Block,
    col_cents,
    col_const,
    col_date,
    col_dt,
    col_int,
    col_key,
    col_vocab,
)
from sandbox.world.columns import ComposedColumn, TaggedNumberColumn
from sandbox.world.pieces import NULL, cents_pieces, json_inner
from sandbox.world.rows import RowPlan, join_pieces
from sandbox.world.store import Table
from tests.sandbox.conftest import authenticate

TEXTS = ["Zoë", 'quote " and \\ back', "tab\tnew\nline\x00\x1f", "\u2028 \u2029", "😀 ok", ""]
VOCAB = [*TEXTS, None, 1.5, 0.0, -2.25, True, False, 0, -7, 2**62]


def _dumps(records: list[dict]) -> list[bytes]:
    return [orjson.dumps(r) for r in records]


def _odd_block(n: int = 400, seed: int = 1, base: int = 1000) -> Block:
    """A block with every kind of column, filled with awkward values."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(-1, len(VOCAB), n).astype(np.int8)
    ints = rng.integers(-(2**40), 2**40, n)
    ints[:4] = [0, -1, 2**62, -(2**62)]
    small = rng.integers(-5, 40, n).astype(np.int16)
    nullable = np.where(rng.random(n) < 0.3, NULL, rng.integers(0, 1000, n)).astype(np.int32)
    wide = np.where(rng.random(n) < 0.3, NULL, rng.integers(0, 10**9, n)).astype(np.int64)
    cents = rng.integers(-(10**7), 10**7, n)
    cents[:12] = [0, -5, 5, -100, 100, 10, -10, 99, 10**15, -(10**15) - 3, 10**15 - 1, 1]
    days = np.where(rng.random(n) < 0.2, 0, rng.integers(700_000, 740_000, n)).astype(np.int32)
    ms = rng.integers(0, 253402300799999, n)  # up to 9999-12-31T23:59:59.999
    ms[:3] = [0, 253402300799999, 86_399_999]
    ms[rng.random(n) < 0.2] = -1
    tags = rng.integers(0, 3, n).astype(np.int8)
    numbers = rng.integers(0, 10**8, n).astype(np.int64)
    numbers[:2] = [0, 10**8 + 5]  # past the width: written as Python does
    letters = rng.integers(0, len(TEXTS), n).astype(np.int8)
    flags = rng.random(n) < 0.5

    def composed(idx, k):  # type: ignore[no-untyped-def]
        return [
            f"{TEXTS[a]}-{b}@x"
            for a, b in zip(letters[idx].tolist(), small[idx].tolist(), strict=True)
        ]

    def plain(idx, k):  # type: ignore[no-untyped-def]  # a getter without pieces
        return [{"nested": TEXTS[a], "n": [a, None]} for a in letters[idx].tolist()]

    fields = (
        "id",
        "big",
        "small",
        "nullable",
        "wide",
        "bool",
        "label",
        "constant",
        "again",
        "money",
        "computed",
        "day",
        "moment",
        "tagged",
        "voucher",
        "composed",
        "plain",
        "unicodé",
    )
    getters = [
        col_key(base),
        col_int(ints),
        col_int(small),
        col_int(nullable, nullable=True),
        col_int(wide, nullable=True),
        col_int(flags),
        col_vocab(codes, VOCAB),
        col_const("const ü"),
        col_vocab(codes, list(reversed(VOCAB))),  # same codes: fused with `label`
        col_cents(cents),
        col_cents(lambda idx: cents[idx] * 3),
        col_date(days),
        col_dt(ms),
        TaggedNumberColumn(tags, ["001", None, "Ü-"], numbers, 8),
        TaggedNumberColumn(tags, [None, "TO-", "Ω"], numbers, 0),
        ComposedColumn(
            composed, ['"', (letters, [json_inner(t) for t in TEXTS]), "-", small, '@x"']
        ),
        plain,
        col_const(None),
    ]
    return Block(base, n, fields, getters)


def test_every_kind_of_column_encodes_like_orjson() -> None:
    block = _odd_block()
    rng = random.Random(3)
    for pos in (
        np.arange(block.n),
        np.array([5]),
        np.array([], dtype=np.int64),
        np.array(rng.sample(range(block.n), 150)),
        np.arange(block.n)[::-7],
    ):
        want = _dumps(block.render(pos)) if len(pos) else []
        assert block.encode(pos) == want
        # the text without its closing brace (details append their sections to it)
        open_text = block.encode_json(pos, close=False).to_pylist()
        assert [t.encode() + b"}" for t in open_text] == want
        # with a leading comma on every row but the first of its group
        first = np.arange(len(pos)) % 3 == 0
        led = block.encode_json(pos, first=first).to_pylist()
        assert [t.encode() for t in led] == [
            (b"" if f else b",") + w for f, w in zip(first, want, strict=True)
        ]


def test_thawed_and_deleted_records_are_served_from_the_overlay() -> None:
    table = Table("billlines", 1)
    block = _odd_block(base=1)
    table.set_block(block)
    rec = table.thaw(11)
    assert rec is not None
    rec.update({"money": -0.5, "label": "changed ✓", "day": None, "big": -3})
    table.delete(12)
    pos = np.arange(5, 40)
    assert block.encode(pos) == _dumps(block.render(pos))
    view = table.records()
    indices = list(range(0, len(view), 7))
    assert view.encode(indices) == _dumps(view.take(indices))


def test_values_outside_a_columns_tables_fall_back_to_orjson() -> None:
    """Tables are built from a column's range; a value outside it (a column changed after the
    plan was made) is caught by the lookup's bounds check and written the generic way."""
    block = _odd_block()
    pos = np.arange(block.n)
    assert block.encode(pos) == _dumps(block.render(pos))  # plans and tables built
    small = block.getters[2].a  # type: ignore[attr-defined]
    small[:50] = 30_000  # outside its small range
    block.getters[11].a[:50] = 1  # type: ignore[attr-defined]  # a day outside the table
    assert block.encode(pos) == _dumps(block.render(pos))


def test_cents_are_written_as_orjson_writes_the_floats() -> None:
    rng = np.random.default_rng(7)
    cents = np.concatenate(
        [
            np.arange(-30_000, 30_000),
            rng.integers(-(10**15) + 1, 10**15, 200_000),
            np.array([10**15, -(10**15), 2**53, -(2**53) + 1, 10**17]),
        ]
    )
    text = join_pieces(cents_pieces(cents, "<", ">"), len(cents)).to_pylist()
    assert [t.encode() for t in text] == [
        b"<" + orjson.dumps(c / 100) + b">" for c in cents.tolist()
    ]


def test_row_plan_folds_keys_and_fuses_lookups() -> None:
    block = _odd_block()
    plan = RowPlan(block.fields, block.getters, close=True)
    kinds = [type(column).__name__ for column, _prefix, _suffix in plan.steps]
    assert "FusedVocab" in kinds or "LookupRun" in kinds
    assert len(plan.steps) < len(block.fields)


# -- a generated world ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def changed_world() -> World:
    """A small world after three days of business, payments and customer merges: records
    thawed out of the columns, new ones, deleted ones."""
    world = World(seed=5, scale="small")
    world.advance(72)
    customers = list(world.keys("customers"))
    for survivor, removed in ((customers[0], customers[1]), (customers[-1], customers[10])):
        world.merge_customers(survivor, removed)
    paid = 0
    for rid in list(world.keys("reservations"))[::97]:
        try:
            world.pay(rid)
            paid += 1
        except WorldError:  # nothing to pay on this one
            continue
    assert paid
    return world


def test_world_lists_encode_like_orjson(changed_world: World) -> None:
    world = changed_world
    checked = 0
    assert world.t["reservations"].block.overlay  # type: ignore[union-attr]  # thawed ones
    assert world.t["customers"].block.n_alive < world.t["customers"].block.n  # type: ignore[union-attr]
    for name in world.t:
        view = world.records(name)
        encode = getattr(view, "encode", None)
        if encode is None:
            continue
        for lo in range(0, len(view), 997):
            indices = list(range(lo, min(len(view), lo + 997)))
            assert encode(indices) == _dumps(view.take(indices)), name
            checked += len(indices)
    assert checked > 10_000
    # children under a path parameter
    for report in list(world.keys("journalreports"))[:20]:
        child = world.child_view("journalentries", report)
        indices = list(range(len(child)))
        assert child.encode(indices) == _dumps(child.take(indices))


@pytest.mark.parametrize(
    "sections",
    [
        set(RESERVATION_SECTIONS),
        {"CUSTOMERBILL"},
        {"AGENTBILL", "SUBJECTS"},
        {"RESERVEDRESOURCES"},
        {"PAYINGCUSTOMERBILL", "CUSTOMERBILL", "RESERVEDRESOURCES"},
    ],
)
def test_reservation_details_encode_like_the_dict_path(
    changed_world: World, sections: set[str]
) -> None:
    world = changed_world
    service = create_app(world).state.service
    view = service._details_view(sections)
    assert view.encode_many is not None
    records, keys = world.records("reservations"), world.keys("reservations")
    thawed = world.t["reservations"].block.overlay  # type: ignore[union-attr]
    assert thawed  # the world changed some generated reservations
    n = len(records)
    for lo, size in ((0, 1000), (n // 2, 333), (n - 150, 150), (5, 1)):
        positions = list(range(lo, min(n, lo + size)))
        page = LazyPage(records, positions, [keys[i] for i in positions])
        want = [orjson.dumps(view.build(r)) for r in records.take(positions)]
        assert list(view.encode_many(page)) == want


def test_a_date_table_matches_the_iso_calendar() -> None:
    days = np.array([date(2024, 2, 29).toordinal(), 0, date(1999, 12, 31).toordinal()])
    block = Block(1, 3, ("id", "day"), [col_key(1), col_date(days.astype(np.int32))])
    assert block.encode(np.arange(3)) == [
        b'{"id":1,"day":"2024-02-29"}',
        b'{"id":2,"day":null}',
        b'{"id":3,"day":"1999-12-31"}',
    ]


# -- over HTTP: the same answers with and without encoding from the columns -----------------------

LISTS = (
    "/distributionchannels",
    "/locations",
    "/accommodationtypes/details",
    "/units",
    "/ratetypes",
    "/ratetypes/rateoptions",
    "/companies",
    "/companies/journalreports",
    "/cashreservations/accounts",
    "/cashreservations/clearance",
    "/customers",
    "/events",
    "/reservations",
    "/reservations/bills",
)


def _changed_twin(seed: int) -> World:
    world = World(seed=seed, scale="small")
    world.advance(30)
    customers = list(world.keys("customers"))
    world.merge_customers(customers[2], customers[3])
    return world


def _walk(
    client: httpx.Client, path: str, pk: str, size: int, pages: int = 10**6, **params: Any
) -> list[bytes]:
    """The pages of a keyset walk (as the pipeline's client reads), as served."""
    bodies: list[bytes] = []
    last = None
    while len(bodies) < pages:
        query = {"size": size, "sort": f"{pk},asc", **params}
        if last is not None:
            query["filter"] = f"{pk}>{last}"
        response = client.get(path, params=query)
        bodies.append(response.content)
        if response.status_code == 204:
            return bodies
        assert response.status_code == 200, response.text
        content = orjson.loads(response.content)["content"]
        if len(content) < size:
            return bodies
        last = content[-1][pk]
    return bodies


def _requests(client: httpx.Client, world: World) -> list[bytes]:
    from sandbox.protocol import COLLECTIONS

    out: list[bytes] = []
    for path in LISTS:
        collection = path.strip("/").split("/")[-1]
        collection = {
            "details": "accommodationtypes",
            "rateoptions": "rateoptions",
            "clearance": "cashclearances",
            "accounts": "cashaccounts",
            "bills": "billlines",
        }.get(collection, collection)
        pk = COLLECTIONS[collection]
        out += _walk(client, path, pk, 1000)
        out += _walk(client, path, pk, 7, pages=4)
        out.append(client.get(path, params={"size": 3, "page": 2}).content)
    details = "/reservations/details"
    out += _walk(client, details, "reservationId", 1, pages=5)
    # Every reservation once in whole documents; another page size and the section choices
    # over the first read-ahead batch and into the next (READ_AHEAD_RECORDS is 1,000): the
    # records are the same, only their cut and their sections differ.
    out += _walk(client, details, "reservationId", 100)
    out += _walk(client, details, "reservationId", 333, pages=4)
    for sections in ("CUSTOMERBILL", "AGENTBILL,SUBJECTS", "RESERVEDRESOURCES,PAYINGCUSTOMERBILL"):
        out += _walk(client, details, "reservationId", 100, pages=12, returnSections=sections)
    ids = list(world.keys("reservations"))
    middle = ids[len(ids) // 2]
    out.append(
        client.get(
            details,
            params={"size": 50, "filter": f"reservationId<{middle}", "sort": "reservationId,desc"},
        ).content
    )
    out.append(client.get(details, params={"size": 50, "filter": "status:[12,21,31]"}).content)
    for rid in ids[:: max(1, len(ids) // 25)] + ids[-5:]:
        out.append(client.get(f"/reservations/{rid}/details").content)
        out.append(client.get(f"/reservations/{rid}/content").content)
        out.append(
            client.get(f"/reservations/{rid}/bills", params={"payerType": "CUSTOMER"}).content
        )
    for report in world.keys("journalreports"):
        out += _walk(client, f"/companies/journalreports/{report}/entries", "journalEntryId", 1000)
    for resource in list(world.keys("accommodationtypes"))[:5]:
        out += _walk(client, f"/accommodationtypes/{resource}/rates", "rateId", 100)
    return out


def test_served_bytes_equal_with_and_without_encoding_from_columns() -> None:
    worlds = [_changed_twin(seed=9), _changed_twin(seed=9)]
    settings = [
        SandboxSettings(seed=9, scale="small", encode_from_columns=True),
        SandboxSettings(seed=9, scale="small", encode_from_columns=False),
    ]
    answers: list[list[bytes]] = []
    with (
        run_sandbox(settings[0], world=worlds[0]) as columns,
        run_sandbox(settings[1], world=worlds[1]) as dicts,
    ):
        for handle, world in ((columns, worlds[0]), (dicts, worlds[1])):
            with httpx.Client(base_url=handle.base_url, timeout=60) as client:
                client.headers["Authorization"] = authenticate(handle, client)
                first = _requests(client, world)
                second = _requests(client, world)  # warm: from the cache
                assert first == second
                answers.append(first)
        assert columns.app.state.service.cache.read_ahead_records > 0
    assert len(answers[0]) == len(answers[1]) > 300
    for k, (got, want) in enumerate(zip(*answers, strict=True)):
        assert got == want, k


def test_a_cold_page_reads_ahead_and_the_next_pages_hit() -> None:
    world = World(seed=3, scale="small")
    with (
        run_sandbox(SandboxSettings(seed=3, scale="small"), world=world) as handle,
        httpx.Client(base_url=handle.base_url, timeout=30) as client,
    ):
        client.headers["Authorization"] = authenticate(handle, client)
        cache = handle.app.state.service.cache
        pages = _walk(client, "/reservations/details", "reservationId", 100, pages=12)
        assert len(pages) == 12
        # the first page encoded a batch of READ_AHEAD_RECORDS; the next nine came from it
        stats = cache.describe()
        assert stats["readAhead"] >= 900 and stats["hits"] >= 900
        assert stats["misses"] <= 2 * 1000
        # a cache without room for a batch reads nothing ahead
        cache.max_bytes = 1000
        before = cache.read_ahead_records
        _walk(client, "/customers", "customerId", 10, pages=2)
        assert cache.read_ahead_records == before


def test_a_read_larger_than_the_cache_keeps_reading_ahead() -> None:
    """A full read of a world larger than the cache drops the oldest batches: its memory
    stays within the budget and its later pages still come from read-ahead batches."""
    world = World(seed=3, scale="small")
    settings = SandboxSettings(seed=3, scale="small", encode_cache_bytes=3_000_000)
    with (
        run_sandbox(settings, world=world) as handle,
        httpx.Client(base_url=handle.base_url, timeout=30) as client,
    ):
        client.headers["Authorization"] = authenticate(handle, client)
        cache = handle.app.state.service.cache
        pages = _walk(client, "/reservations/details", "reservationId", 50)
        stats = cache.describe()
        served = sum(len(orjson.loads(page)["content"]) for page in pages)
        assert served == len(world.keys("reservations")) > 1000
        assert stats["evicted"] > 0 and 0 < stats["bytes"] <= 3_000_000
        assert stats["bytes"] == sum(len(b) for e in cache.entries.values() for b in e.values())
        # most records came from a batch read ahead of their page, up to the last pages
        assert stats["hits"] > served / 2
        assert cache.read_ahead_records > served / 2
        last = orjson.loads(pages[-2])["content"][-1]["reservationId"]
        assert any(last in entries for entries in cache.entries.values())
        # and a second read serves the same bytes
        assert _walk(client, "/reservations/details", "reservationId", 50) == pages

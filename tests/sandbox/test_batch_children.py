"""A page's children rendered in one batch are exactly what rendering them one parent at a time
gives: frozen, thawed (changed after generation), deleted and newly created records alike."""

from __future__ import annotations

import orjson

from sandbox.server import RESERVATION_SECTIONS, create_app
from sandbox.world import World

CHILD_COLLECTIONS = ("reservedresources", "billlines", "subjects")


def _changed_world() -> World:
    world = World(seed=5, scale="small")
    world.advance(72)  # thaws reservations, creates new ones, purges some carts
    return world


def test_children_many_equals_children_one_by_one() -> None:
    world = _changed_world()
    ids = list(world.keys("reservations"))
    # the first, the newest (created during advance, outside the frozen columns) and a spread
    sample = ids[:40] + ids[-40:] + ids[:: max(1, len(ids) // 200)] + [-1, 10**12]
    for collection in CHILD_COLLECTIONS:
        batched = world.children_many(collection, sample)
        single = [world.children(collection, rid) for rid in sample]
        assert batched == single, collection
        assert sum(map(len, batched)) > len(sample)  # children were really rendered


def test_details_page_encoded_in_one_batch_is_byte_identical() -> None:
    world = _changed_world()
    service = create_app(world).state.service
    view = service._details_view(set(RESERVATION_SECTIONS))
    assert view.encode_many is not None
    records = list(world.records("reservations"))
    pages = [records[:100], records[-100:], records[len(records) // 2 :][:100]]
    for page in pages:
        batched = view.encode_many(page)
        assert batched == [view.encode(r) for r in page]
        assert batched == [orjson.dumps(view.build(r)) for r in page]


def test_block_positions_of_many_parents_match_one_by_one() -> None:
    import numpy as np

    from sandbox.world.block import Block, col_int, col_key

    unsorted = np.array([9, 3, 3, 7, 3, 9, 1, 7], dtype=np.int32)
    for parent_sorted in (False, True):
        parents = np.sort(unsorted) if parent_sorted else unsorted
        block = Block(
            100,
            len(parents),
            ("id", "parentId"),
            [col_key(100), col_int(parents)],
            parent=parents,
            parent_sorted=parent_sorted,
        )
        asked = [3, 9, 4, 7, 1, 3, -5, 2**40]
        for deleted in ((), (101, 105), (100, 103, 104, 107)):
            for key in deleted:
                block.delete(key)
            flat, counts = block.children_positions(asked)
            one_by_one = [block.child_positions(p) for p in asked]
            assert counts == [len(p) for p in one_by_one]
            assert flat.tolist() == [int(x) for p in one_by_one for x in p]


def test_a_warm_page_is_served_without_rendering_records(monkeypatch) -> None:
    """The second read of a page answers from the encode cache by key: no record is rendered."""
    import httpx

    from sandbox.runner import SandboxSettings, run_sandbox
    from sandbox.world.block import Block
    from tests.sandbox.conftest import authenticate

    rendered: list[int] = []
    original = Block.render

    def counting(self: Block, idx):  # type: ignore[no-untyped-def]
        out = original(self, idx)
        rendered.append(len(out))
        return out

    monkeypatch.setattr(Block, "render", counting)
    with (
        run_sandbox(SandboxSettings(seed=5, scale="small")) as sb,
        httpx.Client(base_url=sb.base_url, timeout=30) as c,
    ):
        c.headers["Authorization"] = authenticate(sb, c)
        for path, size in (("/reservations/details", 50), ("/customers", 500)):
            params = {"size": size, "page": 1}
            first = c.get(path, params=params)
            assert first.status_code == 200
            before = sum(rendered)
            assert before > 0
            second = c.get(path, params=params)
            assert second.content == first.content
            assert sum(rendered) == before, path  # nothing rendered for the warm page
            rendered.clear()


def test_child_view_is_children_in_key_order_with_its_keys() -> None:
    world = _changed_world()
    cases = [("journalentries", k, "journalEntryId") for k in world.keys("journalreports")]
    ids = list(world.keys("reservations"))
    cases += [("reservedresources", k, "reservedResourceId") for k in ids[:30] + ids[-30:]]
    cases += [("rates", k, "rateId") for k in world.keys("accommodationtypes")]
    assert cases
    for collection, parent, pk in cases:
        view = world.child_view(collection, parent)
        records = world.children(collection, parent)
        assert list(view) == records, (collection, parent)
        assert view.key_list == [r[pk] for r in records] == sorted(view.key_list)
        if len(view) > 2:
            assert view.take([len(view) - 1, 0]) == [records[-1], records[0]]
            assert view[1:3] == records[1:3] and view[-1] == records[-1]


def test_get_many_equals_get_one_by_one() -> None:
    world = _changed_world()
    ids = list(world.keys("reservations"))
    gone = ids[5]
    world.t["reservations"].delete(gone)  # a deleted frozen record reads None
    # frozen, thawed and created records, a deleted one, keys outside the table, not a key
    sample = ids[:40] + ids[-40:] + ids[:: max(1, len(ids) // 200)] + [gone, -1, 0, 10**12]
    batched = world.get_many("reservations", sample)
    assert batched == [world.get("reservations", k) for k in sample]
    assert batched[sample.index(gone)] is None
    assert sum(r is not None for r in batched) > len(sample) - 10
    assert world.get_many("reservations", ["x", 3]) == [None, world.get("reservations", 3)]


class _OneByOne:
    """The world through the protocol only: no batch reads (`children_many`, `get_many`)."""

    def __init__(self, world: World) -> None:
        self._world = world

    def records(self, collection: str):
        return self._world.records(collection)

    def get(self, collection: str, key: int):
        return self._world.get(collection, key)

    def children(self, collection: str, parent: int):
        return self._world.children(collection, parent)


def test_owner_unit_nights_read_in_batches_equal_one_by_one(monkeypatch) -> None:
    from sandbox.world import owner_rule
    from sandbox.world.owner_rule import contracts_by_unit, unit_nights

    world = _changed_world()
    units = set(contracts_by_unit(world.records("owners")))
    candidates = list(world.keys("reservations"))
    monkeypatch.setattr(owner_rule, "_BATCH", 97)  # several batches, the last one short
    for picked in (candidates, None):
        batched = unit_nights(world, units, picked)
        assert batched == unit_nights(_OneByOne(world), units, picked)
        assert len({n["reservation_id"] for n in batched}) > 20
        assert any(n["room"] for n in batched)

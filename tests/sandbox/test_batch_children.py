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

    from sandbox.world.store import Block, col_int, col_key

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

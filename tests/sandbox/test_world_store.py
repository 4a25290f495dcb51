"""The world's record table: pk order, bisect lookups, tombstoned deletes, child index."""

from __future__ import annotations

import pytest

from sandbox.world.store import Table, record_factory


def _line(key: int, parent: int) -> dict[str, int]:
    return {"reservationBillLineId": key, "reservationId": parent}


def test_add_get_keys_records_in_pk_order() -> None:
    t = Table("billlines", 1)
    for parent in (10, 11, 10):
        t.add(_line(t.new_id(), parent))
    assert t.key_list() == [1, 2, 3]
    assert [r["reservationBillLineId"] for r in t.records()] == [1, 2, 3]
    assert t.get(2) == _line(2, 11)
    assert t.get(4) is None and t.get(0) is None
    assert t.get("2") is None  # type: ignore[arg-type]  # a key of another kind: not found
    assert [r["reservationBillLineId"] for r in t.children(10)] == [1, 3]
    assert len(t) == 3
    with pytest.raises(ValueError):
        t.add(_line(3, 10))


def test_delete_leaves_no_trace_after_the_next_read() -> None:
    t = Table("billlines", 1)
    for parent in (10, 11, 10, 12):
        t.add(_line(t.new_id(), parent))
    assert t.delete(3) == _line(3, 10)
    assert t.delete(3) is None
    assert len(t) == 3
    assert t.get(3) is None
    assert t.children(10) == [_line(1, 10)]
    assert t.key_list() == [1, 2, 4]
    assert [r["reservationBillLineId"] for r in t.records()] == [1, 2, 4]
    t.delete(12 - 8)
    t.delete(1)
    assert t.children(12) == [] and t.children(10) == []
    t.add(_line(t.new_id(), 13))  # ids keep increasing after deletes
    assert t.key_list() == [2, 5]
    assert t.get(5) == _line(5, 13)


def test_record_factory_builds_plain_dicts_in_field_order() -> None:
    make = record_factory("Thing", ("thingId", "name", "value"))
    rec = make(1, "a", 2.5)
    assert type(rec) is dict
    assert list(rec.items()) == [("thingId", 1), ("name", "a"), ("value", 2.5)]
    rec["value"] = 3.0
    assert rec == {"thingId": 1, "name": "a", "value": 3.0}

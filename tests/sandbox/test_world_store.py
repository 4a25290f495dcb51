"""The world's record table: pk order, bisect lookups, tombstoned deletes, child index."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from sandbox.world.block import (
    Block,
    col_cents,
    col_const,
    col_date,
    col_int,
    col_key,
    col_vocab,
    record_factory,
)
from sandbox.world.pieces import NULL
from sandbox.world.store import Table


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


# ---------------------------------------------------------------------------------------------
# Frozen blocks (records kept as columns, rendered on demand)


LINE_FIELDS = (
    "reservationBillLineId",
    "reservationId",
    "payerType",
    "total",
    "startDate",
    "rateId",
    "statusName",
)


def _line_block(parents: list[int], *, parent_sorted: bool = True) -> Block:
    n = len(parents)
    parent = np.asarray(parents, dtype=np.int32)
    return Block(
        1,
        n,
        LINE_FIELDS,
        [
            col_key(1),
            col_int(parent),
            col_vocab(np.array([k % 2 for k in range(n)], dtype=np.int8), ["CUSTOMER", "AGENT"]),
            col_cents(np.arange(n, dtype=np.int64) * 125),
            col_date(np.array([0 if k == 0 else 739000 + k for k in range(n)], dtype=np.int32)),
            col_int(
                np.array([NULL if k % 3 == 0 else k for k in range(n)], dtype=np.int32),
                nullable=True,
            ),
            col_const("BOOKED"),
        ],
        parent=parent,
        parent_sorted=parent_sorted,
    )


def test_block_renders_wire_dicts_and_serves_children() -> None:
    t = Table("billlines", 1)
    t.set_block(_line_block([10, 10, 11, 12, 12, 12]))
    rec = t.get(2)
    assert rec == {
        "reservationBillLineId": 2,
        "reservationId": 10,
        "payerType": "AGENT",
        "total": 1.25,
        "startDate": date.fromordinal(739001).isoformat(),
        "rateId": 1,
        "statusName": "BOOKED",
    }
    assert type(rec) is dict and list(rec) == list(LINE_FIELDS)
    assert t.get(1)["startDate"] is None and t.get(1)["rateId"] is None
    assert t.get(0) is None and t.get(7) is None and t.get("2") is None  # type: ignore[arg-type]
    assert [r["reservationBillLineId"] for r in t.children(12)] == [4, 5, 6]
    assert t.children(99) == [] and t.child_keys(10) == [1, 2]
    # the list part continues the keys; views join both parts in key order
    t.add({"reservationBillLineId": t.new_id(), "reservationId": 10})
    assert list(t.key_list()) == [1, 2, 3, 4, 5, 6, 7] and len(t) == 7
    assert [r["reservationBillLineId"] for r in t.children(10)] == [1, 2, 7]
    recs = t.records()
    assert [r["reservationBillLineId"] for r in recs[5:]] == [6, 7]
    assert recs[-1] == {"reservationBillLineId": 7, "reservationId": 10}
    assert [r["reservationBillLineId"] for r in recs.take([6, 0, 3])] == [7, 1, 4]
    assert recs == [t.get(k) for k in range(1, 8)]


def test_block_thaw_delete_and_unsorted_parents() -> None:
    t = Table("journalentries", 1)
    t.set_block(_line_block([30, 20, 30, 20], parent_sorted=False))
    assert [r["reservationBillLineId"] for r in t.children(30)] == [1, 3]
    assert [r["reservationBillLineId"] for r in t.children(20)] == [2, 4]
    # a copy from get() is not the served record; a thawed one is
    t.get(3)["total"] = 99.0
    assert t.get(3)["total"] == 2.5
    t.thaw(3)["total"] = 99.0
    assert t.get(3)["total"] == 99.0 and t.records()[2]["total"] == 99.0
    assert t.records().project([2, 3], ["total"]) == [t.get(3), {"total": 3.75}]
    assert t.delete(1) is not None and t.delete(1) is None
    assert list(t.key_list()) == [2, 3, 4] and len(t) == 3
    assert [r["reservationBillLineId"] for r in t.records()] == [2, 3, 4]
    assert [r["reservationBillLineId"] for r in t.children(30)] == [3]
    with pytest.raises(ValueError):
        t.set_block(_line_block([1]))

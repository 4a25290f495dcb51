"""The typed page read equals the column-by-column reference, record for record.

The reference normalises each record alone with the typed read switched off (every column
through `assets.convert.CONVERTERS`); the typed read normalises the whole page at once. Random
pages mix clean records with the drift and faults the lake must handle: bad values, missing and
unknown fields (PII-like too), reordered keys, nested objects, non-object child items.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assets.catalogue import SPECS
from assets.normalise import Normalised, Normaliser
from tests.assets.fake_service import default_fixture, reservation

SPEC = {s.name: s for s in SPECS}
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
BATCH = "20260101T120000Z-00000001"

# Odd values, booleans and integers of 2**53 or more in numeric fields too (the typed read
# refuses a boolean where a number belongs and keeps big integers exact, as the converters do).
ODD_VALUES = st.sampled_from(
    [None, "abc", 2.5, 7.0, -3, "7", "", "2026-13-45", "2026-02-30", "2026-02-01",
     "2026-04-02T09:53:24.866", "2026-04-02T09:53:24.866+02:00", {"x": 1}, [1, 2], 10**15,
     "CUSTOMER", 77, 21, True, False, 2**53 + 1, -(2**60)]
)  # fmt: skip


def _base(kind: str, i: int) -> dict[str, Any]:
    if kind == "reservations":
        return reservation(i)
    if kind == "locations":
        rec = copy.deepcopy(default_fixture()["locations"][0])
        rec["locationId"] = i
        return rec
    rec = copy.deepcopy(default_fixture()["customers"][0])
    rec["customerId"] = i
    return rec


NUMERIC = {"id", "int", "float", "money"}


def _kinds(name: str) -> dict[str, str]:
    return {c.source: c.kind for t in SPEC[name].tables for c in t.columns}


@st.composite
def pages(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    name = draw(st.sampled_from(["reservations", "locations", "customers"]))
    kinds = _kinds(name)
    records = []
    for i in range(1, draw(st.integers(1, 6)) + 1):
        rec = _base(name, i)
        targets: list[dict[str, Any]] = [rec]
        for key in ("reservedResources", "customerBill", "agentBill", "subjects"):
            targets.extend(x for x in rec.get(key, []) if isinstance(x, dict))
        if isinstance(rec.get("visitAddress"), dict):
            targets.append(rec["visitAddress"])
        for _ in range(draw(st.integers(0, 3))):
            obj = draw(st.sampled_from(targets))
            action = draw(st.sampled_from(["set", "drop", "unknown", "reorder"]))
            keys = sorted(obj)
            if action == "set" and keys:
                key = draw(st.sampled_from(keys))
                value = draw(ODD_VALUES)
                if isinstance(value, dict | list) and kinds.get(key) in NUMERIC:
                    continue
                obj[key] = value
            elif action == "drop" and keys:
                del obj[draw(st.sampled_from(keys))]
            elif action == "unknown":
                obj[draw(st.sampled_from(["energyLabel", "mobileNumber", "colour"]))] = draw(
                    ODD_VALUES
                )
            elif action == "reorder":
                items = list(obj.items())
                obj.clear()
                obj.update(reversed(items))
        if name == "reservations" and draw(st.booleans()):
            rec["payingCustomerBill"] = draw(st.sampled_from([[None], ["x"], "oops", None, []]))
        records.append(rec)
    return name, records


def _reference(name: str, records: list[dict[str, Any]], **kw: Any) -> list[Normalised]:
    normaliser = Normaliser(SPEC[name], batch_id=BATCH, **kw)
    normaliser._typed_page = lambda records: None  # type: ignore[method-assign]
    return [normaliser.normalise([r], NOW) for r in records]


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return [
        {k: json.loads(v) if k == "_extra" and v is not None else v for k, v in row.items()}
        for row in table.to_pylist()
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages(), st.booleans())
def test_page_equals_reference_record_by_record(page: tuple[str, list], pii: bool) -> None:
    name, records = page
    fast = Normaliser(SPEC[name], batch_id=BATCH, include_pii=pii).normalise(
        copy.deepcopy(records), NOW
    )
    ref = _reference(name, copy.deepcopy(records), include_pii=pii)
    assert fast.records == len(records)
    assert fast.quarantined == sum(r.quarantined for r in ref)
    assert fast.quarantine.column("reason").to_pylist() == [
        reason for r in ref for reason in r.quarantine.column("reason").to_pylist()
    ]
    assert fast.unknown_fields == sum(
        (r.unknown_fields for r in ref), start=type(fast.unknown_fields)()
    )
    assert fast.dropped_pii_fields == sum(
        (r.dropped_pii_fields for r in ref), start=type(fast.dropped_pii_fields)()
    )
    for table, got in fast.tables.items():
        assert got.schema == ref[0].tables[table].schema
        expected = [row for r in ref for row in _rows(r.tables[table])]
        # the page lands child rows section by section; the reference, record by record
        assert sorted(_rows(got), key=_order) == sorted(expected, key=_order)
    # records with bad children only: their good rows and the keys of what is bad
    for held in ("partial", "lost"):
        got_held = getattr(fast, held)
        names = set(got_held) | {t for r in ref for t in getattr(r, held)}
        for table in names:
            got_rows = _rows(got_held[table]) if table in got_held else []
            expected = [row for r in ref for row in _rows(getattr(r, held).get(table, _NONE))]
            assert sorted(got_rows, key=_order) == sorted(expected, key=_order), (held, table)


_NONE = pa.table({})


def _order(row: dict[str, Any]) -> str:
    return json.dumps(row, default=str, sort_keys=True)

"""Hostile pages through `Normaliser`, with the C extension (`assets._columns`) and without it:
the same tables, quarantine and counters, or the same exception. (The C's own edges, its
references and memory: tests/assets/test_columns_ext.py.)

The pages are seven of the fake service's endpoints (every kind of column) with their values
replaced by raw JSON text of every edge: max/min int64 and one beyond, 2**53 +- 1 in float
fields, the largest and smallest doubles, -0.0, numbers beyond a double (the decoders refuse
them), empty, 1 MB and non-ASCII strings, escapes (NUL, quotes, surrogate pairs and lone
surrogates), dates at the calendar's ends and beside them (0000-01-01, 9999-12-31, 2024-02-29,
2023-02-29, 24:00:00, leap seconds), nested objects missing, null or empty, sections empty, null,
of another type or of hundreds of items, records that are not objects, pages of no records.

The suite runs a few hundred seeded examples; `-m chaos` runs thousands. The same harness, run
with the extension built under AddressSanitizer/UBSan, is how the C is checked for memory
errors (docs/benchmarks.md, "Session 20: the normaliser's C extension, fuzzed").
"""

from __future__ import annotations

import copy
import os
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from assets.catalogue import SPECS
from assets.normalise import Normalised, Normaliser
from service.lazy import LazyRecords, skim
from tests.assets.fake_service import default_fixture, reservation
from tests.assets.same_normalised import assert_same

SPEC = {s.name: s for s in SPECS}
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
BATCH = "20260101T120000Z-00000001"
NAMES = [
    "reservations", "locations", "customers", "distribution_channels", "accommodation_types",
    "resource_reservability", "offers",
]  # fmt: skip
MB = 1 << 20

# raw JSON text of edge values, written into the page as they are (not re-encoded)
NUMBERS = [
    "0", "-0", "-0.0", "1", "-1", "2147483647", "2147483648", "-2147483649",
    "9223372036854775807", "-9223372036854775808", "9223372036854775808",
    "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993",
    "9007199254740992.0", "9007199254740993.0", "1e308", "-1.7976931348623157e308",
    "5e-324", "1e-400", "1e400", "-1e400", "0.1", "2.5", "7.0", "1E2", "123456789012345678901234567890",
]  # fmt: skip
DATES = [
    "0000-01-01", "0001-01-01", "9999-12-31", "2024-02-29", "2023-02-29", "1900-02-29",
    "2000-02-29", "2026-13-01", "2026-00-10", "2026-01-00", "2026-01-32", "2026-7-1",
    "0000-01-01T00:00:00", "0001-01-01T00:00:00.000", "9999-12-31T23:59:59.999",
    "2024-02-29T12:00:00", "2023-02-29T12:00:00", "2026-07-01T24:00:00",
    "2026-07-01T23:59:60", "2016-12-31T23:59:60.000", "2026-07-01T23:60:00",
    "2026-07-01T10:00:00.1234", "2026-07-01T10:00:00.", "2026-07-01T10:00:00Z",
    "2026-07-01T10:00:00+02:00", "2026-07-01 10:00:00", "2026-07-01t10:00:00",
    "1969-12-31T23:59:59.999", "1970-01-01T00:00:00", "+2026-07-01", "-001-01-01",
    "2026-07-01\\u0000", "２０２６-07-01", "2026-07-01T10:00:00.12\\u00e9",
]  # fmt: skip
TEXTS = [
    '""', '" "', '"\\u0000"', '"a\\u0000b\\"c\\\\"', '"\\u00e9t\\u00e9"', '"\\ud83c\\udf0a"',
    '"\\ud800"', '"\\udc00"', '"\\ud800\\u0041"', '"é 漢字 🌊"', '"\\/\\b\\f\\n\\r\\t"',
    '"\\uFFFF\\uFFFE"', '"\\u007f\\u0080"',
]  # fmt: skip
_KINDS = ("id", "int", "float", "money", "bool", "str", "date", "datetime")
OTHER = ["null", "true", "false", "[]", "{}", "[1,2]", '{"a":1}', '"1"', "[null]"]
LONG = [  # built on demand: a 1 MB ASCII string, 1 MB of two-byte and of four-byte characters
    ("x", MB), ("é", MB // 2), ("🌊", MB // 4),
]  # fmt: skip


def _kinds(name: str) -> dict[str, str]:
    """Kind of each wire field by its last name (a section's or nested object's own fields)."""
    return {c.source.split(".")[-1]: c.kind for t in SPEC[name].tables for c in t.columns}


def _typed_values(kind: str | None, long: bool) -> st.SearchStrategy[str]:
    """Raw values of the field's own JSON type (the page stays on the typed read, the C's)."""
    numbers = st.one_of(
        st.sampled_from(NUMBERS), st.integers(-(2**64), 2**64).map(str), st.floats().map(repr)
    )
    if kind in ("id", "int"):
        return st.one_of(
            st.sampled_from([v for v in NUMBERS if v.lstrip("-").isdigit()]),
            st.integers(-(2**64), 2**64).map(str),
        )
    if kind in ("float", "money"):
        return numbers.filter(lambda v: v not in ("nan", "inf", "-inf"))
    if kind == "bool":
        return st.sampled_from(["true", "false", "null"])
    if kind in ("date", "datetime"):
        return st.one_of(st.sampled_from([f'"{d}"' for d in DATES]), st.sampled_from(TEXTS))
    texts = [st.sampled_from(TEXTS), st.text(max_size=8).map(lambda s: orjson.dumps(s).decode())]
    if long:
        texts.append(st.sampled_from(LONG).map(lambda c: orjson.dumps(c[0] * c[1]).decode()))
    return st.one_of(*texts)


def _raw_values(long: bool) -> st.SearchStrategy[str]:
    parts = [
        st.sampled_from(NUMBERS),
        st.sampled_from([f'"{d}"' for d in DATES]),
        st.sampled_from(TEXTS),
        st.sampled_from(OTHER),
        st.integers(-(2**64), 2**64).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.text(max_size=8).map(lambda s: orjson.dumps(s).decode()),
    ]
    if long:
        parts.append(st.sampled_from(LONG).map(lambda c: orjson.dumps(c[0] * c[1]).decode()))
    return st.one_of(*parts)


def _base(name: str, i: int) -> dict[str, Any]:
    if name == "reservations":
        return reservation(i)
    rec = copy.deepcopy(default_fixture()[name][0])
    rec[SPEC[name].table.columns[0].source] = i
    return rec


@st.composite
def hostile_pages(draw: st.DrawFn, long: bool = False) -> tuple[str, bytes]:
    """(spec name, the page's JSON body): records with raw edge values written in."""
    name = draw(st.sampled_from(NAMES))
    kinds = _kinds(name)
    typed = draw(st.integers(0, 3)) > 0  # most pages keep every value's JSON type
    raws: list[str] = []

    def mark(value: str) -> str:
        raws.append(value)
        return f"@@{len(raws) - 1}@@"

    records: list[Any] = []
    for i in range(1, draw(st.integers(0, 5)) + 1):
        rec = _base(name, i)
        targets: list[dict[str, Any]] = [rec]
        for value in rec.values():
            if isinstance(value, dict):
                targets.append(value)
            elif isinstance(value, list):
                targets.extend(x for x in value if isinstance(x, dict))
        for _ in range(draw(st.integers(0, 8))):
            obj = draw(st.sampled_from(targets))
            if not obj:
                continue
            key = draw(st.sampled_from(sorted(obj)))
            old = obj[key]
            what = draw(st.integers(0, 9))
            if typed and (isinstance(old, list | dict) or kinds.get(key) not in _KINDS):
                what = draw(st.sampled_from([0, 1, 9])) if isinstance(old, list | dict) else 0
            if what == 0:  # missing
                del obj[key]
            elif typed and what == 1:  # null
                obj[key] = None
            elif typed:
                obj[key] = mark(draw(_typed_values(kinds.get(key), long)))
            elif isinstance(old, list) and what <= 3:  # empty, null or hundreds of items
                obj[key] = draw(
                    st.sampled_from([[], None, old * 300, [None], [1, "a"], [old[:1] or {}]])
                )
            elif isinstance(old, dict) and what <= 3:  # null, empty, another type
                obj[key] = draw(st.sampled_from([None, {}, [], "x", {"unknownField": 1}]))
            else:
                obj[key] = mark(draw(_raw_values(long)))
        if not typed and draw(st.integers(0, 10)) == 0:  # a record that is not an object
            records.append(mark(draw(st.sampled_from(["null", "1", '"r"', "[]"]))))
        else:
            records.append(rec)
    text = orjson.dumps({"content": records}).decode()
    for j, raw in enumerate(raws):
        text = text.replace(f'"@@{j}@@"', raw, 1)
    return name, text.encode()


def _lazy(name: str, body: bytes) -> Any:
    spec = SPEC[name]
    page = skim(body, spec.table.columns[0].source, spec.source)
    if page is None:  # the skim cannot vouch for it: the client decodes it (or refuses it)
        return orjson.loads(body)["content"]
    return page if isinstance(page, LazyRecords) else page["content"]


def _normalise(name: str, body: bytes, compiled: bool, pii: bool) -> Normalised | BaseException:
    normaliser = Normaliser(SPEC[name], batch_id=BATCH, include_pii=pii)
    if compiled:
        assert normaliser._reader._compiled is not None, "the extension is not built"
    else:
        normaliser._reader._compiled = None
    try:
        return normaliser.normalise(_lazy(name, body), NOW)
    except Exception as e:  # compared with the other path's
        return e


def _check(page: tuple[str, bytes], pii: bool) -> None:
    name, body = page
    assert_same(_normalise(name, body, True, pii), _normalise(name, body, False, pii))


@seed(20_2026)
@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_pages(), st.booleans())
def test_hostile_pages_land_as_in_python(page: tuple[str, bytes], pii: bool) -> None:
    _check(page, pii)


@pytest.mark.chaos
@settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "5000")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_pages(long=True), st.booleans())
def test_hostile_pages_land_as_in_python_long(page: tuple[str, bytes], pii: bool) -> None:
    _check(page, pii)

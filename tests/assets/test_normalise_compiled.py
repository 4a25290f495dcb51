"""The typed read's columns built by the C extension (`assets.compiled`) equal those built in
Python (`assets.typed`), value for value, on every table; and without the extension the
normaliser still works, in Python, and says so once.

Pages are generated (hypothesis) from the fake service's reservations, locations and customers
with values of every edge drawn into their fields: integers at and beyond int64 and 2**53,
floats, booleans, text with non-ASCII characters, dates and datetimes in the service's form and
in others Arrow's cast accepts or refuses (no zero padding, a space for `T`, a zone, two or six
fractional digits, 24:00, Feb 30, year 0). Each page is normalised with the extension and with
it switched off; tables, quarantine, held rows and counters must be equal.
"""

from __future__ import annotations

import copy
import logging
from datetime import UTC, date, datetime
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assets import compiled
from assets.catalogue import SPECS
from assets.normalise import Normalised, Normaliser
from service.lazy import LazyRecords, skim
from tests.assets.fake_service import default_fixture, reservation
from tests.assets.same_normalised import assert_same

SPEC = {s.name: s for s in SPECS}
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
BATCH = "20260101T120000Z-00000001"

# JSON integers as the client decodes them (orjson: from -2**63 to 2**64 - 1)
INTS = st.integers(-(2**63), 2**64 - 1)
EDGE_INTS = [0, -1, 2**31, 2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1, 2**63, -(2**63), 2**64 - 1]
ODD_DATES = [
    "2026-7-1", "2026-07-01 10:00:00", "2026-07-01T10:00:00Z", "2026-07-01T10:00:00.12",
    "2026-07-01T10:00:00.123456", "2026-07-01T24:00:00", "2026-07-01T10:00:60", "2026-02-30",
    "2026-02-29", "2024-02-29", "0000-01-01", "9999-12-31T23:59:59.999", "2026-07-01T10:00",
    "2026-07-01T10", "2026-07-01 ", "２０２６-07-01", "", "abc",
]  # fmt: skip


def _datetime_text(d: datetime, spec: str) -> str:
    return d.isoformat(timespec=spec)


DATES = st.one_of(
    st.dates().map(date.isoformat),
    st.builds(
        _datetime_text, st.datetimes(), st.sampled_from(["seconds", "milliseconds", "microseconds"])
    ),
    st.sampled_from(ODD_DATES),
)
VALUES = {
    "id": st.one_of(INTS, st.sampled_from(EDGE_INTS)),
    "int": st.one_of(INTS, st.sampled_from(EDGE_INTS)),
    "float": st.one_of(
        st.floats(allow_nan=False, allow_infinity=False), INTS, st.sampled_from(EDGE_INTS)
    ),
    "money": st.one_of(
        st.floats(allow_nan=False, allow_infinity=False), INTS, st.sampled_from(EDGE_INTS)
    ),
    "bool": st.booleans(),
    "str": st.text(max_size=12),
    "date": DATES,
    "datetime": DATES,
}
ANY = st.one_of(
    st.none(),
    st.booleans(),
    INTS,
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    DATES,
)


def _base(name: str, i: int) -> dict[str, Any]:
    if name == "reservations":
        return reservation(i)
    rec = copy.deepcopy(default_fixture()[name][0])
    rec[SPEC[name].table.columns[0].source] = i
    return rec


def _kinds(name: str) -> dict[str, str]:
    """Kind of each wire field by its last name (a section's or nested object's own fields)."""
    return {c.source.split(".")[-1]: c.kind for t in SPEC[name].tables for c in t.columns}


@st.composite
def pages(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    name = draw(st.sampled_from(["reservations", "locations", "customers"]))
    kinds = _kinds(name)
    records = []
    for i in range(1, draw(st.integers(1, 5)) + 1):
        rec = _base(name, i)
        targets: list[dict[str, Any]] = [rec]
        for value in rec.values():
            if isinstance(value, dict):
                targets.append(value)
            elif isinstance(value, list):
                targets.extend(x for x in value if isinstance(x, dict) and "language" not in x)
        for _ in range(draw(st.integers(0, 6))):
            obj = draw(st.sampled_from(targets))
            key = draw(st.sampled_from(sorted(obj)))
            if isinstance(obj[key], list | dict):
                continue
            kind = kinds.get(key)
            strategy = VALUES.get(kind, ANY) if draw(st.integers(0, 4)) else ANY
            obj[key] = draw(st.one_of(st.none(), strategy))
        records.append(rec)
    return name, records


def _both(name: str, records: list[dict[str, Any]], pii: bool) -> tuple[Normalised, Normalised]:
    """The page normalised with the extension and without it."""
    body = orjson.dumps({"content": records})
    fast = Normaliser(SPEC[name], batch_id=BATCH, include_pii=pii)
    slow = Normaliser(SPEC[name], batch_id=BATCH, include_pii=pii)
    assert fast._reader._compiled is not None, (
        "the extension is not built: install a C compiler (e.g. gcc) and run `make setup`"
    )
    slow._reader._compiled = None
    return fast.normalise(_lazy(name, body), NOW), slow.normalise(_lazy(name, body), NOW)


def _lazy(name: str, body: bytes) -> LazyRecords | list[dict[str, Any]]:
    spec = SPEC[name]
    page = skim(body, spec.table.columns[0].source, spec.source)
    if page is None:  # the skim cannot vouch for it: the client decodes it
        return orjson.loads(body)["content"]
    return page if isinstance(page, LazyRecords) else page["content"]


def test_the_extension_is_built() -> None:
    """`make setup` builds it; without it every comparison below would compare Python with
    itself."""
    assert compiled.COMPILED, (
        "assets._columns is not built: install a C compiler (e.g. `apt-get install gcc`) and run `make setup`"
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages(), st.booleans())
def test_the_extension_lands_what_python_lands(page: tuple[str, list], pii: bool) -> None:
    name, records = page
    assert_same(*_both(name, records, pii))


@pytest.mark.parametrize("name", ["reservations", "locations", "customers"])
def test_clean_pages_take_the_extension(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean page is built by the extension (not handed back to Python), and lands the same."""
    records = [_base(name, i) for i in range(1, 30)]
    normaliser = Normaliser(SPEC[name], batch_id=BATCH)
    built: list[object] = []
    reader = normaliser._reader._compiled
    assert reader is not None
    page = reader.page
    monkeypatch.setattr(reader, "page", lambda rows: built.append(page(rows)) or built[-1])
    out = normaliser.normalise(_lazy(name, orjson.dumps({"content": records})), NOW)
    assert len(built) == 1 and built[0] is not None
    assert out.quarantined == 0
    assert_same(out, _both(name, records, False)[1])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("status", 2**63),  # beyond int64: the extension hands the page back to Python
        ("reservationNumber", 'a\\u0000b\\"c'),  # escapes: NUL, a quote
        ("reservationNumber", "Zee \\u00e9t\\u00e9 \\ud83c\\udf0a"),  # non-ASCII text
        ("arrivalDate", "2026-02-30"),  # not a date: Arrow's cast decides, as in Python
        ("reservationDate", "2026-01-02 10:11:12"),  # another form Arrow's cast accepts
    ],
)
def test_edge_values_land_as_in_python(field: str, value: Any) -> None:
    rec = reservation(1)
    rec[field] = "@@"
    text = orjson.dumps({"content": [rec, reservation(2)]}).decode()
    body = text.replace('"@@"', str(value) if isinstance(value, int) else f'"{value}"').encode()
    fast = Normaliser(SPEC["reservations"], batch_id=BATCH)
    slow = Normaliser(SPEC["reservations"], batch_id=BATCH)
    slow._reader._compiled = None
    assert_same(
        fast.normalise(_lazy("reservations", body), NOW),
        slow.normalise(_lazy("reservations", body), NOW),
    )


def test_without_the_extension_python_builds_the_columns_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    records = [reservation(i) for i in range(1, 6)]
    want = Normaliser(SPEC["reservations"], batch_id=BATCH).normalise(copy.deepcopy(records), NOW)
    monkeypatch.setattr(compiled, "_columns", None)
    monkeypatch.setattr(compiled, "COMPILED", False)
    monkeypatch.setattr(compiled, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="assets.compiled"):
        first = Normaliser(SPEC["reservations"], batch_id=BATCH)
        second = Normaliser(SPEC["locations"], batch_id=BATCH)
    assert first._reader._compiled is None and second._reader._compiled is None
    said = [r.getMessage() for r in caplog.records if r.name == "assets.compiled"]
    assert len(said) == 1 and "not built" in said[0]
    got = first.normalise(copy.deepcopy(records), NOW)
    assert first._typed_page(copy.deepcopy(records)) is not None  # still the typed read
    assert_same(got, want)


def test_structs_the_extension_cannot_read_leave_the_columns_to_python(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A msgspec whose Structs keep their fields otherwise than in slots: the normaliser still
    works, in Python, and says so once (not an error at every page, nor a crash)."""
    records = [reservation(i) for i in range(1, 4)]
    want = Normaliser(SPEC["reservations"], batch_id=BATCH).normalise(copy.deepcopy(records), NOW)

    def not_a_slot(descriptor: object) -> int:
        raise TypeError("not a member descriptor")

    monkeypatch.setattr(compiled._columns, "member_offset", not_a_slot)
    monkeypatch.setattr(compiled, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="assets.compiled"):
        first = Normaliser(SPEC["reservations"], batch_id=BATCH)
        Normaliser(SPEC["customers"], batch_id=BATCH)
    assert first._reader._compiled is None
    said = [r.getMessage() for r in caplog.records if r.name == "assets.compiled"]
    assert len(said) == 1 and "cannot read" in said[0]
    assert_same(first.normalise(copy.deepcopy(records), NOW), want)

"""The columnar read (`assets.columnar`, `pyarrow.json` into Arrow columns) lands what the
existing reads land, and declines every page it cannot vouch for.

Three reads of the same page are compared: the columnar read alone (a page it declines goes
column by column), the typed decoder alone (`assets.typed`, as before session 12) and the
column-by-column reference from dicts. On every endpoint whose columns all have an Arrow type
(the read switched on for each, though the catalogue uses it for reservation details only),
sandbox pages over HTTP in both profiles, clean and damaged at random; on the bench's pages; and
on hostile bodies that only bytes can say (NaN, Infinity, repeated keys, invalid UTF-8, control
characters, trailing values), where the normaliser with the columnar read must give what it
gives without it: the same tables and quarantine, or the same error.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import orjson
import pyarrow as pa
import pytest

from assets.catalogue import SPECS
from assets.columnar import supported
from assets.convert import EXACT_INT_LIMIT, MONEY_LIMIT, all_below
from assets.endpoints import EndpointSpec
from assets.normalise import COLUMNAR_MIN_RECORDS, Normalised, Normaliser
from assets.typed import valid_utf8
from bench.normalise import synthetic_record
from service.lazy import LazyRecords
from tests.assets.same_normalised import assert_same
from tests.assets.test_normalise_typed import (  # noqa: F401 (the fixture)
    BATCH,
    NOW,
    Pages,
    _damage,
    _lazy,
    _records,
    sandbox_pages,
)

RESERVATIONS = next(s for s in SPECS if s.name == "reservations")
COLUMNAR = [
    replace(s, columnar=True)
    for s in SPECS
    if all(supported(Normaliser(s, batch_id=BATCH)._plans[t.name]) for t in s.tables)
]


def _columnar_only(spec: EndpointSpec, pii: bool = False) -> Normaliser:
    """The columnar read, and column by column for what it declines (no typed decoder)."""
    normaliser = Normaliser(spec, batch_id=BATCH, include_pii=pii)
    normaliser._typed_page = normaliser._columnar_page  # type: ignore[method-assign]
    return normaliser


def _typed_only(spec: EndpointSpec, pii: bool = False) -> Normaliser:
    normaliser = Normaliser(spec, batch_id=BATCH, include_pii=pii)
    normaliser._columnar_page = lambda records: None  # type: ignore[method-assign]
    return normaliser


def _reference(spec: EndpointSpec, pii: bool = False) -> Normaliser:
    normaliser = Normaliser(spec, batch_id=BATCH, include_pii=pii)
    normaliser._typed_page = lambda records: None  # type: ignore[method-assign]
    return normaliser


def test_the_catalogue_reads_reservation_details_columnar() -> None:
    assert RESERVATIONS.columnar
    assert Normaliser(RESERVATIONS, batch_id=BATCH)._columnar is not None
    assert "reservations" in {s.name for s in COLUMNAR}
    journal = next(s for s in SPECS if s.name == "journal_entries")
    assert Normaliser(journal, batch_id=BATCH)._columnar is None  # flat: the typed read


@pytest.mark.parametrize("spec", COLUMNAR, ids=lambda s: s.name)
def test_clean_sandbox_pages_are_read_columnar_and_land_the_same_rows(
    spec: EndpointSpec,
    sandbox_pages: Pages,  # noqa: F811 (the fixture imported above)
) -> None:
    for body in sandbox_pages[spec.name]:
        records = _records(body)
        for pii in (False, True):
            columnar = _columnar_only(spec, pii)
            if records:
                page = columnar._columnar_page(_lazy(spec, body))
                assert page is not None, f"{spec.source}: a clean sandbox page was declined"
            got = columnar.normalise(_lazy(spec, body), NOW)
            assert_same(got, _reference(spec, pii).normalise(_records(body), NOW))
            assert_same(got, _typed_only(spec, pii).normalise(_lazy(spec, body), NOW))
            assert got.records == len(records)


@pytest.mark.parametrize("spec", COLUMNAR, ids=lambda s: s.name)
def test_damaged_sandbox_pages_land_and_quarantine_the_same(
    spec: EndpointSpec,
    sandbox_pages: Pages,  # noqa: F811 (the fixture imported above)
) -> None:
    rng = random.Random(f"columnar {spec.name}")
    for body in sandbox_pages[spec.name]:
        if not _records(body):
            continue
        for _ in range(12):
            records = _records(body)
            _damage(spec, records, rng)
            damaged = orjson.dumps({"content": records})
            pii = rng.random() < 0.5
            want = _reference(spec, pii).normalise(_records(damaged), NOW)
            assert_same(_columnar_only(spec, pii).normalise(_lazy(spec, damaged), NOW), want)
            # the whole chain: columnar, else typed, else column by column
            whole = Normaliser(spec, batch_id=BATCH, include_pii=pii)
            assert_same(whole.normalise(_lazy(spec, damaged), NOW), want)


@pytest.mark.parametrize("compiled", [False, True])
def test_only_pages_of_many_records_are_read_columnar(compiled: bool) -> None:
    """The columnar read's fixed cost per page makes it dearer than the typed decoder below
    ~600 records a page (the client asks for 100 reservation details a page): a smaller page
    goes to the typed decoder, a larger one to the columnar read, and both land the same. With
    the typed read's C extension (`assets.compiled`) the typed read is cheaper at any size, and
    takes every page."""
    rng = random.Random(11)
    records = [synthetic_record(rng, i) for i in range(1, COLUMNAR_MIN_RECORDS + 1)]
    for n, columnar in ((100, False), (COLUMNAR_MIN_RECORDS - 1, False), (len(records), True)):
        body = orjson.dumps({"content": records[:n]})
        normaliser = Normaliser(RESERVATIONS, batch_id=BATCH)
        assert normaliser._reader.compiled, "assets._columns is not built: run `make setup`"
        if not compiled:
            normaliser._reader._compiled = None
        columnar = columnar and not compiled
        asked: list[int] = []
        read = normaliser._columnar_page

        def spy(page: Any, read: Callable[[Any], Any] = read, asked: list[int] = asked) -> Any:
            asked.append(len(page))
            return read(page)

        normaliser._columnar_page = spy  # type: ignore[method-assign]
        got = normaliser.normalise(_page(body, n), NOW)
        assert asked == ([n] if columnar else []), n
        assert_same(got, _typed_only(RESERVATIONS).normalise(_page(body, n), NOW))
        assert got.records == n and got.quarantined == 0


def test_the_bench_pages_land_the_same_rows() -> None:
    rng = random.Random(7)
    records = [synthetic_record(rng, i) for i in range(1, 301)]
    body = orjson.dumps({"content": records})
    page = _page(body, len(records))
    columnar = _columnar_only(RESERVATIONS)
    assert columnar._columnar_page(page) is not None
    got = columnar.normalise(page, NOW)
    assert_same(got, _reference(RESERVATIONS).normalise(orjson.loads(body)["content"], NOW))
    assert got.tables["bill_lines"].num_rows == 300 * 9
    assert got.quarantined == 0


def _page(body: bytes, count: int) -> LazyRecords:
    return LazyRecords(body, count, [None] * count, RESERVATIONS.source)


Edit = Callable[[list[dict[str, Any]]], None]


def _set(path: tuple[Any, ...], value: Any) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        obj: Any = records
        for step in path[:-1]:
            obj = obj[step]
        obj[path[-1]] = value

    return edit


# Each case: an edit of three clean records, then of their JSON text (old -> new, once), and
# whether the columnar read takes the page (True) or must decline it (False); a page it takes
# whose columns hold a bad value (a bad date, an unknown code) is then read column by column.
HOSTILE: dict[str, tuple[Edit | None, tuple[bytes, bytes] | None, bool]] = {
    "clean": (None, None, True),
    "an integer beyond 2**53, exact": (_set((1, "customerId"), 2**53 + 1), None, True),
    "an integer beyond int64": (None, (b'"rateId":7', b'"rateId":18446744073709551616'), False),
    "an integer of 2**63": (None, (b'"rateId":7', b'"rateId":9223372036854775808'), False),
    "an integer of -2**63": (None, (b'"rateId":7', b'"rateId":-9223372036854775808'), True),
    "an integer written 2.5": (_set((0, "customerBill", 2, "quantity"), 2.5), None, False),
    "an integer written 7.0": (_set((0, "customerBill", 2, "quantity"), 7.0), None, False),
    "an integer written 1e3": (None, (b'"quantity":4', b'"quantity":1e3'), False),
    "an integer as text": (_set((2, "customerId"), "12"), None, False),
    "an integer as a boolean": (_set((2, "validationStatus"), True), None, False),
    "an amount as a boolean": (_set((0, "agentBill", 0, "total"), False), None, False),
    "an amount as text": (_set((0, "agentBill", 0, "total"), "12.5"), None, False),
    "an amount of three decimals": (_set((0, "agentBill", 0, "total"), 12.345), None, True),
    "an amount too large": (_set((0, "agentBill", 0, "total"), 1e15), None, True),
    "a float of 2**53": (_set((1, "customerBill", 0, "vatRate"), 2.0**53), None, False),
    "an integer in a float field": (_set((1, "customerBill", 0, "vatRate"), 21), None, True),
    "an exponent": (None, (b'"vatRate":9.0', b'"vatRate":1.5E+1'), True),
    "a negative zero": (None, (b'"vatRate":9.0', b'"vatRate":-0.0'), True),
    "a number underflowing": (None, (b'"vatRate":9.0', b'"vatRate":1e-400'), True),
    "a number of many digits": (
        None,
        (b'"vatRate":9.0', b'"vatRate":0.3000000000000000444089209850062616169452667236328125'),
        True,
    ),
    "NaN": (None, (b'"vatRate":9.0', b'"vatRate":NaN'), False),
    "Infinity": (None, (b'"total":', b'"total":-Infinity,"x":'), False),
    "NaN where nothing is read": (
        None,
        (b'"reservationSubjectId"', b'"reservationId":NaN,"reservationSubjectId"'),
        False,
    ),
    "an unknown code in the second section": (
        _set((0, "agentBill", 0, "billLineType"), 77),
        None,
        True,
    ),
    "a null amount in the second section": (_set((2, "agentBill", 0, "total"), None), None, True),
    "NaN in the second section": (
        _set((2, "agentBill", 0, "vatRate"), 9.5),
        (b'"vatRate":9.5', b'"vatRate":NaN'),
        False,
    ),
    "sections whose items differ": (  # agent bill lines without the link the others carry
        lambda rs: [line.pop("reservationId") for r in rs for line in r["agentBill"]],
        None,
        True,
    ),
    "a number in a text field": (_set((0, "categoryCode"), 12), None, False),
    "an object in a text field": (_set((0, "voucher"), {"x": 1}), None, False),
    "a bad date": (_set((1, "arrivalDate"), "2026-02-30"), None, True),
    "a bad datetime": (_set((1, "reservationDate"), "yesterday"), None, True),
    "an unknown code": (_set((1, "status"), 77), None, True),
    "a missing required value": (
        _set((2, "customerBill", 1, "reservationBillLineId"), None),
        None,
        True,
    ),
    "an unknown field": (_set((0, "colour"), "red"), None, False),
    "an unknown personal field": (_set((0, "mobileNumber"), "+31 6"), None, False),
    "an unknown field in a child": (_set((2, "subjects", 0, "energyLabel"), "A"), None, False),
    "an unknown null field": (_set((2, "subjects", 0, "energyLabel"), None), None, False),
    "a known ignored object": (
        _set((0, "customer"), {"customerId": 5, "address": {"city": "X"}, "tags": [1]}),
        None,
        True,
    ),
    "a known ignored object with a fraction": (
        _set((0, "payingCustomer"), {"balance": 1.5}),
        None,
        False,
    ),
    "the real service's subjects": (
        lambda rs: rs[1].__setitem__("reservationSubjects", rs[1].pop("subjects")),
        None,
        True,
    ),
    "sections missing or null": (
        lambda rs: [rs[0].pop("agentBill"), rs[1].__setitem__("customerBill", None)],
        None,
        True,
    ),
    "a null record": (_set((1,), None), None, False),
    "a record that is a number": (_set((1,), 5), None, False),
    "a null child item": (_set((0, "customerBill", 3), None), None, False),
    "a null child item after an empty one": (_set((0, "customerBill"), [{}, None]), None, False),
    "a section that is an object": (_set((2, "subjects"), {"x": 1}), None, False),
    "a repeated key": (None, (b'"voucher":null', b'"voucher":null,"voucher":"V"'), False),
    "a repeated content": (None, (b'{"content":', b'{"content":[],"content":'), False),
    "escapes": (_set((0, "categoryName"), 'a"b\\c\n\u00e9\U0001f600\x00'), None, True),
    "an escaped key": (None, (b'"reservationNumber"', b'"reservation\\u004eumber"'), True),
    "an unknown escaped key": (None, (b'"categoryCode"', b'"category\\u0043ode2"'), False),
    "a lone surrogate": (None, (b'"name":"Bungalow"', b'"name":"\\ud800"'), False),
    "invalid UTF-8": (None, (b'"description":"Rent"', b'"description":"R\xffnt"'), False),
    "a control character": (None, (b'"description":"Rent"', b'"description":"R\x01nt"'), False),
    "a trailing value": (None, (b"]}", b"]} 5"), False),  # the last one: the envelope's end
    "two pages": (None, (b"]}", b']}{"content":[]}'), False),
    "a trailing comma": (None, (b"]}", b",]}"), False),
    "an envelope": (None, (b"]}", b'],"totalElements":3,"last":true}'), True),
}


def _hostile(edit: Edit | None, text: tuple[bytes, bytes] | None) -> bytes:
    rng = random.Random(11)
    records = [synthetic_record(rng, i) for i in range(1, 4)]
    if edit is not None:
        edit(records)
    body = orjson.dumps({"content": records})
    if text is not None:
        old, new = text
        assert old in body, old
        at = body.rfind(old) if old == b"]}" else body.find(old)
        body = body[:at] + new + body[at + len(old) :]
    return body


def _outcome(normaliser: Normaliser, body: bytes) -> Normalised | tuple[str, str]:
    try:
        return normaliser.normalise(_page(body, 3), NOW)
    except Exception as exc:  # the same error with and without the columnar read
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("case", list(HOSTILE), ids=str)
def test_hostile_pages_are_declined_or_land_the_same(case: str) -> None:
    edit, text, taken = HOSTILE[case]
    body = _hostile(edit, text)
    with_it = Normaliser(RESERVATIONS, batch_id=BATCH)
    assert (with_it._columnar_page(_page(body, 3)) is not None) is taken
    got, want = _outcome(with_it, body), _outcome(_typed_only(RESERVATIONS), body)
    if isinstance(want, tuple):
        assert got == want
        assert want[0] == "ServiceError", want  # only a body that is not JSON may fail the page
        return
    assert isinstance(got, Normalised)
    assert_same(got, want)
    assert_same(_outcome(_columnar_only(RESERVATIONS), body), want)  # type: ignore[arg-type]
    if case == "an integer beyond 2**53, exact":
        ids = got.tables["reservations"].column("customer_id").to_pylist()
        assert ids[1] == 2**53 + 1


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_utf8_is_checked_as_python_decodes_it() -> None:
    """`valid_utf8` (Arrow's validator, no copy) says what `bytes.decode` said before it."""
    cases = [b"", b"plain", "\u00e9\U0001f600\uffff".encode(), b"\xff", b"\xc0\xaf", b"\xe2\x82",
             b"\xed\xa0\x80", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xef\xbb\xbfbom"]  # fmt: skip
    rng = random.Random(5)
    alphabet = [b"a", b"\x00", b"\x7f", b"\x80", b"\xbf", b"\xc2", b"\xdf", b"\xe0", b"\xed",
                b"\xef", b"\xf0", b"\xf4", b"\xf5", b"\xff", "\u00e9".encode(), "\u20ac".encode()]  # fmt: skip
    cases += [b"".join(rng.choices(alphabet, k=rng.randint(1, 12))) for _ in range(3000)]
    assert any(map(_decodes, cases)) and not all(map(_decodes, cases))
    for data in cases:
        assert valid_utf8(data) == _decodes(data), data
        assert valid_utf8(b"x" * 40 + data + b"y" * 40) == _decodes(data), data


def test_all_below_says_what_a_comparison_of_every_value_says() -> None:
    """`all_below` (numpy over the column's buffer) against Python's comparison of each value:
    NaN and infinities are never below, nulls are left out."""
    nan, inf = float("nan"), float("inf")
    rng = random.Random(3)
    pool = [None, 0.0, -0.0, 1.5, -12.25, nan, inf, -inf, 2.0**53, -(2.0**53), 2.0**53 - 1,
            1e15, -1e15, 1e15 - 0.01, 5e-324]  # fmt: skip
    cases: list[list[float | None]] = [[], [None], [None, None], [nan], [None, inf], [1.0]]
    cases += [rng.choices(pool, k=rng.randint(1, 9)) for _ in range(500)]
    for values in cases:
        arr = pa.array(values, type=pa.float64())
        for limit in (EXACT_INT_LIMIT, MONEY_LIMIT):
            want = all(abs(v) < limit for v in values if v is not None)
            assert all_below(arr, limit) is want, (values, limit)
            assert all_below(arr.slice(1), limit) is all(
                abs(v) < limit for v in values[1:] if v is not None
            )

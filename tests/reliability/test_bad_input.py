"""Malformed and hostile records fed to the normaliser: no crash, bad ones quarantined, good typed.

Pages mix three kinds of records for a random endpoint spec:
- valid records (every column a well-formed value, hostile text included): they must land,
  typed, with the values they came with;
- broken records (one column, root or child, given a value that cannot be its type, or a
  required value removed): the whole source record goes to quarantine, its reason naming that
  column;
- hostile records (random JSON anywhere, unknown fields, nested junk, items that are not
  objects): whatever happens, the
  normaliser does not crash, every record lands or is quarantined exactly once, quarantined
  ones carry a reason and their raw JSON, and landed tables have the lake schema.
The CI form runs a few hundred cases; `make chaos` runs thousands.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assets.catalogue import SPECS
from assets.endpoints import EndpointSpec
from assets.normalise import Normaliser
from lake.schema import Column, Table
from tests.reliability.conftest import _FIGURES

NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)
BATCH = "20261101T120000Z-0000cafe"
CI = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
# 2,500 examples take 2-5 minutes on a 2-vCPU machine depending on its neighbours; the suite's
# 300 s per-test timeout cut one off once, mid-run, on a slow afternoon.
CHAOS_TIMEOUT = 1200
CHAOS = settings(
    max_examples=2500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)

# JSON text without lone surrogates (which JSON from the wire cannot carry).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
HOSTILE_TEXT = st.one_of(
    TEXT,
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "'; drop table reservations; --",
            "${jndi:ldap://x}",
            "../../etc/passwd",
            "\u202eevil",
            "🏕️" * 50,
            "a" * 10_000,
            "NaN",
            "null",
            "2026-13-45",
        ]
    ),
)
# What `orjson.loads` can hand over: 64-bit integers (larger ones arrive as floats) and finite
# floats (it refuses NaN and infinity).
INT64 = st.integers(-(2**63), 2**63 - 1)
JSON_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    INT64,
    st.floats(allow_nan=False, allow_infinity=False),
    HOSTILE_TEXT,
)
JSON = st.recursive(
    JSON_SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=8,
)


def _ms(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}"


def valid(c: Column) -> st.SearchStrategy[Any]:
    """A well-formed wire value for a column."""
    if c.codes is not None:
        return st.sampled_from(c.codes)
    return {
        # Below 2**53: some valid integers from 2**53 up are refused ("not an integer"),
        # reported to the normaliser's owner.
        "id": st.integers(1, 2**53 - 1),
        "int": st.integers(-(2**53 - 1), 2**53 - 1),
        "float": st.floats(-1e12, 1e12, allow_nan=False),
        "money": st.integers(-(10**13), 10**13).map(lambda cents: cents / 100),
        "date": st.dates(date(1900, 1, 1), date(2200, 12, 31)).map(date.isoformat),
        "datetime": st.datetimes(datetime(1970, 1, 1), datetime(2200, 1, 1)).map(_ms),
        "str": HOSTILE_TEXT,
        "bool": st.booleans(),
        "int_list": st.lists(st.integers(-(2**53 - 1), 2**53 - 1), max_size=4),
        "str_list": st.lists(TEXT, max_size=4),
        "translation": st.lists(
            st.fixed_dictionaries({"language": st.sampled_from(["en", "nl", "de"]), "name": TEXT}),
            max_size=3,
        ),
    }[c.kind]


def invalid(c: Column) -> st.SearchStrategy[Any]:
    """A value that cannot be the column's type (or code); never harmless."""
    if c.codes is not None:
        numeric = all(isinstance(x, int) for x in c.codes)
        outside = st.integers(-1000, 1000) if numeric else TEXT
        return outside.filter(lambda v: v not in c.codes)
    junk = st.one_of(
        st.dictionaries(TEXT, INT64, min_size=1, max_size=2),
        st.lists(INT64, min_size=1, max_size=2),
    )
    return {
        "id": st.one_of(st.just("abc"), st.floats(0.1, 0.9).map(lambda f: 7 + f), junk),
        "int": st.one_of(st.just("abc"), st.just(1.5), junk),
        "float": st.one_of(st.just("abc"), junk),
        "money": st.one_of(st.just("abc"), st.just(1e16), junk),
        "date": st.sampled_from(["2026-13-45", "2026-02-30", "yesterday", "01/02/2026", 20260101]),
        "datetime": st.sampled_from(["not a time", "2026-02-30T10:00:00.000", 1.5, "25:61"]),
        "str": junk,
        "bool": st.one_of(st.sampled_from(["maybe", "yes please", 2]), junk),
        "int_list": st.one_of(st.just("abc"), st.just([1, "x"]), st.just({"a": 1})),
        "str_list": st.one_of(st.just("abc"), st.just([{"a": 1}])),
        "translation": st.one_of(st.just("abc"), st.just([1, 2]), st.just(5)),
    }[c.kind]


def _set(record: dict[str, Any], source: str, value: Any) -> None:
    if "." in source:
        head, tail = source.split(".", 1)
        record.setdefault(head, {})[tail] = value
    else:
        record[source] = value


def _own_columns(table: Table, spec: EndpointSpec, *, landed: bool = True) -> list[Column]:
    """Columns a wire record of `table` carries (not the parent key or a section constant);
    `landed=False` adds the personal fields, which are sent but never land by default."""
    constants = {k for s in spec.sections if s.table is table for k in s.constants}
    parent_cols = set(table.parent_key) if table is not spec.table else set()
    columns = table.landed(False) if landed else table.columns
    return [c for c in columns if c.column not in parent_cols and c.source not in constants]


@st.composite
def record_of(draw: st.DrawFn, spec: EndpointSpec, table: Table, key: int) -> dict[str, Any]:
    """A valid wire record of `table` (with valid children when it is the spec's root)."""
    record: dict[str, Any] = {}
    for c in _own_columns(table, spec, landed=False):
        if c.column in table.key and c.kind in ("id", "int"):
            value: Any = key
        elif not c.required and draw(st.integers(0, 5)) == 0:
            value = None
        else:
            value = draw(valid(c))
        _set(record, c.source, value)
    if table is spec.table:
        for i, section in enumerate(spec.sections):
            n = draw(st.integers(0, 2))
            record[section.field] = [
                draw(record_of(spec, section.table, key * 100 + i * 10 + j)) for j in range(n)
            ]
    return record


SPEC_BY_NAME = {s.name: s for s in SPECS}
SPEC_NAMES = st.sampled_from(sorted(SPEC_BY_NAME))


@st.composite
def good_page(draw: st.DrawFn) -> tuple[EndpointSpec, list[dict[str, Any]]]:
    spec = SPEC_BY_NAME[draw(SPEC_NAMES)]
    n = draw(st.integers(1, 6))
    return spec, [draw(record_of(spec, spec.table, 1000 + i)) for i in range(n)]


def _normalise(spec: EndpointSpec, page: list[Any]) -> Any:
    return Normaliser(spec, batch_id=BATCH).normalise(page, NOW)


def _expected(c: Column, value: Any) -> Any:
    """What the lake must hold for a valid wire value."""
    if value is None:
        return None
    if c.kind == "money":
        return Decimal(repr(value)).quantize(Decimal("0.01"))
    if c.kind == "date":
        return date.fromisoformat(value)
    if c.kind == "datetime":
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    if c.kind == "translation":
        name = next((t["name"] for t in value if t["language"] == "en"), None)
        return name if name is not None or not value else value[0]["name"]
    return value


def _wire(record: dict[str, Any], source: str) -> Any:
    if "." in source:
        head, tail = source.split(".", 1)
        return (record.get(head) or {}).get(tail)
    return record.get(source)


def _check_invariants(spec: EndpointSpec, page: list[Any], out: Any) -> None:
    """Whatever the input: counted once, reasons given, raw kept, schemas exact."""
    root = out.tables[spec.table.name]
    assert out.records == len(page)
    assert root.num_rows + out.quarantined == len(page)
    assert out.quarantine.num_rows == out.quarantined
    for q in out.quarantine.to_pylist():
        assert q["reason"] and q["table"] == spec.table.name
        assert q["_batch_id"] == BATCH and q["_source"] == spec.source
        orjson.loads(q["record"])
    for table in spec.tables:
        assert out.tables[table.name].schema == table.arrow_schema(), table.name


def check_good(spec: EndpointSpec, page: list[dict[str, Any]]) -> None:
    out = _normalise(spec, page)
    _check_invariants(spec, page, out)
    assert out.quarantined == 0, out.quarantine.column("reason").to_pylist()
    root = spec.table
    landed = out.tables[root.name].to_pylist()
    assert len(landed) == len(page)
    for record, row in zip(page, landed, strict=True):
        for c in _own_columns(root, spec):
            assert row[c.column] == _expected(c, _wire(record, c.source)), (c.column, record)
    for section in spec.sections:
        child_rows = out.tables[section.table.name].to_pylist()
        by_key = {tuple(r[k] for k in section.table.key): r for r in child_rows}
        for record in page:
            for item in record.get(section.field, []):
                match = [
                    r
                    for r in child_rows
                    if all(
                        r[c.column] == _expected(c, _wire(item, c.source))
                        for c in _own_columns(section.table, spec)
                    )
                ]
                assert match, (section.table.name, item)
        assert len(by_key) <= len(child_rows)
    _FIGURES.bad_input_cases += len(page)


@st.composite
def broken_page(draw: st.DrawFn) -> tuple[EndpointSpec, list[dict[str, Any]], int, str]:
    """A valid page with one record broken in one column (root or child)."""
    spec, page = draw(good_page())
    index = draw(st.integers(0, len(page) - 1))
    record = page[index]
    targets: list[tuple[Table, dict[str, Any]]] = [(spec.table, record)]
    for section in spec.sections:
        targets += [(section.table, item) for item in record.get(section.field, [])]
    table, target = draw(st.sampled_from(targets))
    column = draw(st.sampled_from(_own_columns(table, spec)))
    if column.required and draw(st.booleans()):
        value: Any = None
    else:
        value = draw(invalid(column))
    _set(target, column.source, value)
    return spec, page, index, f"{table.name}.{column.column}"


def check_broken(spec: EndpointSpec, page: list[dict[str, Any]], index: int, where: str) -> None:
    out = _normalise(spec, page)
    _check_invariants(spec, page, out)
    raw = orjson.loads(orjson.dumps(page[index], default=str))
    hits = [q for q in out.quarantine.to_pylist() if orjson.loads(q["record"]) == raw]
    assert hits, f"broken record not quarantined ({where}): {page[index]!r}"
    assert where in hits[0]["reason"], (where, hits[0]["reason"])
    assert (
        out.quarantined == 1
        or len({orjson.dumps(r) for r in page}) < len(page)
        or all(q["reason"] for q in out.quarantine.to_pylist())
    )
    _FIGURES.bad_input_cases += 1


@st.composite
def hostile_page(draw: st.DrawFn) -> tuple[EndpointSpec, list[dict[str, Any]]]:
    """Valid records with random fields overwritten by arbitrary JSON, and junk fields added."""
    spec, page = draw(good_page())
    for record in page:
        fields = [c.source.split(".")[0] for c in spec.table.columns] + [
            s.field for s in spec.sections
        ]
        for name in draw(st.lists(st.sampled_from(fields), max_size=3)):
            record[name] = draw(JSON)
        for name, value in draw(st.dictionaries(TEXT, JSON, max_size=2)).items():
            record[name] = value
    if draw(st.integers(0, 4)) == 0:  # a page item that is not an object at all
        page.insert(draw(st.integers(0, len(page))), draw(JSON_SCALAR | st.lists(JSON_SCALAR)))
    return spec, page


def check_hostile(spec: EndpointSpec, page: list[dict[str, Any]]) -> None:
    out = _normalise(spec, page)
    _check_invariants(spec, page, out)
    _FIGURES.bad_input_cases += len(page)


@CI
@given(good_page())
def test_valid_records_land_typed_with_their_values(case: tuple[EndpointSpec, list]) -> None:
    check_good(*case)


@CI
@given(broken_page())
def test_a_broken_record_is_quarantined_with_a_reason_naming_the_column(case: tuple) -> None:
    check_broken(*case)


@CI
@given(hostile_page())
def test_hostile_records_never_crash_and_are_each_accounted_for(case: tuple) -> None:
    check_hostile(*case)


@pytest.mark.chaos
@pytest.mark.timeout(CHAOS_TIMEOUT)
@CHAOS
@given(good_page())
def test_valid_records_land_typed_thousands(case: tuple[EndpointSpec, list]) -> None:
    check_good(*case)


@pytest.mark.chaos
@pytest.mark.timeout(CHAOS_TIMEOUT)
@CHAOS
@given(broken_page())
def test_broken_records_quarantined_thousands(case: tuple) -> None:
    check_broken(*case)


@pytest.mark.chaos
@pytest.mark.timeout(CHAOS_TIMEOUT)
@CHAOS
@given(hostile_page())
def test_hostile_records_thousands(case: tuple) -> None:
    check_hostile(*case)


@pytest.mark.parametrize("junk", [None, "x", 5, [1]], ids=["null", "string", "number", "list"])
def test_a_record_that_is_not_an_object_is_quarantined(junk: Any) -> None:
    spec = SPEC_BY_NAME["locations"]
    out = _normalise(spec, [{"locationId": 1, "code": "A"}, junk])
    assert out.quarantined == 1 and out.tables["locations"].num_rows == 1

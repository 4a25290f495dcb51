"""Normalisation of one page: types, child links, quarantine reasons, drift, PII."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from assets.catalogue import SPECS
from assets.normalise import Normaliser
from tests.assets.fake_service import default_fixture, reservation

SPEC = {s.name: s for s in SPECS}
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
BATCH = "20260101T120000Z-00000001"


def _normalise(name: str, records: list[dict], **kw: object):
    return Normaliser(SPEC[name], batch_id=BATCH, **kw).normalise(records, NOW)  # type: ignore[arg-type]


def test_children_link_to_parent_and_payer_type_comes_from_the_section() -> None:
    out = _normalise("reservations", [reservation(1), reservation(2)])
    bills = out.tables["bill_lines"].to_pylist()
    assert {b["reservation_id"] for b in bills} == {1, 2}
    assert {(b["reservation_bill_line_id"] % 100, b["payer_type"]) for b in bills} == {
        (1, "CUSTOMER"),
        (2, "CUSTOMER"),
        (3, "PAYING_CUSTOMER"),
        (4, "AGENT"),
        (5, "AGENT"),
    }
    assert out.tables["reserved_resources"].column("reservation_id").to_pylist() == [1, 2]
    assert out.tables["reservation_subjects"].num_rows == 2


def test_child_without_parent_fields_gets_composite_parent_key() -> None:
    record = {
        "resourceId": 11,
        "arrivalDate": "2026-06-01",
        "duration": 7,
        "prices": [{"rateTypeId": 1, "price": 699.3}],
    }
    out = _normalise("availability", [record])
    (price,) = out.tables["availability_prices"].to_pylist()
    assert (price["resource_id"], str(price["arrival_date"]), price["duration"]) == (
        11,
        "2026-06-01",
        7,
    )


BAD = [
    ("null-key", {"reservationId": None}, "reservations.reservation_id: missing required value"),
    ("bad-date", {"arrivalDate": "2026-13-45"}, "reservations.arrival_date: bad date"),
    ("unknown-code", {"status": 77}, "reservations.status: unknown code"),
    ("text-in-number", {"locationId": "abc"}, "reservations.location_id: not an integer"),
]


@pytest.mark.parametrize(
    ("change", "reason"), [(c, r) for _, c, r in BAD], ids=[i for i, _, _ in BAD]
)
def test_bad_record_goes_to_quarantine_with_reason(change: dict, reason: str) -> None:
    good, bad = reservation(1), reservation(2, **change)
    out = _normalise("reservations", [good, bad])
    assert out.tables["reservations"].column("reservation_id").to_pylist() == [1]
    assert out.quarantined == 1
    (row,) = out.quarantine.to_pylist()
    assert row["table"] == "reservations" and row["reason"].startswith(reason)
    assert json.loads(row["record"])["reservationNumber"] == "R00002"
    # the whole source record is held back: none of its children land either
    assert set(out.tables["bill_lines"].column("reservation_id").to_pylist()) == {1}


def test_a_record_without_optional_fields_lands_with_nulls() -> None:
    """Only keys and parent links are required (lake/tables.py): the notes never promise the
    other fields, so a record that lacks them (absent or null) lands, never in quarantine."""
    bare = {
        k: v
        for k, v in reservation(2).items()
        if k not in ("status", "arrivalDate", "distributionChannelId", "cancelDate")
    }
    bare["departureDate"] = None
    for line in bare["customerBill"]:
        for name in ("billLineType", "total", "startDate", "description"):
            line.pop(name, None)
    bare["reservationSubjects"] = bare.pop("subjects")  # the real service's name
    out = _normalise("reservations", [reservation(1), bare])
    assert out.quarantined == 0 and not out.unknown_fields
    rows = {r["reservation_id"]: r for r in out.tables["reservations"].to_pylist()}
    assert [rows[2][c] for c in ("status", "arrival_date", "departure_date")] == [None] * 3
    lines = out.tables["bill_lines"].to_pylist()
    customer = [r for r in lines if r["reservation_id"] == 2 and r["payer_type"] == "CUSTOMER"]
    assert customer and all(r["total"] is None and r["bill_line_type"] is None for r in customer)
    subjects = out.tables["reservation_subjects"].column("reservation_id").to_pylist()
    assert sorted(subjects) == [1, 2]


def test_bad_child_row_quarantines_its_whole_record() -> None:
    bad = reservation(2)
    bad["agentBill"][0]["total"] = "abc"
    out = _normalise("reservations", [reservation(1), bad])
    (row,) = out.quarantine.to_pylist()
    assert row["reason"] == "bill_lines.total: not an amount ('abc')"
    assert out.tables["reservations"].num_rows == 1
    assert out.tables["reserved_resources"].column("reservation_id").to_pylist() == [1]
    # handed on for the landing to keep the bad line at its last good version (assets.lastgood)
    assert out.partial["reservations"].column("reservation_id").to_pylist() == [2]
    assert len(out.partial["bill_lines"]) == 4  # five lines, one bad
    assert out.lost["bill_lines"].to_pylist() == [
        {"reservation_bill_line_id": 204, "reservation_id": 2}
    ]


def test_a_bad_header_hands_nothing_on() -> None:
    out = _normalise("reservations", [reservation(1), reservation(2, status=77)])
    assert out.quarantined == 1 and out.partial == {} and out.lost == {}


def test_a_bad_record_of_a_child_stream_names_its_key_and_parent() -> None:
    entries = default_fixture()["journal_entries"](7)
    entries[0]["mutationDate"] = "2026-13-45"
    entries[1]["journalEntryId"] = "x"
    out = _normalise("journal_entries", entries)
    assert out.lost["journal_entries"].to_pylist() == [
        {"journal_entry_id": 700, "report_id": 7},
        {"journal_entry_id": None, "report_id": 7},
    ]


def test_unknown_fields_land_in_extra_and_are_counted() -> None:
    record = default_fixture()["units"][0] | {"energyLabel": "A", "colour": {"r": 1}}
    out = _normalise("units", [record])
    (row,) = out.tables["units"].to_pylist()
    assert json.loads(row["_extra"]) == {"energyLabel": "A", "colour": {"r": 1}}
    assert out.unknown_fields == {"units.energyLabel": 1, "units.colour": 1}


def test_nested_unknown_subfield_is_kept() -> None:
    record = default_fixture()["locations"][0]
    record["visitAddress"]["region"] = "Noord"
    (row,) = _normalise("locations", [record]).tables["locations"].to_pylist()
    assert row["visit_address_city"] == "Zee" and row["name"] == "Dune Park"
    assert json.loads(row["_extra"]) == {"visitAddress.region": "Noord"}


def test_customer_pii_never_lands_by_default() -> None:
    record = default_fixture()["customers"][0] | {"mobileNumber": "+31 6", "birthYear": 1961}
    out = _normalise("customers", [record])
    table = out.tables["customers"]
    assert not {"first_name", "last_name", "email", "phone", "address_city", "birth_year"} & set(
        table.column_names
    )
    assert table.column("_extra").to_pylist() == [None]
    assert out.dropped_pii_fields == {"customers.mobileNumber": 1}
    with_pii = _normalise("customers", [record], include_pii=True).tables["customers"]
    assert with_pii.column("email").to_pylist() == ["anna@example.org"]
    assert with_pii.column("birth_year").to_pylist() == [1961]


def test_lineage_columns() -> None:
    table = _normalise("companies", default_fixture()["companies"]).tables["companies"]
    row = table.to_pylist()[0]
    assert (row["_batch_id"], row["_batch_kind"], row["_source"], row["_is_deleted"]) == (
        BATCH,
        "full",
        "/companies",
        False,
    )
    assert row["_extracted_at"] == NOW and row["_extra"] is None


def test_a_rate_without_validity_dates_lands_and_an_unknown_quantifier_does_not() -> None:
    """validFrom / validTo are write-only on the service (real-service-notes 5): a rate read
    without them, or with nulls, lands with null dates; a quantifier outside OVERRIDE,
    ABSOLUTE and RELATIVE is quarantined rather than priced wrongly."""
    plain, dated, odd = default_fixture()["rates"](11) + default_fixture()["rates"](12)[:1]
    del plain["validFrom"], plain["validTo"]
    plain |= {"quantifier": "RELATIVE", "value": -12.5, "minDuration": 14}
    dated |= {"validFrom": None, "validTo": None, "usageDurationFrom": "2026-07-01"}
    odd["quantifier"] = "PERCENT"
    out = _normalise("rates", [plain, dated, odd])
    rows = {r["rate_id"]: r for r in out.tables["rates"].to_pylist()}
    assert sorted(rows) == [110, 111]
    assert rows[110]["valid_from"] is None and rows[110]["valid_to"] is None
    assert (rows[110]["quantifier"], str(rows[110]["value"]), rows[110]["min_duration"]) == (
        "RELATIVE",
        "-12.50",
        14,
    )
    assert str(rows[111]["usage_duration_from"]) == "2026-07-01"
    (row,) = out.quarantine.to_pylist()
    assert row["reason"].startswith("rates.quantifier: unknown code")

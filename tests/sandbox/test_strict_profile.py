"""The strict profile over HTTP: the service as real-service-notes.md describes it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from sandbox.strict import StrictWorld
from sandbox.strict.lines import ADDED_LINE_BASE
from tests.sandbox.conftest import authenticate

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("sandbox-strict")]

OURS = "RESERVEDRESOURCES,CUSTOMERBILL,PAYINGCUSTOMERBILL,AGENTBILL,SUBJECTS"


@pytest.fixture(scope="module")
def strict() -> Iterator[SandboxHandle]:
    with run_sandbox(SandboxSettings(seed=7, scale="small", profile="strict")) as handle:
        yield handle


@pytest.fixture(scope="module")
def api(strict: SandboxHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=strict.base_url, timeout=30) as client:
        client.headers["Authorization"] = authenticate(strict, client)
        yield client


def _all(api: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for page in range(100):
        response = api.get(path, params={"size": 2000, "page": page, **params})
        if response.status_code == 204:
            return out
        response.raise_for_status()
        body = response.json()
        out += body["content"]
        if body["last"]:
            return out
    raise AssertionError("too many pages")


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="profile"):
        SandboxSettings(profile="lenient")


def test_the_handle_serves_a_strict_world(strict: SandboxHandle) -> None:
    assert isinstance(strict.world, StrictWorld)
    # the wrapped world keeps the default profile's records (and their ground truth)
    assert "companyId" in strict.world.inner.records("locations")[0]
    assert "companyId" not in strict.world.records("locations")[0]


def test_sections_outside_the_real_enum_are_refused_with_the_error_body(api: httpx.Client) -> None:
    response = api.get("/reservations/details", params={"returnSections": OURS})
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"status", "error", "code", "message"}
    assert body["status"] == 400 and body["code"] == "INVALID_PARAMETER"
    assert "PAYINGCUSTOMERBILL" in body["message"] and "SUBJECTS" in body["message"]
    one = api.get("/reservations/100001/details", params={"returnSections": "SUBJECTS"})
    assert one.status_code == 400
    # names of the real enum are accepted, also those the sandbox does not model
    for sections in ("RESERVEDRESOURCES,CUSTOMERBILL,AGENTBILL", "CUSTOMER,INFOTEXTS"):
        ok = api.get("/reservations/details", params={"returnSections": sections, "size": 1})
        assert ok.status_code == 200, sections


def test_details_without_sections_carry_the_real_field_names(api: httpx.Client) -> None:
    (record,) = api.get("/reservations/details", params={"size": 1}).json()["content"]
    for field in ("reservedResources", "customerBill", "payingCustomerBill", "agentBill"):
        assert isinstance(record[field], list), field
    assert "reservationSubjects" in record and "subjects" not in record
    only = api.get(
        "/reservations/details", params={"size": 1, "returnSections": "RESERVEDRESOURCES"}
    ).json()["content"][0]
    assert "reservedResources" in only and "customerBill" not in only
    assert "reservationSubjects" not in only


def test_locations_and_availability_have_the_documented_fields(
    api: httpx.Client, strict: SandboxHandle
) -> None:
    locations = _all(api, "/locations")
    assert locations and all("companyId" not in loc for loc in locations)
    assert all(isinstance(loc["adminOrganisationId"], int) for loc in locations)
    today = strict.world.now.date().isoformat()
    records = api.get("/accommodationtypes/availability", params={"arrivalDateFrom": today}).json()
    assert records and all("availableUnits" not in r for r in records)
    assert any(r["units"] for r in records)


def test_the_content_of_an_unknown_reservation_is_404(api: httpx.Client) -> None:
    missing = api.get("/reservations/99/content")
    assert missing.status_code == 404 and missing.json()["code"] == "NOT_FOUND"
    assert api.get("/reservations/100001/content").json()["content"]


def test_sort_is_an_object_present_when_sorted(api: httpx.Client) -> None:
    sorted_page = api.get("/units", params={"size": 2, "sort": "unitId,desc"}).json()
    assert sorted_page["sort"] == {
        "direction": "DESC",
        "property": "unitId",
        "ignoreCase": False,
        "nullHandling": "NATIVE",
        "ascending": False,
        "descending": True,
    }
    assert "sort" not in api.get("/units", params={"size": 2}).json()


def test_details_honour_the_documented_query_parameters(
    api: httpx.Client, strict: SandboxHandle
) -> None:
    world = strict.world
    every = world.records("reservations")

    def ids(**params: Any) -> set[int]:
        rows = _all(api, "/reservations/details", returnSections="RESERVEDRESOURCES", **params)
        return {r["reservationId"] for r in rows}

    assert (
        ids(statusIds="-12,41")
        == {r["reservationId"] for r in every if r["status"] in (-12, 41)}
        != set()
    )
    channel = every[0]["distributionChannelId"]
    assert ids(distributionChannelId=channel) == {
        r["reservationId"] for r in every if r["distributionChannelId"] == channel
    }
    customer = every[0]["customerId"]
    assert ids(customerIds=customer) == {
        r["reservationId"] for r in every if r["customerId"] == customer
    }
    assert ids(reservationNumber=every[3]["reservationNumber"]) == {every[3]["reservationId"]}
    refused = api.get("/reservations/details", params={"accommodationKindIds": 1})
    assert refused.status_code == 400
    kinds = ids(accommodationKindIds=1, customerIds=customer)
    assert kinds <= {r["reservationId"] for r in every if r["customerId"] == customer}


def test_optional_fields_are_left_out_at_random_but_the_same_every_time(
    api: httpx.Client,
) -> None:
    first = api.get("/reservations", params={"size": 500}).content
    assert api.get("/reservations", params={"size": 500}).content == first
    rows = api.get("/reservations", params={"size": 500}).json()["content"]
    assert all(isinstance(r["reservationId"], int) for r in rows)
    cancel = Counter(
        "absent" if "cancelDate" not in r else "null" if r["cancelDate"] is None else "set"
        for r in rows
    )
    assert cancel["absent"] > 10 and cancel["null"] > 10, cancel
    voucher = Counter("voucher" in r for r in rows if r.get("status") is not None)
    assert voucher[True] and voucher[False]


def test_the_line_types_50_130_140_180_occur_outside_or_inside_the_total(
    strict: SandboxHandle,
) -> None:
    lines = strict.world.records("billlines")
    types = Counter(line["billLineType"] for line in lines)
    assert all(types[t] > 50 for t in (50, 130, 140, 180)), types
    assert all(
        line["reservationBillLineId"] >= ADDED_LINE_BASE
        for line in lines
        if line["billLineType"] in (50, 140, 180)
    )
    # the bill rule: the item lines (130 included; 50, 140, 180 left out) add up to the TOTAL
    items: Counter[tuple[int, str]] = Counter()
    totals: dict[tuple[int, str], Decimal] = {}
    for line in lines:
        key = (line["reservationId"], line["payerType"])
        if line["billLineType"] in (10, 20, 130, 190, 250):
            items[key] += Decimal(str(line["total"])) * 100
        elif line["billLineType"] == 70:
            totals[key] = Decimal(str(line["total"])) * 100
    assert totals and all(items[k] == v for k, v in totals.items())
    one = next(line for line in lines if line["billLineType"] == 50)
    assert strict.world.get("billlines", one["reservationBillLineId"]) == one
    assert one in strict.world.children("billlines", one["reservationId"])

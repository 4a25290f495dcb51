"""The sandbox over real loopback HTTP: auth, envelope, filters, sorts, 204s, routes, throttling.

Most tests run against `TinyWorld` (exact expectations); the `world_*` tests run the same
contract checks against the generated world once `sandbox.world.World` exists.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import httpx
import pytest

from sandbox.protocol import COLLECTIONS
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from tests.sandbox.conftest import TinyWorld, authenticate

pytestmark = pytest.mark.sandbox

ENVELOPE_KEYS = {
    "content",
    "size",
    "number",
    "numberOfElements",
    "totalElements",
    "totalPages",
    "first",
    "last",
    "empty",
    "sort",
}


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"status", "error", "code", "message"}
    assert body["status"] == response.status_code
    return body


# -- authentication -------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["camel", "snake"])
def test_authenticate_returns_token_data(tiny_sandbox: SandboxHandle, style: str) -> None:
    names = (
        ("grantType", "clientId", "clientSecret")
        if style == "camel"
        else ("grant_type", "client_id", "client_secret")
    )
    form = dict(
        zip(
            names,
            ("client_credentials", tiny_sandbox.client_id, tiny_sandbox.client_secret),
            strict=True,
        )
    )
    form["scope"] = tiny_sandbox.scope
    response = httpx.post(tiny_sandbox.base_url + "/authenticate", data=form)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        "access_token",
        "token_type",
        "expires_in",
        "scope",
        "jti",
        "client_id",
        "concern_id",
        "details",
    }
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert body["client_id"] == tiny_sandbox.client_id
    headers = {"Authorization": f"{body['token_type']} {body['access_token']}"}
    assert httpx.get(tiny_sandbox.base_url + "/companies", headers=headers).status_code == 200


@pytest.mark.parametrize(
    ("form", "status", "code"),
    [
        ({"clientSecret": "wrong"}, 401, "INVALID_CLIENT"),
        ({"clientId": "someone-else"}, 401, "INVALID_CLIENT"),
        ({"scope": "XYZ"}, 401, "INVALID_SCOPE"),
        ({"grantType": "password"}, 400, "UNSUPPORTED_GRANT_TYPE"),
    ],
    ids=["wrong-secret", "wrong-client", "wrong-scope", "wrong-grant"],
)
def test_authenticate_refusals(
    tiny_sandbox: SandboxHandle, form: dict[str, str], status: int, code: str
) -> None:
    data = {
        "grantType": "client_credentials",
        "clientId": tiny_sandbox.client_id,
        "clientSecret": tiny_sandbox.client_secret,
        "scope": tiny_sandbox.scope,
        **form,
    }
    response = httpx.post(tiny_sandbox.base_url + "/authenticate", data=data)
    assert response.status_code == status
    body = error_of(response)
    assert body["code"] == code
    assert tiny_sandbox.client_secret not in response.text


@pytest.mark.parametrize(
    ("header", "code"),
    [
        (None, "UNAUTHORIZED"),
        ("Bearer forged-token", "INVALID_TOKEN"),
        ("Basic abc", "UNAUTHORIZED"),
        ("Bearer", "UNAUTHORIZED"),
    ],
    ids=["missing", "forged", "wrong-scheme", "no-token"],
)
def test_calls_need_a_valid_token(
    tiny_sandbox: SandboxHandle, header: str | None, code: str
) -> None:
    headers = {"Authorization": header} if header else {}
    response = httpx.get(tiny_sandbox.base_url + "/customers", headers=headers)
    assert response.status_code == 401
    assert error_of(response)["code"] == code


def test_token_expires_by_wall_clock() -> None:
    with run_sandbox(SandboxSettings(token_ttl=1), world=TinyWorld()) as handle:
        headers = {"Authorization": authenticate(handle)}
        assert httpx.get(handle.base_url + "/units", headers=headers).status_code == 200
        time.sleep(1.2)
        response = httpx.get(handle.base_url + "/units", headers=headers)
        assert response.status_code == 401
        assert error_of(response)["code"] == "TOKEN_EXPIRED"
        headers = {"Authorization": authenticate(handle)}
        assert httpx.get(handle.base_url + "/units", headers=headers).status_code == 200


# -- envelope and paging --------------------------------------------------------------------


def test_envelope_defaults(api: httpx.Client) -> None:
    body = api.get("/customers").json()
    assert set(body) == ENVELOPE_KEYS
    assert (body["size"], body["number"], body["numberOfElements"]) == (20, 0, 20)
    assert (body["totalElements"], body["totalPages"]) == (25, 2)
    assert (body["first"], body["last"], body["empty"], body["sort"]) == (True, False, False, [])
    assert [c["customerId"] for c in body["content"]] == list(range(1, 21))


def test_last_page_and_beyond(api: httpx.Client) -> None:
    last = api.get("/customers", params={"page": 2, "size": 10}).json()
    assert (last["numberOfElements"], last["first"], last["last"]) == (5, False, True)
    beyond = api.get("/customers", params={"page": 7, "size": 10})
    assert beyond.status_code == 200
    assert beyond.json()["empty"] is True
    assert beyond.json()["totalElements"] == 25


def test_size_is_clamped_silently(api: httpx.Client) -> None:
    body = api.get("/customers", params={"size": 5000}).json()
    assert body["size"] == 50
    assert body["numberOfElements"] == 25


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"size": 0}, "INVALID_PAGING"),
        ({"page": -1}, "INVALID_PAGING"),
        ({"page": "x"}, "INVALID_PAGING"),
        ({"filter": "nope:1"}, "INVALID_FILTER"),
        ({"filter": "customerId>abc"}, "INVALID_FILTER"),
        ({"sort": "nope,asc"}, "INVALID_SORT"),
    ],
    ids=["size-zero", "page-negative", "page-text", "unknown-field", "bad-value", "bad-sort"],
)
def test_bad_parameters_are_400(api: httpx.Client, params: dict[str, Any], code: str) -> None:
    response = api.get("/customers", params=params)
    assert response.status_code == 400
    assert error_of(response)["code"] == code


def test_bad_filter_message_names_the_field(api: httpx.Client) -> None:
    response = api.get("/reservations", params={"filter": "noSuchField::1"})
    assert "noSuchField" in error_of(response)["message"]


@pytest.mark.parametrize(
    "path", ["/reservations", "/reservations/details", "/distributionchannels"]
)
def test_empty_lists_are_204(path: str) -> None:
    world = TinyWorld(empty=("reservations", "distributionchannels"))
    with run_sandbox(SandboxSettings(), world=world) as handle:
        response = httpx.get(
            handle.base_url + path, headers={"Authorization": authenticate(handle)}
        )
        assert response.status_code == 204
        assert response.content == b""


def test_filtered_to_nothing_is_204_for_reservations(api: httpx.Client) -> None:
    response = api.get("/reservations", params={"filter": "reservationId:1"})
    assert response.status_code == 204
    assert api.get("/customers", params={"filter": "customerId:999"}).json()["empty"] is True


# -- filters and sorts over HTTP ------------------------------------------------------------


@pytest.mark.parametrize(
    ("filters", "predicate"),
    [
        (["countryCode:nl"], lambda c: c["countryCode"] == "NL"),
        (["countryCode::NL"], lambda c: c["countryCode"] == "NL"),
        (["countryCode::nl"], lambda c: False),
        (["countryCode!:NL"], lambda c: c["countryCode"] != "NL"),
        (["customerId>20"], lambda c: c["customerId"] > 20),
        (["customerId>:20"], lambda c: c["customerId"] >= 20),
        (["customerId<3"], lambda c: c["customerId"] < 3),
        (["customerId<:3"], lambda c: c["customerId"] <= 3),
        (["customerId:[2,4,99]"], lambda c: c["customerId"] in (2, 4)),
        (["countryCode:NL||countryCode:BE"], lambda c: c["countryCode"] in ("NL", "BE")),
        (
            ["customerId>10", "countryCode:de"],
            lambda c: c["customerId"] > 10 and c["countryCode"] == "DE",
        ),
        (["birthYear:null"], lambda c: c["birthYear"] is None),
        (["createdDate>:2025-01-01T00:10:00.000"], lambda c: c["customerId"] >= 10),
        (["modifiedDate:2025-06-01"], lambda c: True),
    ],
    ids=[
        "contains",
        "strict",
        "strict-case",
        "not",
        "gt",
        "gte",
        "lt",
        "lte",
        "list",
        "or",
        "and",
        "null",
        "datetime-gte",
        "datetime-day",
    ],
)
def test_filter_operators_over_http(
    api: httpx.Client, tiny_sandbox: SandboxHandle, filters: list[str], predicate: Any
) -> None:
    response = api.get("/customers", params={"filter": filters, "size": 50})
    assert response.status_code == 200
    expected = [c["customerId"] for c in tiny_sandbox.world.records("customers") if predicate(c)]
    body = response.json()
    assert [c["customerId"] for c in body["content"]] == expected
    assert body["totalElements"] == len(expected)


def test_sort_over_http(api: httpx.Client) -> None:
    body = api.get(
        "/reservations", params={"sort": ["status,desc", "reservationId,asc"], "size": 50}
    ).json()
    keys = [(r["status"], r["reservationId"]) for r in body["content"]]
    assert keys == sorted(keys, key=lambda k: (-k[0], k[1]))
    assert [s["property"] for s in body["sort"]] == ["status", "reservationId"]
    assert [s["direction"] for s in body["sort"]] == ["DESC", "ASC"]
    plain = api.get("/reservations", params={"sort": "arrivalDate", "size": 3}).json()
    assert plain["sort"][0]["ascending"] is True


def test_keyset_paging_reads_every_record_once(api: httpx.Client) -> None:
    seen: list[int] = []
    cursor = 0
    while True:
        page = api.get(
            "/events", params={"filter": f"eventId>{cursor}", "sort": "eventId,asc", "size": 7}
        ).json()
        if page["empty"]:
            break
        ids = [e["eventId"] for e in page["content"]]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        seen += ids
        cursor = ids[-1]
    assert seen == list(range(1, 51))


def test_archived_records_hidden_unless_asked(api: httpx.Client) -> None:
    hidden = api.get("/distributionchannels").json()
    assert [d["code"] for d in hidden["content"]] == ["WEB", "OTA"]  # OTA archives in future
    shown = api.get("/distributionchannels", headers={"x-show-archived": "true"}).json()
    assert shown["totalElements"] == 3
    assert api.get("/units").json()["totalElements"] == 4
    assert api.get("/units", headers={"x-show-archived": "TRUE"}).json()["totalElements"] == 5
    assert api.get("/units", headers={"locale": "de_DE"}).status_code == 200


# -- routes ---------------------------------------------------------------------------------

ITEMS = [
    ("/distributionchannels/2", "distributionChannelId", 2),
    ("/locations/1", "locationId", 1),
    ("/accommodationtypes/11", "resourceId", 11),
    ("/units/101", "unitId", 101),
    ("/companies/2", "companyId", 2),
    ("/customers/7", "customerId", 7),
    ("/reservations/1003", "reservationId", 1003),
]


@pytest.mark.parametrize(("path", "pk", "key"), ITEMS, ids=[p for p, _, _ in ITEMS])
def test_item_endpoints(api: httpx.Client, path: str, pk: str, key: int) -> None:
    response = api.get(path)
    assert response.status_code == 200
    assert response.json()[pk] == key
    missing = api.get(path.rsplit("/", 1)[0] + "/424242")
    assert missing.status_code == 404
    assert error_of(missing)["code"] == "NOT_FOUND"


LISTS = [
    ("/locations", 2),
    ("/accommodationtypes", 3),
    ("/accommodationtypes/details", 3),
    ("/accommodationtypes/11/rates", 2),
    ("/accommodationtype/11/rates", 2),
    ("/units", 4),
    ("/ratetypes", 2),
    ("/ratetypes/rateoptions", 3),
    ("/ratetypes/2/rateoptions", 2),
    ("/companies", 2),
    ("/companies/journalreports", 2),
    ("/companies/journalreports/1/entries", 2),
    ("/cashreservations/accounts", 2),
    ("/cashreservations/clearance", 3),
    ("/customers", 25),
    ("/reservations", 30),
    ("/reservations/details", 30),
    ("/reservations/bills", 90),
    ("/reservations/1001/content", 1),
    ("/events", 50),
]


@pytest.mark.parametrize(("path", "total"), LISTS, ids=[p for p, _ in LISTS])
def test_list_endpoints(api: httpx.Client, path: str, total: int) -> None:
    response = api.get(path, params={"size": 50})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == ENVELOPE_KEYS
    assert body["totalElements"] == total


def test_accommodation_type_details_add_capacities(api: httpx.Client) -> None:
    plain = api.get("/accommodationtypes/11").json()
    assert "capacities" not in plain
    details = api.get("/accommodationtypes/11/details").json()
    assert details["capacities"][0]["capacityId"] == 101
    page = api.get("/accommodationtypes/details", params={"returnSections": "CAPACITIES"}).json()
    assert all(t["capacities"] for t in page["content"])
    listed = api.get("/accommodationtypes", params={"filter": "resourceId:[10,12]"}).json()
    assert [t["resourceId"] for t in listed["content"]] == [10, 12]
    assert all("capacities" not in t for t in listed["content"])


def test_reservation_sub_resources(api: httpx.Client) -> None:
    details = api.get("/reservations/1001/details").json()
    assert details["reservationId"] == 1001
    assert details["reservedResources"][0]["reservedResourceId"] == 5001
    assert {line["payerType"] for line in details["customerBill"]} == {"CUSTOMER"}
    assert {line["payerType"] for line in details["agentBill"]} == {"AGENT"}
    assert details["payingCustomerBill"] == []
    assert details["subjects"][0]["reservationSubjectId"] == 8001
    only = api.get("/reservations/1001/details", params={"returnSections": "SUBJECTS"}).json()
    assert "subjects" in only and "customerBill" not in only
    bad = api.get("/reservations/1001/details", params={"returnSections": "NOPE"})
    assert bad.status_code == 400
    bills = api.get("/reservations/1001/bills", params={"payerType": "AGENT"}).json()
    assert [b["payerType"] for b in bills] == ["AGENT", "AGENT"]
    assert api.get("/reservations/1001/subjects").json()[0]["reservationId"] == 1001
    assert api.get("/reservations/999/subjects").status_code == 404


def test_bills_need_payer_type(api: httpx.Client) -> None:
    response = api.get("/reservations/1001/bills")
    assert response.status_code == 400
    assert "payerType" in error_of(response)["message"]
    assert api.get("/reservations/1001/bills", params={"payerType": "X"}).status_code == 400


@pytest.mark.parametrize(
    "params",
    [{"reservationIds": "1002,1001"}, {"reservationIds": ["1001", "1002"]}],
    ids=["comma", "repeated"],
)
def test_multi_reservation_forms(api: httpx.Client, params: dict[str, Any]) -> None:
    details = api.get(
        "/reservations/details", params={**params, "returnSections": "RESERVEDRESOURCES"}
    ).json()
    assert [r["reservationId"] for r in details["content"]] == [1001, 1002]
    assert all("reservedResources" in r and "subjects" not in r for r in details["content"])
    bills = api.get("/reservations/bills", params={**params, "payerType": "CUSTOMER"}).json()
    assert {(b["reservationId"], b["payerType"]) for b in bills["content"]} == {
        (1001, "CUSTOMER"),
        (1002, "CUSTOMER"),
    }
    assert bills["totalElements"] == 4


def test_reservation_query_parameters(api: httpx.Client) -> None:
    by_code = api.get("/reservations", params={"distributionChannelCode": "OTA", "size": 50}).json()
    assert {r["distributionChannelCode"] for r in by_code["content"]} == {"OTA"}
    by_type = api.get("/reservations", params={"resourceId": 11, "size": 50}).json()
    assert [r["reservationId"] for r in by_type["content"]] == list(range(1001, 1030, 3))
    by_unit = api.get("/reservations", params={"unitId": 104, "size": 50}).json()
    assert [r["reservationId"] for r in by_unit["content"]] == list(range(1004, 1030, 5))


def test_availability_get_and_post(api: httpx.Client) -> None:
    got = api.get(
        "/accommodationtypes/availability",
        params={
            "arrivalDateFrom": "2026-03-01",
            "arrivalDateTo": "2026-03-02",
            "resourceId": 10,
            "duration": 7,
        },
    )
    assert got.status_code == 200
    assert [(a["arrivalDate"], a["duration"]) for a in got.json()] == [
        ("2026-03-01", 7),
        ("2026-03-02", 7),
    ]
    posted = api.post(
        "/accommodationtypes/availability",
        json={"arrivalDateFrom": "2026-03-01", "arrivalDateTo": "2026-03-31"},
    )
    assert posted.status_code == 200
    assert len(posted.json()) == 31 * 3 * 4
    too_long = api.get(
        "/accommodationtypes/availability",
        params={"arrivalDateFrom": "2026-03-01", "arrivalDateTo": "2026-04-01"},
    )
    assert too_long.status_code == 400
    assert error_of(too_long)["code"] == "RANGE_TOO_LARGE"
    assert api.get("/accommodationtypes/availability").status_code == 400


def test_create_and_update_reservation(api: httpx.Client) -> None:
    created = api.post(
        "/reservations", json={"accommodationTypes": [{"resourceId": 10}], "categoryCode": "GUEST"}
    )
    assert created.status_code == 201
    rid = created.json()["reservationId"]
    assert api.get(f"/reservations/{rid}").json()["status"] == 12
    assert api.put(f"/reservations/{rid}", json={"action": "CONFIRM"}).json()["status"] == 21
    illegal = api.put(f"/reservations/{rid}", json={"action": "CONFIRM"})
    assert illegal.status_code == 400
    assert "CONFIRM" in error_of(illegal)["message"]
    assert api.post("/reservations", json={}).status_code == 400
    assert api.post("/reservations", content=b"not json").status_code == 400


# -- throttling, admin, OpenAPI -------------------------------------------------------------


def test_the_sixteenth_concurrent_request_gets_429() -> None:
    settings = SandboxSettings(latency_ms=1200, max_concurrency=15)
    with run_sandbox(settings, world=TinyWorld()) as handle:
        token = authenticate(handle)

        async def burst() -> list[httpx.Response]:
            limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
            async with httpx.AsyncClient(
                base_url=handle.base_url,
                limits=limits,
                timeout=30,
                headers={"Authorization": token},
            ) as client:
                return await asyncio.gather(*(client.get("/units") for _ in range(16)))

        responses = asyncio.run(burst())
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [200] * 15 + [429]
        refused = next(r for r in responses if r.status_code == 429)
        assert refused.headers["Retry-After"] == "1"
        assert error_of(refused)["code"] == "TOO_MANY_REQUESTS"
        stats = handle.stats()
        assert stats["peakInFlightPerClient"] == 15
        assert stats["throttled"] == 1
        assert stats["inFlight"] == 0


def test_admin_endpoints(tiny_sandbox: SandboxHandle, api: httpx.Client) -> None:
    admin = tiny_sandbox.admin_url
    assert httpx.get(admin + "/health").json()["status"] == "ok"
    assert httpx.post(admin + "/stats/reset").status_code == 200
    api.get("/units/101")
    api.get("/units/999")
    stats = httpx.get(admin + "/stats").json()
    assert stats["endpoints"] == {"GET /service/v2/units/{unitId}": 2}
    assert stats["endpointStatuses"]["GET /service/v2/units/{unitId}"] == {"200": 1, "404": 1}
    assert stats["inFlight"] == 0 and stats["peakInFlight"] >= 1
    before = tiny_sandbox.world.now
    advanced = httpx.post(admin + "/advance", params={"hours": 24})
    assert advanced.status_code == 200
    assert (tiny_sandbox.world.now - before).total_seconds() == 24 * 3600
    assert httpx.post(admin + "/advance", params={"hours": "x"}).status_code == 400
    bad = httpx.post(admin + "/faults", json={"faults": {"explode": 1}})
    assert bad.status_code == 400 and "explode" in bad.json()["message"]
    ok = httpx.post(admin + "/faults", json={"http_503": 0.0})
    assert ok.json()["faults"] == {"http_503": 0.0}


def test_openapi_document(tiny_sandbox: SandboxHandle) -> None:
    doc = httpx.get(tiny_sandbox.base_url.removesuffix("/service/v2") + "/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    paths = doc["paths"]
    assert "/service/v2/reservations/{reservationId}/details" in paths
    listing = paths["/service/v2/customers"]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {"page", "size", "sort", "filter"}
    assert "204" in paths["/service/v2/reservations"]["get"]["responses"]
    page = doc["components"]["schemas"]["PageCustomers"]
    assert set(page["required"]) == ENVELOPE_KEYS
    assert doc["components"]["schemas"]["Customers"]["properties"]["customerId"]["type"] == (
        "integer"
    )
    assert paths["/service/v2/authenticate"]["post"]["security"] == []


# -- the generated world --------------------------------------------------------------------


def test_world_lists_answer_with_the_envelope(world_api: httpx.Client) -> None:
    for path in (
        "/distributionchannels",
        "/locations",
        "/accommodationtypes",
        "/units",
        "/ratetypes",
        "/ratetypes/rateoptions",
        "/companies",
        "/companies/journalreports",
        "/cashreservations/accounts",
        "/cashreservations/clearance",
        "/customers",
        "/reservations",
        "/reservations/details",
        "/events",
    ):
        response = world_api.get(path, params={"size": 5})
        assert response.status_code in (200, 204), path
        if response.status_code == 200:
            assert set(response.json()) == ENVELOPE_KEYS, path


def test_world_keyset_paging_matches_total(
    world_api: httpx.Client, world_sandbox: SandboxHandle
) -> None:
    world = world_sandbox.world
    with world.lock:
        expected = list(world.keys("reservations"))
    seen: list[int] = []
    cursor = 0
    while True:
        response = world_api.get(
            "/reservations",
            params={"filter": f"reservationId>{cursor}", "sort": "reservationId,asc", "size": 2000},
        )
        if response.status_code == 204:
            break
        ids = [r["reservationId"] for r in response.json()["content"]]
        if not ids:
            break
        seen += ids
        cursor = ids[-1]
    assert seen == expected


def test_world_events_strictly_increasing(world_api: httpx.Client) -> None:
    body = world_api.get("/events", params={"sort": "eventId,asc", "size": 2000}).json()
    ids = [e["eventId"] for e in body["content"]]
    assert all(a < b for a, b in itertools.pairwise(ids))


def test_world_filters_agree_with_records(
    world_api: httpx.Client, world_sandbox: SandboxHandle
) -> None:
    world = world_sandbox.world
    with world.lock:
        records = list(world.records("reservations"))
    if not records:
        pytest.skip("no reservations in the generated world")
    status = records[len(records) // 2]["status"]
    arrival = records[len(records) // 2]["arrivalDate"]
    expected = sum(1 for r in records if r["status"] == status and r["arrivalDate"] >= arrival)
    body = world_api.get(
        "/reservations",
        params={"filter": [f"status:{status}", f"arrivalDate>:{arrival}"], "size": 1},
    ).json()
    assert body["totalElements"] == expected


def test_world_details_and_availability(
    world_api: httpx.Client, world_sandbox: SandboxHandle
) -> None:
    world = world_sandbox.world
    with world.lock:
        rid = world.keys("reservations")[0]
        today = world.now.date().isoformat()
    details = world_api.get(f"/reservations/{rid}/details").json()
    assert {"reservedResources", "customerBill", "subjects"} <= set(details)
    availability = world_api.get(
        "/accommodationtypes/availability",
        params={"arrivalDateFrom": today, "arrivalDateTo": today, "duration": 7},
    )
    assert availability.status_code == 200
    assert all(a["duration"] == 7 for a in availability.json())


def test_collections_cover_the_protocol() -> None:
    assert set(COLLECTIONS) == set(TinyWorld().data)

"""The generated world behind the real HTTP layer: reads, a booking, a status move, events."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from sandbox.world import World

runner = pytest.importorskip("sandbox.runner")

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def client() -> Iterator[tuple[httpx.Client, World]]:
    world = World(seed=7)
    settings = runner.SandboxSettings(client_secret="s3cret")
    with (
        runner.run_sandbox(settings, world=world) as handle,
        httpx.Client(base_url=handle.base_url, timeout=30) as c,
    ):
        tok = c.post(
            "/authenticate",
            data={
                "grantType": "client_credentials",
                "clientId": handle.client_id,
                "clientSecret": "s3cret",
                "scope": handle.scope,
            },
        )
        assert tok.status_code == 200, tok.text
        body = tok.json()
        c.headers["Authorization"] = f"{body['token_type']} {body['access_token']}"
        yield c, world


def test_pages_match_the_world(client) -> None:
    c, world = client
    r = c.get("/reservations", params={"size": 50, "page": 1})
    assert r.status_code == 200
    page = r.json()
    assert page["totalElements"] == len(world.keys("reservations"))
    assert [x["reservationId"] for x in page["content"]] == list(world.keys("reservations")[50:100])
    rid = page["content"][0]["reservationId"]
    bills = c.get(f"/reservations/{rid}/bills", params={"payerType": "CUSTOMER"}).json()
    assert bills == [ln for ln in world.children("billlines", rid) if ln["payerType"] == "CUSTOMER"]


def test_book_and_move_over_http(client) -> None:
    c, world = client
    hw = world.event_high_water()
    avail = c.get(
        "/accommodationtypes/availability",
        params={
            "arrivalDateFrom": "2027-03-05",
            "arrivalDateTo": "2027-03-05",
            "duration": 3,
            "distributionChannelCode": "WEB-EUR",
        },
    )
    assert avail.status_code == 200, avail.text
    rt = next(a["resourceId"] for a in avail.json() if a["availableUnits"] > 0)
    created = c.post(
        "/reservations",
        json={
            "accommodationTypes": [
                {
                    "resourceId": rt,
                    "duration": 3,
                    "subjects": {"persons": [{"age": 35, "quantity": 2}]},
                }
            ],
            "categoryCode": "GUEST",
            "distributionChannelCode": "WEB-EUR",
            "customer": {"firstName": "Http", "lastName": "Guest"},
            "arrivalDate": "2027-03-05",
        },
    )
    assert created.status_code in (200, 201), created.text
    rid = created.json()["reservationId"]
    bad = c.put(f"/reservations/{rid}", json={"action": "CHECKED_OUT"})
    assert bad.status_code == 400
    ok = c.put(f"/reservations/{rid}", json={"action": "CANCEL"})
    assert ok.status_code == 200, ok.text
    events = c.get(
        "/events", params={"filter": f"eventId>{hw}", "sort": "eventId,asc", "size": 200}
    ).json()["content"]
    mine = [e for e in events if e["entityId"] == rid and e["eventType"] == "RESERVATION_EVENT"]
    assert [e["entityAction"] for e in mine] == ["CREATE", "UPDATE"]

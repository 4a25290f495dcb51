"""The client builds its requests itself and hands them to the transport (service/client.py).
What goes on the wire must be what httpx's `AsyncClient.build_request` made before: same URL
byte for byte, same headers, same body, same timeouts."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from service.client import ServiceClient
from service.config import ServiceConfig
from service.responses import clean_params as _clean_params
from service.secrets import Secret


@pytest.fixture
def client() -> ServiceClient:
    config = ServiceConfig(
        base_url="https://svc.example.test/service/v2",
        client_id="x",
        client_secret=Secret("y"),
        scope="TST",
        locale="de-DE",
        extra_headers={"x-extra": "1"},
    )
    return ServiceClient(config)


PARAMS: list[dict[str, Any] | None] = [
    None,
    {},
    {
        "filter": ["reservationId>:12", "a<b||c>d", "name==O'Brien & Söhne", "x=1,2 3"],
        "sort": "id,asc",
        "page": 0,
        "size": 100,
        "flag": True,
        "off": False,
        "none": None,
    },
    {"q": "ümlaut/é?#%+", "ids": (1, None, 3)},
]


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("path", ["/reservations/details", "units/17", "a b/ü"])
def test_a_get_is_built_as_httpx_would(
    client: ServiceClient, path: str, params: dict[str, Any] | None
) -> None:
    headers = {"Authorization": "Bearer t"}
    mine = client._build_request("GET", path, params, headers)
    theirs = client._http.build_request(
        "GET", path.lstrip("/"), params=_clean_params(params), headers=headers
    )
    assert str(mine.url) == str(theirs.url)
    assert mine.url.raw_path == theirs.url.raw_path
    assert sorted(mine.headers.multi_items()) == sorted(theirs.headers.multi_items())
    assert mine.extensions == theirs.extensions
    assert mine.method == theirs.method == "GET"


def test_form_and_json_bodies_are_built_as_httpx_would(client: ServiceClient) -> None:
    form_headers = {"content-type": "application/x-www-form-urlencoded"}
    form = {"clientId": "a b&c", "scope": "X"}
    mine = client._build_request("POST", "authenticate", None, form_headers, form=form)
    theirs = client._http.build_request("POST", "authenticate", headers=form_headers, data=form)
    assert mine.content == theirs.content == b"clientId=a+b%26c&scope=X"
    assert sorted(mine.headers.multi_items()) == sorted(theirs.headers.multi_items())

    body = {"a": [1, "é"], "b": None}
    mine = client._build_request("PUT", "x/1", None, {}, json=body)
    theirs = client._http.build_request("PUT", "x/1", json=body)
    assert mine.content == theirs.content
    assert sorted(mine.headers.multi_items()) == sorted(theirs.headers.multi_items())


def test_the_exchange_reads_the_body_and_links_the_request() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"content": [{"unitId": 1}]})

    config = ServiceConfig(
        base_url="https://svc.example.test/service/v2",
        client_id="x",
        client_secret=Secret("y"),
        scope="TST",
    )

    async def exchange() -> tuple[httpx.Request, httpx.Response]:
        async with ServiceClient(config, transport=httpx.MockTransport(handler)) as client:
            request = client._build_request("GET", "units", {"size": 5}, {})
            return request, await client._exchange(request)

    request, response = asyncio.run(exchange())
    assert response.request is request
    assert response.json() == {"content": [{"unitId": 1}]}
    assert str(seen[0].url) == "https://svc.example.test/service/v2/units?size=5"
    assert seen[0].extensions["timeout"]["read"] == config.timeout

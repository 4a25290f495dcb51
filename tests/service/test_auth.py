from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from service.auth import REFRESH_FRACTION
from service.errors import AuthenticationError
from service.sync import run
from tests.service.fakes import CLIENT_ID, SECRET, FakeService, records
from tests.service.helpers import client_for, drain


@pytest.fixture
def fake_with_list(fake: FakeService) -> FakeService:
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 26))))
    return fake


def test_token_is_reused_across_requests(fake_with_list, limiter) -> None:
    async def main() -> None:
        async with client_for(fake_with_list, limiter) as client:
            for _ in range(3):
                await drain(client.iter_keyset("/units", "unitId"))
            assert client.auth.authentications == 1
            token = client.auth.token
            assert token is not None
            left = token.refresh_at - time.monotonic()
            assert 0 < left <= REFRESH_FRACTION * 3600
            assert client.identity == {"client_id": "42", "concern_id": "7"}

    run(main())
    assert fake_with_list.tokens_issued == 1


def test_clients_of_one_process_share_a_fresh_token(fake_with_list, limiter) -> None:
    """A run opens one client per asset; only the first authenticates."""

    async def main() -> None:
        for _ in range(3):
            async with client_for(fake_with_list, limiter) as client:
                await drain(client.iter_keyset("/units", "unitId"))

    run(main())
    assert fake_with_list.tokens_issued == 1


def test_camel_case_form_by_default_and_snake_case_by_setting(fake_with_list, limiter) -> None:
    async def main(style: str) -> None:
        async with client_for(fake_with_list, limiter, auth_style=style) as client:
            await client.get_page("/units")

    run(main("camel"))
    run(main("snake"))
    camel, snake = fake_with_list.auth_forms
    assert camel == {
        "grantType": "client_credentials",
        "clientId": CLIENT_ID,
        "clientSecret": SECRET,
        "scope": "TST",
    }
    assert snake == {
        "grant_type": "client_credentials",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "scope": "TST",
    }


def test_expired_token_is_refreshed_once_for_concurrent_requests(fake_with_list, limiter) -> None:
    async def main() -> None:
        async with client_for(fake_with_list, limiter) as client:
            await client.get_page("/units")
            fake_with_list.revoke_tokens()
            fake_with_list.latency = 0.01  # keep the 20 requests overlapping
            pages = await asyncio.gather(*(client.get_page("/units") for _ in range(20)))
            assert all(p.content for p in pages)
            assert client.auth.authentications == 2

    run(main())
    assert fake_with_list.tokens_issued == 2


def test_short_lived_token_is_renewed_before_it_expires(fake_with_list, limiter) -> None:
    fake_with_list.expires_in = 1  # renewal due after 0.8 s; the next call must not reuse it

    async def main() -> None:
        async with client_for(fake_with_list, limiter) as client:
            await client.get_page("/units")
            token = client.auth.token
            assert token is not None
            object.__setattr__(token, "refresh_at", time.monotonic() - 1)  # as if 0.8 s passed
            await client.get_page("/units")
            assert client.auth.authentications == 2

    run(main())
    # no request was refused: the token was renewed proactively, not after a 401
    assert all(r.url.path.endswith(("/authenticate", "/units")) for r in fake_with_list.requests)
    assert fake_with_list.paths["/units"] == 2


def test_wrong_credentials_fail_fast_with_a_hint(fake_with_list, limiter) -> None:
    async def main() -> None:
        async with client_for(fake_with_list, limiter, client_secret="wrong-secret-value") as c:
            await c.get_page("/units")

    with pytest.raises(AuthenticationError) as info:
        run(main())
    message = str(info.value)
    assert "refresh" in message and "API key" in message and "test environment" in message
    assert "wrong-secret-value" not in message
    assert len(fake_with_list.auth_forms) == 1  # a refusal is not retried


def test_token_refused_even_after_refresh_raises(fake_with_list, limiter) -> None:
    def always_401(request: httpx.Request) -> httpx.Response | None:
        if request.url.path.endswith("/units"):
            return httpx.Response(401, json={"message": "nope"})
        return None

    fake_with_list.scripts.append(always_401)

    async def main() -> None:
        async with client_for(fake_with_list, limiter) as c:
            await c.get_page("/units")

    with pytest.raises(AuthenticationError, match="freshly issued tokens were refused"):
        run(main())
    assert fake_with_list.tokens_issued == 1 + 5  # one refresh per attempt, max_retries=4

"""What each answer of POST /authenticate means: a refusal stops at once with the credential
message, a bare 500 is asked again twice and then treated as a refusal, only answers that are
no verdict (connection errors, 429, 502-504) use the retry budget (service/token_request.py)."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest
import stamina

from service.errors import (
    TEST_REFRESH_HINT,
    AuthenticationError,
    NotFound,
    ServiceError,
    ServiceUnavailable,
)
from service.sync import run
from tests.service.fakes import SECRET, FakeService, records
from tests.service.helpers import client_for

FAST = 5.0  # seconds: a verdict on the credentials comes well within this, with real backoff


def _auth_answers(fake: FakeService, answer: Callable[[int], httpx.Response | None]) -> None:
    """Answer the n-th authenticate request (0-based) with `answer(n)` (None: the fake's own)."""
    seen = [0]

    def script(request: httpx.Request) -> httpx.Response | None:
        if not request.url.path.endswith("/authenticate"):
            return None
        n, seen[0] = seen[0], seen[0] + 1
        return answer(n)

    fake.scripts.append(script)


def _auth_requests(fake: FakeService) -> int:
    return sum(1 for r in fake.requests if r.url.path.endswith("/authenticate"))


def _read_units(fake: FakeService, limiter, **config) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with client_for(fake, limiter, **config) as client:
            await client.get_page("/units")

    run(main())


@pytest.fixture
def units(fake: FakeService) -> FakeService:
    fake.add_list("/units", "unitId", records("unitId", [1, 2, 3]))
    return fake


# The client's default budget (8 retries, 120 s): the rule must not depend on a small one.
DEFAULT_BUDGET = {"max_retries": 8, "max_retry_seconds": 120.0}

CREDENTIAL_BODIES = [
    pytest.param({"json": {"status": 500, "message": "Bad credentials"}}, id="bad-credentials"),
    pytest.param({"json": {"error": "invalid_client"}}, id="oauth-invalid-client"),
    pytest.param({"json": {"message": "Invalid scope XYZ"}}, id="invalid-scope"),
    pytest.param({"text": "Unauthorized"}, id="plain-unauthorized"),
    pytest.param({"text": "<html><h1>Client secret does not match</h1></html>"}, id="html"),
]


@pytest.mark.parametrize("body", CREDENTIAL_BODIES)
def test_a_500_naming_the_credentials_stops_at_once(units: FakeService, limiter, body) -> None:
    _auth_answers(units, lambda n: httpx.Response(500, **body))
    started = time.monotonic()
    with stamina.set_testing(False), pytest.raises(AuthenticationError) as info:
        _read_units(units, limiter, **DEFAULT_BUDGET)
    assert time.monotonic() - started < FAST
    assert _auth_requests(units) == 1
    message = str(info.value)
    assert "HTTP 500" in message and message.endswith(TEST_REFRESH_HINT)
    assert "\n" not in message and SECRET not in message


def test_a_bare_500_is_asked_twice_more_then_names_the_credentials(
    units: FakeService, limiter
) -> None:
    """The documented answer of authenticate to any error: retried twice quickly, then the
    credential message (a wrong secret must not cost two minutes of retries)."""
    bare = {"status": 500, "error": "ERR", "message": "Error occurred while processing"}
    _auth_answers(units, lambda n: httpx.Response(500, json=bare))
    started = time.monotonic()
    with stamina.set_testing(False), pytest.raises(AuthenticationError) as info:
        _read_units(units, limiter, **DEFAULT_BUDGET)
    assert time.monotonic() - started < FAST
    assert _auth_requests(units) == 3
    message = str(info.value)
    assert "3 times" in message and "Error occurred while processing" in message
    assert "wrong client id, secret or scope" in message and TEST_REFRESH_HINT in message


def test_two_bare_500s_then_a_token_is_a_success(units: FakeService, limiter) -> None:
    _auth_answers(units, lambda n: httpx.Response(500, text="oops") if n < 2 else None)
    _read_units(units, limiter)
    assert _auth_requests(units) == 3 and units.tokens_issued == 1


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(lambda: httpx.Response(503, text="busy"), id="503"),
        pytest.param(lambda: httpx.Response(502, text="bad gateway"), id="502"),
        pytest.param(lambda: httpx.Response(429, headers={"retry-after": "0"}), id="429"),
    ],
)
def test_answers_that_are_no_verdict_use_the_retry_budget(
    units: FakeService, limiter, answer: Callable[[], httpx.Response]
) -> None:
    _auth_answers(units, lambda n: answer() if n < 5 else None)
    _read_units(units, limiter, max_retries=6)
    assert _auth_requests(units) == 6 and units.tokens_issued == 1


def test_connection_errors_are_retried_then_unavailable(units: FakeService, limiter) -> None:
    def refuse(n: int) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    _auth_answers(units, refuse)
    with pytest.raises(ServiceUnavailable) as info:
        _read_units(units, limiter, max_retries=3)
    assert _auth_requests(units) == 4
    assert info.value.status is None and "/authenticate" in str(info.value)


@pytest.mark.parametrize("status", [400, 401, 403])
def test_client_errors_are_refusals(units: FakeService, limiter, status: int) -> None:
    _auth_answers(units, lambda n: httpx.Response(status, json={"message": "no"}))
    with pytest.raises(AuthenticationError, match=f"HTTP {status}: no"):
        _read_units(units, limiter)
    assert _auth_requests(units) == 1


def test_no_authenticate_endpoint_points_at_the_base_url(units: FakeService, limiter) -> None:
    _auth_answers(units, lambda n: httpx.Response(404, json={"message": "No static resource"}))
    with pytest.raises(NotFound, match="RESERVOIR_BASE_URL must include the service's base path"):
        _read_units(units, limiter)
    assert _auth_requests(units) == 1


def test_an_echoed_secret_never_reaches_the_message(units: FakeService, limiter) -> None:
    echo = {"message": f"invalid clientSecret {SECRET} for client reservoir-test"}
    _auth_answers(units, lambda n: httpx.Response(500, json=echo))
    with pytest.raises(ServiceError) as info:
        _read_units(units, limiter)
    assert SECRET not in str(info.value) and "invalid clientSecret" in str(info.value)

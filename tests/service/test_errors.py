from __future__ import annotations

import pytest

from service.errors import (
    AuthenticationError,
    BadRequest,
    ConfigurationError,
    NotFound,
    PermissionDenied,
    ServiceError,
    ServiceUnavailable,
)
from service.sync import run
from tests.service.fakes import FakeService, _error, fail_times
from tests.service.helpers import client_for


@pytest.mark.parametrize(
    ("status", "exc_type"),
    [
        pytest.param(400, BadRequest, id="400"),
        pytest.param(403, PermissionDenied, id="403"),
        pytest.param(404, NotFound, id="404"),
        pytest.param(409, ServiceError, id="409-generic"),
    ],
)
def test_status_codes_map_to_the_error_tree(fake: FakeService, limiter, status, exc_type) -> None:
    fake.scripts.append(fail_times(1, lambda r: _error(status, "E", "Invalid filter on status")))

    async def main() -> None:
        async with client_for(fake, limiter) as client:
            await client.get_json("/reservations/5/details")

    with pytest.raises(exc_type) as info:
        run(main())
    assert info.value.endpoint == "/reservations/{id}/details"
    assert "Invalid filter on status" in str(info.value)
    if exc_type is BadRequest:
        assert info.value.server_message == "Invalid filter on status"
    assert len(fake.requests) == 2  # authenticate + one attempt: client errors are not retried


def test_every_error_is_a_service_error() -> None:
    for exc_type in (
        AuthenticationError,
        BadRequest,
        ConfigurationError,
        NotFound,
        PermissionDenied,
        ServiceUnavailable,
    ):
        assert issubclass(exc_type, ServiceError)


def test_missing_path_on_rates_falls_back_to_the_singular_spelling(fake, limiter) -> None:
    from tests.service.fakes import records
    from tests.service.helpers import drain, service_for

    fake.add_list("/accommodationtype/9/rates", "rateId", records("rateId", [1, 2, 3]))

    async def main() -> list:
        async with service_for(fake, limiter) as service:
            return await drain(service.rates(9))

    assert [r["rateId"] for r in run(main())] == [1, 2, 3]

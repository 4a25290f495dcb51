from __future__ import annotations

import logging

import pytest

from service.errors import AuthenticationError
from service.secrets import REDACTED, RedactingFilter, Secret, redact
from service.sync import run
from tests.service.fakes import SECRET, FakeService, _error, fail_times, records
from tests.service.helpers import client_for, drain


def test_secret_never_reaches_logs_reprs_or_errors(fake: FakeService, limiter, caplog) -> None:
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 40))))
    fake.scripts.append(fail_times(1, lambda r: _error(503, "E", "x"), "/units"))
    caplog.set_level(logging.DEBUG)

    async def main() -> list[str]:
        texts = []
        async with client_for(fake, limiter) as client:
            await drain(client.iter_keyset("/units", "unitId"))
            texts += [
                repr(client),
                repr(client.config),
                str(client.config),
                repr(client.auth.token),
            ]
            token = client.auth.token
            assert token is not None
            logging.getLogger("service.client").info("sending %s", token.header.reveal())
            logging.getLogger("httpx").info("form clientSecret=%s", SECRET)
        return texts

    texts = run(main())
    access_tokens = [f"tok-{i}-abcdefgh" for i in range(1, fake.tokens_issued + 1)]
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request" in logged or "->" in logged  # something was logged at all
    for text in [*texts, logged]:
        assert SECRET not in text
        for tok in access_tokens:
            assert tok not in text


def test_auth_error_has_no_secret(fake: FakeService, limiter, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "Wr0ng-secret-abcdef"

    async def main() -> None:
        async with client_for(fake, limiter, client_secret=wrong) as client:
            await client.get_json("/units")

    with pytest.raises(AuthenticationError) as info:
        run(main())
    for text in (str(info.value), repr(info.value), caplog.text):
        assert wrong not in text and SECRET not in text


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Authorization: Bearer abc.def.ghi", id="header"),
        pytest.param("{'authorization': 'Bearer abc.def.ghi'}", id="dict"),
        pytest.param("grantType=client_credentials&clientSecret=abc.def.ghi", id="form-camel"),
        pytest.param("client_secret=abc.def.ghi&scope=X", id="form-snake"),
        pytest.param('{"access_token": "abc.def.ghi"}', id="token-json"),
    ],
)
def test_redact_patterns(text: str) -> None:
    assert "abc.def.ghi" not in redact(text)
    assert REDACTED in redact(text)


def test_filter_rewrites_args() -> None:
    Secret("very-secret-value-123")
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "value=%s", ("very-secret-value-123",), None
    )
    RedactingFilter().filter(record)
    assert "very-secret-value-123" not in record.getMessage()


def test_secret_wrapper() -> None:
    s = Secret("hunter2-hunter2")
    assert repr(s) == f"Secret('{REDACTED}')" and str(s) == REDACTED and f"{s:>20}" == REDACTED
    assert s.reveal() == "hunter2-hunter2" and s == Secret("hunter2-hunter2")
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(s)


def _echoes() -> list[str]:
    from urllib.parse import quote, quote_plus

    return [
        f"bad credential {quote(SECRET, safe='')}",
        f"bad credential {quote_plus(SECRET)}",
        f"bad credential {quote(quote(SECRET, safe=''), safe='')}",
        f"bad credential starting {SECRET[:10]}",
        f"bad credential ending {SECRET[-9:]}",
        f"clientSecret%3D{quote(SECRET, safe='')}%26scope%3DX",
    ]


@pytest.mark.parametrize("echo", _echoes(), ids=["quote", "plus", "twice", "head", "tail", "form"])
def test_secret_echoed_encoded_or_in_part_is_scrubbed(
    fake: FakeService, limiter, caplog, echo: str
) -> None:
    """A service that echoes the secret back URL-encoded or cut short leaks none of it."""
    fake.add_list("/units", "unitId", records("unitId", [1]))
    fake.scripts.append(fail_times(99, lambda r: _error(422, "E", echo), "/units"))
    caplog.set_level(logging.DEBUG)

    async def main() -> None:
        async with client_for(fake, limiter) as client:
            await client.get_json("/units")

    with pytest.raises(Exception) as info:
        run(main())
    texts = [str(info.value), repr(info.value), caplog.text]
    assert any(REDACTED in text for text in texts)  # the echo reached the message, scrubbed
    for text in texts:
        for piece in (SECRET[i : i + 8] for i in range(len(SECRET) - 7)):
            assert piece not in text


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        pytest.param("client%5Fsecret%3Dabc%2Fdef&scope=1", "&scope=1", id="encoded-key"),
        pytest.param("access_token%22%3A%22abc.def%22", "", id="encoded-json"),
    ],
)
def test_redact_encoded_credential_fields(text: str, kept: str) -> None:
    out = redact(text)
    assert "abc" not in out and REDACTED in out and out.endswith(kept)

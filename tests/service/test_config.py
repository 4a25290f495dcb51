from __future__ import annotations

import pytest

from service.errors import ConfigurationError
from service.secrets import Secret
from tests.service.fakes import SECRET, make_config


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        pytest.param({"client_id": ""}, "client_id is missing", id="no-client-id"),
        pytest.param({"client_secret": ""}, "client_secret is missing", id="no-secret"),
        pytest.param({"base_url": ""}, "base_url is missing", id="no-base-url"),
        pytest.param({"scope": ""}, "scope is missing .*RESERVOIR_SCOPE", id="no-scope"),
        pytest.param({"scope": "  "}, "scope is missing", id="blank-scope"),
        pytest.param({"base_url": "http://api.example.test/service/v2"}, "https", id="plain-http"),
        pytest.param({"base_url": "ftp://x/y"}, "absolute http", id="bad-scheme"),
        pytest.param({"max_concurrency": 0}, "max_concurrency", id="concurrency"),
        pytest.param({"page_size": 0}, "page_size", id="page-size"),
        pytest.param({"auth_style": "kebab"}, "auth_style", id="auth-style"),
    ],
)
def test_invalid_settings_fail_fast(overrides: dict, fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=fragment):
        make_config(**overrides)


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8765/service/v2", "http://localhost:1/x", "http://[::1]:9/service/v2"],
)
def test_plain_http_is_allowed_on_loopback(url: str) -> None:
    assert make_config(base_url=url).base_url == url


def test_secret_never_in_repr_or_str() -> None:
    config = make_config()
    assert isinstance(config.client_secret, Secret)
    assert config.client_secret.reveal() == SECRET
    for text in (repr(config), str(config), f"{config.client_secret}", str(config.client_secret)):
        assert SECRET not in text

"""Settings from the environment: every variable the product reads is documented (README,
.env.example, `reservoir settings`), wrong values are refused with a message naming the variable,
and the Dagster code location's resources (which wire only the URL, the credentials and the
scope) take the client's limits and tuning from the environment of the run, as the CLI does."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import pytest

from pipelines.settings import ENV_VARS, Settings, SettingsError, client_tuning

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("pipelines", "assets", "service", "lake", "warehouse", "sandbox")
SERVICE = {
    "RESERVOIR_BASE_URL": "https://svc.example.test/v2",
    "RESERVOIR_CLIENT_ID": "reservoir-test",
    "RESERVOIR_CLIENT_SECRET": "not-a-real-secret",
    "RESERVOIR_SCOPE": "TST",
}


def _read_by_the_product() -> set[str]:
    names: set[str] = set()
    for folder in PRODUCT:
        for path in (ROOT / folder).rglob("*.py"):
            names.update(re.findall(r"RESERVOIR_[A-Z_]*[A-Z]", path.read_text()))
    return names


def test_every_setting_the_product_reads_is_documented() -> None:
    read = _read_by_the_product()
    assert "RESERVOIR_TIMEOUT" in read and "RESERVOIR_BASE_URL" in read  # the scan sees them
    example = (ROOT / ".env.example").read_text()
    readme = (ROOT / "README.md").read_text()
    missing = {
        "ENV_VARS (reservoir settings)": sorted(read - set(ENV_VARS)),
        ".env.example": sorted(n for n in read if f"{n}=" not in example),
        "README.md": sorted(n for n in read if f"| `{n}` |" not in readme),
    }
    assert missing == {k: [] for k in missing}


@pytest.mark.parametrize(
    ("name", "raw", "field", "value"),
    [
        ("RESERVOIR_TIMEOUT", "90", "timeout", 90.0),
        ("RESERVOIR_PAGE_SIZE", "250", "page_size", 250),
        ("RESERVOIR_DETAILS_PAGE_SIZE", "20", "details_page_size", 20),
        ("RESERVOIR_AUTH_STYLE", "snake", "auth_style", "snake"),
        ("RESERVOIR_LOCALE", "nl_NL", "locale", "nl_NL"),
        ("RESERVOIR_MAX_CONCURRENCY", "4", "max_concurrency", 4),
        ("RESERVOIR_MAX_REQUESTS", "0", "max_requests", 0),
        ("RESERVOIR_MAX_RESPONSE_MB", "8", "max_response_mb", 8.0),
    ],
)
def test_the_clients_tuning_is_read_by_name(name: str, raw: str, field: str, value: object) -> None:
    assert client_tuning({name: raw}) == {field: value}
    assert client_tuning({name: "  "}) == {}  # blank = unset


@pytest.mark.parametrize(
    ("name", "raw", "says"),
    [
        ("RESERVOIR_TIMEOUT", "soon", "RESERVOIR_TIMEOUT must be a number of at least 1.0"),
        ("RESERVOIR_TIMEOUT", "0", "RESERVOIR_TIMEOUT must be a number of at least 1.0"),
        ("RESERVOIR_PAGE_SIZE", "-5", "RESERVOIR_PAGE_SIZE must be a number of at least 1"),
        ("RESERVOIR_DETAILS_PAGE_SIZE", "1.5", "RESERVOIR_DETAILS_PAGE_SIZE must be a number"),
        ("RESERVOIR_AUTH_STYLE", "kebab", "RESERVOIR_AUTH_STYLE must be 'camel'"),
        ("RESERVOIR_LOCALE", "en\r\nx-evil: 1", "RESERVOIR_LOCALE must be a language code"),
        ("RESERVOIR_LOCALE", "english please", "RESERVOIR_LOCALE must be a language code"),
        ("RESERVOIR_MAX_CONCURRENCY", "40", "between 1 and 15"),
    ],
)
def test_a_wrong_value_is_refused_naming_the_variable(name: str, raw: str, says: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(says)) as info:
        client_tuning({name: raw})
    assert "unset it" in str(info.value) or "between 1 and 15" in str(info.value)
    with pytest.raises(SettingsError, match=re.escape(says)):  # before a command starts
        Settings.from_env({**SERVICE, "RESERVOIR_DATA_DIR": "/tmp", name: raw})


def test_the_cli_passes_the_tuning_on_to_its_runs_client(tmp_path: Path) -> None:
    from pipelines.runner import build_resources
    from pipelines.target import ServiceTarget

    env = {**SERVICE, "RESERVOIR_DATA_DIR": str(tmp_path), "RESERVOIR_AUTH_STYLE": "snake"}
    settings = Settings.from_env({**env, "RESERVOIR_TIMEOUT": "75", "RESERVOIR_LOCALE": "fr"})
    target = ServiceTarget("https://svc.example.test/v2", "reservoir-test", "s" * 8, "TST")
    config = target.client_config(settings)  # what `reservoir doctor` and the preflight use
    assert (config.timeout, config.auth_style, config.locale) == (75.0, "snake", "fr")
    service = build_resources(settings, target)["service"]
    assert (service.timeout, service.auth_style, service.locale) == (75.0, "snake", "fr")


def test_the_code_locations_resources_take_the_environment_when_a_run_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.definitions import defs  # imported without the settings: read at run start
    from pipelines.resources import ReservationServiceResource

    for name, value in {
        **SERVICE,
        "RESERVOIR_DATA_DIR": str(tmp_path),
        "RESERVOIR_MAX_CONCURRENCY": "4",
        "RESERVOIR_MAX_REQUESTS": "300",
        "RESERVOIR_TIMEOUT": "90",
        "RESERVOIR_AUTH_STYLE": "snake",
        "RESERVOIR_LOCALE": "nl_NL",
        "RESERVOIR_MAX_REMOVED_SHARE": "0.9",
        "RESERVOIR_MAX_RESPONSE_MB": "2",
    }.items():
        monkeypatch.setenv(name, value)
    wired = {"service": defs.resources["service"], "lake": defs.resources["lake"]}
    with dg.build_resources(wired) as resources:  # as Dagster initialises a run's resources
        config = resources.service.service_config()
        assert config.base_url == SERVICE["RESERVOIR_BASE_URL"]
        assert (config.max_concurrency, config.max_requests, config.timeout) == (4, 300, 90.0)
        assert (config.auth_style, config.locale) == ("snake", "nl_NL")
        assert config.max_response_bytes == 2 * 1024 * 1024
        assert resources.lake.max_removed_share == 0.9
    # what the wiring (the CLI, a tenant) sets explicitly wins over the environment
    bound = ReservationServiceResource(
        base_url=dg.EnvVar("RESERVOIR_BASE_URL"),
        client_id=dg.EnvVar("RESERVOIR_CLIENT_ID"),
        client_secret=dg.EnvVar("RESERVOIR_CLIENT_SECRET"),
        scope=dg.EnvVar("RESERVOIR_SCOPE"),
        max_concurrency=2,
    )
    with dg.build_resources({"service": bound}) as resources:
        assert resources.service.service_config().max_concurrency == 2
    monkeypatch.setenv("RESERVOIR_AUTH_STYLE", "kebab")
    with pytest.raises(dg.DagsterResourceFunctionError) as info, dg.build_resources(wired):
        pass
    assert isinstance(info.value.__cause__, SettingsError)  # Dagster shows it with the run
    assert "RESERVOIR_AUTH_STYLE must be 'camel'" in str(info.value.__cause__)

"""Settings read from the environment at call time (never at import time).

The Dagster definitions read the same variables through `dg.EnvVar`; this module serves the
command line, which must explain a missing or wrong setting in one line before anything starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

Number = TypeVar("Number", int, float)

DEFAULT_DATA_DIR = "./data"
DEFAULT_MAX_CONCURRENCY = 15

ENV_VARS: dict[str, str] = {
    "RESERVOIR_BASE_URL": "base URL of the reservation service; unset = the embedded sandbox",
    "RESERVOIR_CLIENT_ID": "API client id (client credentials)",
    "RESERVOIR_CLIENT_SECRET": "API client secret",
    "RESERVOIR_SCOPE": "3-letter concern code of the environment",
    "RESERVOIR_DATA_DIR": "where lake/ and warehouse.duckdb live (default ./data)",
    "RESERVOIR_MAX_CONCURRENCY": "requests in flight for the whole run (default 15)",
    "RESERVOIR_WEBHOOK_SECRET": "secret of the webhook receiver (whsec_...)",
    "RESERVOIR_SOURCE": "name under which the lake records its source (default: URL and scope)",
    "RESERVOIR_MAX_REQUESTS": "requests one run may send, 0 = no limit (default 20000)",
    "RESERVOIR_MAX_RESPONSE_MB": "largest response body read, in MiB (default 64)",
    "RESERVOIR_MAX_REMOVED_SHARE": "largest share of a table one full read may remove (0.5)",
    "RESERVOIR_QUARANTINE_MAX_SHARE": "share of a table's records it may quarantine (default 0.05)",
    "RESERVOIR_QUARANTINE_FLOOR": "records any table may quarantine, whatever its size (default 5)",
    "RESERVOIR_DAGSTER_PG_URL": "PostgreSQL URL of the Dagster instance; unset = files in the data dir",
    "RESERVOIR_LAKE_URL": "s3://bucket/prefix of the lake (Delta tables); unset = the data dir",
    "RESERVOIR_TENANTS_FILE": "TOML file listing the concerns (tenants); unset = one tenant",
    "RESERVOIR_TIMEOUT": "seconds the service may stay silent within one response (default 30)",
    "RESERVOIR_PAGE_SIZE": "records asked for per page of a list (default 1000)",
    "RESERVOIR_DETAILS_PAGE_SIZE": "reservations per page of their details (default 100)",
    "RESERVOIR_AUTH_STYLE": "spelling of the token request's fields: camel or snake (camel)",
    "RESERVOIR_LOCALE": "the `locale` header sent with every request, e.g. en; unset = none",
}
DAGSTER_PG_ENV = "RESERVOIR_DAGSTER_PG_URL"
DEFAULT_MAX_REQUESTS = 20_000  # below the service's 25,000 free requests a day
DEFAULT_MAX_RESPONSE_MB = 64.0
DEFAULT_MAX_REMOVED_SHARE = 0.5  # assets.settings.DEFAULT_REMOVAL_GUARD


PG_SCHEMES = ("postgresql://", "postgresql+psycopg2://")


def redact_url(url: str) -> str:
    """A URL as it may be shown: its password replaced by `***`."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def shown_value(name: str, value: str) -> str:
    """A setting's value as `reservoir settings` prints it: never a secret or a password."""
    if "SECRET" in name:
        return "(set)" if value else "(unset)"
    if name == DAGSTER_PG_ENV and value:
        return redact_url(value)
    return value or "(unset)"


ENV_FILE = ".env"  # read by the CLI from the working directory; the environment wins


def load_env_file(path: Path | None = None) -> dict[str, str]:
    """Put the RESERVOIR_* settings of a `.env` file into the environment, where unset.

    Called when a command starts (never at import). Returns the settings taken from the file,
    so `reservoir settings` can say where each value came from.
    """
    from dotenv import dotenv_values

    path = path or Path.cwd() / ENV_FILE
    if not path.is_file():
        return {}
    taken: dict[str, str] = {}
    for name, value in dotenv_values(path).items():
        if name.startswith("RESERVOIR_") and value is not None and name not in os.environ:
            os.environ[name] = value
            taken[name] = value
    return taken


class SettingsError(Exception):
    """A setting is missing or invalid; the message says which one and what to do."""


def quarantine_limits(env: Mapping[str, str] | None = None) -> tuple[float | None, int | None]:
    """RESERVOIR_QUARANTINE_MAX_SHARE and RESERVOIR_QUARANTINE_FLOOR (None when unset), read
    when called (a run reads them when it starts); `assets.quarantine` says how they combine."""
    env = os.environ if env is None else env
    share_text = env.get("RESERVOIR_QUARANTINE_MAX_SHARE", "").strip()
    floor_text = env.get("RESERVOIR_QUARANTINE_FLOOR", "").strip()
    share = floor = None
    if share_text:
        try:
            share = float(share_text)
        except ValueError:
            share = -1.0
        if not 0 <= share <= 1:
            raise SettingsError(
                f"RESERVOIR_QUARANTINE_MAX_SHARE must be a share between 0 and 1 (0.05 = 5 %), "
                f"got {share_text!r}; unset it to use the default of 0.05."
            )
    if floor_text:
        if not floor_text.isdigit():
            raise SettingsError(
                f"RESERVOIR_QUARANTINE_FLOOR must be a whole number of records (0 or more), got "
                f"{floor_text!r}; unset it to use the default of 5."
            )
        floor = int(floor_text)
    return share, floor


AUTH_STYLES = ("camel", "snake")
# A language, optionally with a country or variant (en, nl_NL, pt-BR): a header value, so no
# spaces or line breaks can ride along in it.
_LOCALE = re.compile(r"[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})?")


def client_tuning(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The service client's limits and tuning that the environment sets (only those set), as
    `ReservationServiceResource` fields. Read when a command or a run starts: the CLI passes
    them on, and the code location's resources (which wire only the URL, the credentials and
    the scope) take them when a run starts. A wrong value names its variable and the default."""
    get = _reader(env)
    tuning: dict[str, Any] = {}
    raw_conc = get("RESERVOIR_MAX_CONCURRENCY")
    if raw_conc is not None:
        try:
            max_conc = int(raw_conc)
        except ValueError:
            raise SettingsError(
                f"RESERVOIR_MAX_CONCURRENCY must be a whole number, got {raw_conc!r}; "
                "unset it to use the default of 15."
            ) from None
        if not 1 <= max_conc <= 15:
            raise SettingsError(
                f"RESERVOIR_MAX_CONCURRENCY must be between 1 and 15 (the service caps concurrent "
                f"calls per address at 15), got {max_conc}."
            )
        tuning["max_concurrency"] = max_conc
    numbers: dict[str, tuple[str, Callable[[str], Any], float, float]] = {
        "RESERVOIR_MAX_REQUESTS": ("max_requests", int, DEFAULT_MAX_REQUESTS, 0),
        "RESERVOIR_MAX_RESPONSE_MB": ("max_response_mb", float, DEFAULT_MAX_RESPONSE_MB, 0.0625),
        "RESERVOIR_PAGE_SIZE": ("page_size", int, 1000, 1),
        "RESERVOIR_DETAILS_PAGE_SIZE": ("details_page_size", int, 100, 1),
        "RESERVOIR_TIMEOUT": ("timeout", float, 30.0, 1.0),
    }
    for name, (key, kind, default, least) in numbers.items():
        if get(name) is not None:
            tuning[key] = _number(get, name, kind, default, least)
    if (style := get("RESERVOIR_AUTH_STYLE")) is not None:
        if style not in AUTH_STYLES:
            raise SettingsError(
                f"RESERVOIR_AUTH_STYLE must be 'camel' (grantType, clientId, clientSecret) or "
                f"'snake' (grant_type, client_id, client_secret), got {style!r}; unset it to use "
                "camel, the interface's spelling."
            )
        tuning["auth_style"] = style
    if (locale := get("RESERVOIR_LOCALE")) is not None:
        if not _LOCALE.fullmatch(locale):
            raise SettingsError(
                f"RESERVOIR_LOCALE must be a language code, optionally with a country (en, "
                f"nl_NL, pt-BR), got {locale!r}; unset it to send no locale."
            )
        tuning["locale"] = locale
    return tuning


def removed_share(env: Mapping[str, str] | None = None) -> float | None:
    """RESERVOIR_MAX_REMOVED_SHARE (None when unset), read when a command or a run starts."""
    get = _reader(env)
    if get("RESERVOIR_MAX_REMOVED_SHARE") is None:
        return None
    share = _number(get, "RESERVOIR_MAX_REMOVED_SHARE", float, DEFAULT_MAX_REMOVED_SHARE, 0.0)
    if share > 1:
        raise SettingsError(
            f"RESERVOIR_MAX_REMOVED_SHARE is a share between 0 and 1, got {share}; 1 lands "
            "any removal."
        )
    return share


def lake_url_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """RESERVOIR_LAKE_URL (None when unset), read when a run opens its lake: the code location
    of `make dev` and of a deployment takes it from the environment, as the CLI does."""
    env = os.environ if env is None else env
    return env.get("RESERVOIR_LAKE_URL", "").strip() or None


@dataclass(frozen=True)
class Settings:
    """The product's settings, resolved once per command."""

    data_dir: Path
    base_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scope: str | None = None
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    max_requests: int = DEFAULT_MAX_REQUESTS
    max_response_mb: float = DEFAULT_MAX_RESPONSE_MB
    max_removed_share: float = DEFAULT_MAX_REMOVED_SHARE
    # The client's other tuning the environment sets (`client_tuning`: timeout, page sizes,
    # auth style, locale), as `ReservationServiceResource` fields; empty = the client's defaults.
    client_options: Mapping[str, Any] = field(default_factory=dict)
    webhook_secret: str | None = field(default=None, repr=False)
    # The Dagster instance's storage on PostgreSQL (runs, event log, schedules); None = SQLite
    # files under `dagster_home`. Holds a password: never printed.
    dagster_pg_url: str | None = field(default=None, repr=False)
    # The lake on object storage (s3://bucket/prefix, Delta Lake tables; endpoint and
    # credentials from the AWS_* variables); None = the data directory's lake folder alone.
    lake_url: str | None = None
    # One concern of a tenants file (RESERVOIR_TENANTS_FILE; `pipelines.tenants`): its name, and
    # the Dagster home the tenants share (the data directory is the tenant's own). None = the
    # single tenant of a data directory, with its Dagster home inside it.
    tenant: str | None = None
    shared_dagster_home: Path | None = None

    @property
    def uses_sandbox(self) -> bool:
        return not self.base_url

    @property
    def lake_dir(self) -> Path:
        return self.data_dir / "lake"

    @property
    def warehouse_path(self) -> Path:
        return self.data_dir / "warehouse.duckdb"

    @property
    def dagster_home(self) -> Path:
        return self.shared_dagster_home or self.data_dir / "dagster_home"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        get = _reader(env)
        tuning = client_tuning(env)
        removed = removed_share(env)
        quarantine_limits(env)  # explained here, before anything starts
        settings = cls(
            data_dir=Path(get("RESERVOIR_DATA_DIR") or DEFAULT_DATA_DIR).expanduser(),
            base_url=get("RESERVOIR_BASE_URL"),
            client_id=get("RESERVOIR_CLIENT_ID"),
            client_secret=get("RESERVOIR_CLIENT_SECRET"),
            scope=get("RESERVOIR_SCOPE"),
            max_concurrency=tuning.pop("max_concurrency", DEFAULT_MAX_CONCURRENCY),
            max_requests=tuning.pop("max_requests", DEFAULT_MAX_REQUESTS),
            max_response_mb=tuning.pop("max_response_mb", DEFAULT_MAX_RESPONSE_MB),
            max_removed_share=DEFAULT_MAX_REMOVED_SHARE if removed is None else removed,
            client_options=tuning,
            webhook_secret=get("RESERVOIR_WEBHOOK_SECRET"),
            dagster_pg_url=get(DAGSTER_PG_ENV),
            lake_url=lake_url_from_env(env),
        )
        settings.validate()
        return settings

    def validate(self) -> None:
        """Check what can be checked without a network call."""
        if self.base_url:
            missing = [
                name
                for name, value in (
                    ("RESERVOIR_CLIENT_ID", self.client_id),
                    ("RESERVOIR_CLIENT_SECRET", self.client_secret),
                    ("RESERVOIR_SCOPE", self.scope),
                )
                if not value
            ]
            if missing:
                raise SettingsError(
                    f"RESERVOIR_BASE_URL is set but {', '.join(missing)} "
                    f"{'is' if len(missing) == 1 else 'are'} not: set "
                    f"{'it' if len(missing) == 1 else 'them'} (see .env.example), or unset "
                    "RESERVOIR_BASE_URL to use the embedded sandbox."
                )
        if self.dagster_pg_url and not self.dagster_pg_url.startswith(PG_SCHEMES):
            raise SettingsError(
                f"{DAGSTER_PG_ENV} must be a PostgreSQL URL "
                "(postgresql://user:password@host:5432/dbname), got one starting "
                f"{self.dagster_pg_url.split(':', 1)[0]!r}; unset it to keep the Dagster instance "
                "in files under the data directory."
            )
        if self.lake_url:
            from lake.remote import DeltaRemote, LakeUrlError

            try:
                DeltaRemote(self.lake_url)
            except LakeUrlError as exc:
                raise SettingsError(str(exc)) from None
        self.ensure_data_dir()

    def ensure_data_dir(self) -> None:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            probe = self.data_dir / ".write-probe"
            probe.write_text("ok")
            probe.unlink()
        except OSError as exc:
            raise SettingsError(
                f"RESERVOIR_DATA_DIR {str(self.data_dir)!r} is not writable ({exc.strerror}); "
                "point it at a directory you can write to."
            ) from None


def _reader(env: Mapping[str, str] | None) -> Callable[[str], str | None]:
    """A lookup of settings in `env` (default: the process's environment); blank = unset."""
    source = os.environ if env is None else env
    return lambda name: source.get(name, "").strip() or None


def _number(
    get: Callable[[str], str | None],
    name: str,
    kind: Callable[[str], Number],
    default: Number,
    least: Number,
) -> Number:
    """A numeric setting, or a SettingsError that names it, its default and its lower bound."""
    raw = get(name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value < least:
        raise SettingsError(
            f"{name} must be a number of at least {least}, got {raw!r}; unset it to use the "
            f"default of {default}."
        )
    return value

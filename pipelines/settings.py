"""Settings read from the environment at call time (never at import time).

The Dagster definitions read the same variables through `dg.EnvVar`; this module serves the
command line, which must explain a missing or wrong setting in one line before anything starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

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

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        raw_conc = get("RESERVOIR_MAX_CONCURRENCY")
        try:
            max_conc = int(raw_conc) if raw_conc else DEFAULT_MAX_CONCURRENCY
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
        max_requests = _number(get, "RESERVOIR_MAX_REQUESTS", int, DEFAULT_MAX_REQUESTS, 0)
        max_mb = _number(get, "RESERVOIR_MAX_RESPONSE_MB", float, DEFAULT_MAX_RESPONSE_MB, 0.0625)
        removed = _number(get, "RESERVOIR_MAX_REMOVED_SHARE", float, DEFAULT_MAX_REMOVED_SHARE, 0.0)
        if removed > 1:
            raise SettingsError(
                f"RESERVOIR_MAX_REMOVED_SHARE is a share between 0 and 1, got {removed}; 1 lands "
                "any removal."
            )
        quarantine_limits(env)  # explained here, before anything starts
        settings = cls(
            data_dir=Path(get("RESERVOIR_DATA_DIR") or DEFAULT_DATA_DIR).expanduser(),
            base_url=get("RESERVOIR_BASE_URL"),
            client_id=get("RESERVOIR_CLIENT_ID"),
            client_secret=get("RESERVOIR_CLIENT_SECRET"),
            scope=get("RESERVOIR_SCOPE"),
            max_concurrency=max_conc,
            max_requests=max_requests,
            max_response_mb=max_mb,
            max_removed_share=removed,
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

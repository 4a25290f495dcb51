"""The concerns one deployment serves (tenants): read from the TOML file RESERVOIR_TENANTS_FILE
names, checked before anything runs, each turned into the `Settings` of a single-tenant run.

A tenant is the whole existing engine pointed at its own data directory
(`<RESERVOIR_DATA_DIR>/tenant=<name>`) and, with RESERVOIR_LAKE_URL, its own lake prefix
(`<lake url>/tenant=<name>`): the `tenant=<name>` path level is how every lake row carries its
tenant (DuckDB's and pyarrow's hive partitioning read it as a `tenant` column), and a failure of
one tenant cannot touch another's files. The Dagster instance stays shared, its runs tagged
`reservoir/tenant`. No file = today's single tenant, unchanged.

The file names the *environment variable* of each secret, never the secret: it can be committed.

    [[tenant]]
    name = "north"                                  # a short identifier: a-z, 0-9, _
    base_url = "https://<host>/<path>/v2"
    client_id = "reservoir-north"
    client_secret_env = "NORTH_CLIENT_SECRET"       # the variable that holds the secret
    scope = "NTH"
    webhook_secret_env = "NORTH_WEBHOOK_SECRET"     # optional
    max_requests = 20000                            # optional: this tenant's run budget
    max_concurrency = 15                            # optional: its cap, 1-15

    [[tenant]]
    name = "demo"
    sandbox_seed = 11                               # no base_url: an embedded sandbox
    sandbox_scale = "small"
    sandbox_faults = { http_503 = 0.05 }
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lake.tenancy import DEFAULT_TENANT, TENANT_DIR_PREFIX
from pipelines.settings import Settings, SettingsError

TENANTS_ENV = "RESERVOIR_TENANTS_FILE"
TENANT_TAG = "reservoir/tenant"  # the Dagster run tag; one run per value at a time
GROUP_WAREHOUSE = "group.duckdb"
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,31}")
SANDBOX_SCALES = ("small", "medium", "large")
KNOWN_KEYS = frozenset(
    {
        "name",
        "base_url",
        "client_id",
        "client_secret_env",
        "scope",
        "webhook_secret_env",
        "max_requests",
        "max_concurrency",
        "sandbox_seed",
        "sandbox_scale",
        "sandbox_faults",
    }
)


class TenantsError(SettingsError):
    """The tenants file is missing, unreadable or wrong; the message names the file, the tenant
    and what to do (never a secret's value)."""


@dataclass(frozen=True)
class Tenant:
    """One concern of the tenants file."""

    name: str
    base_url: str | None = None
    client_id: str | None = None
    client_secret_env: str | None = None
    scope: str | None = None
    webhook_secret_env: str | None = None
    max_requests: int | None = None
    max_concurrency: int | None = None
    sandbox_seed: int = 7
    sandbox_scale: str = "small"
    sandbox_faults: dict[str, float] = field(default_factory=dict)

    @property
    def uses_sandbox(self) -> bool:
        return not self.base_url


def tenants_file(env: Mapping[str, str] | None = None) -> Path | None:
    """RESERVOIR_TENANTS_FILE, or None (the single tenant of today)."""
    env = os.environ if env is None else env
    value = env.get(TENANTS_ENV, "").strip()
    return Path(value).expanduser() if value else None


def load_tenants(path: Path, env: Mapping[str, str] | None = None) -> list[Tenant]:
    """Every tenant of the file, checked: names, keys, types and that each secret's variable is
    set in `env` (the environment by default)."""
    env = os.environ if env is None else env
    where = f"tenants file {str(path)!r} ({TENANTS_ENV})"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TenantsError(
            f"{where} does not exist: create it (see .env.example) or unset {TENANTS_ENV} to "
            "run the single tenant of the data directory."
        ) from None
    except OSError as exc:
        raise TenantsError(f"{where} cannot be read ({exc.strerror}).") from None
    except tomllib.TOMLDecodeError as exc:
        raise TenantsError(f"{where} is not valid TOML: {exc}.") from None
    entries = data.get("tenant")
    unknown_top = set(data) - {"tenant"}
    if unknown_top or not isinstance(entries, list) or not entries:
        raise TenantsError(
            f"{where} must list its concerns as [[tenant]] tables (name, base_url, client_id, "
            "client_secret_env, scope); found "
            + (", ".join(sorted(unknown_top)) if unknown_top else "no [[tenant]] table")
            + "."
        )
    tenants: list[Tenant] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        tenant = _tenant(entry, f"{where}, tenant #{number}", env)
        if tenant.name in seen:
            raise TenantsError(
                f"{where}: the name {tenant.name!r} is used twice; give each tenant its own name "
                "(it names its data directory and its lake prefix)."
            )
        seen.add(tenant.name)
        tenants.append(tenant)
    return tenants


def _tenant(entry: Any, where: str, env: Mapping[str, str]) -> Tenant:
    if not isinstance(entry, dict):
        raise TenantsError(f"{where} is not a table of settings.")
    name = entry.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise TenantsError(
            f"{where}: name {name!r} is not a short identifier; use 1-32 characters a-z, 0-9 "
            "and _, starting with a letter (it becomes a folder and a lake prefix)."
        )
    if name == DEFAULT_TENANT:
        raise TenantsError(
            f"{where}: the name {DEFAULT_TENANT!r} is the Dagster partition of the single tenant "
            "(no tenants file); give this tenant another name."
        )
    where = f"{where.rsplit(', tenant #', 1)[0]}, tenant {name!r}"
    unknown = sorted(set(entry) - KNOWN_KEYS)
    if unknown:
        raise TenantsError(
            f"{where}: unknown setting(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(KNOWN_KEYS))}."
        )
    text = {k: _text(entry, k, where) for k in KNOWN_KEYS if k.endswith(("url", "id", "env"))}
    scope = _text(entry, "scope", where)
    if text["base_url"]:
        missing = [k for k in ("client_id", "client_secret_env") if not text[k]] + (
            [] if scope else ["scope"]
        )
        if missing:
            raise TenantsError(
                f"{where}: base_url is set but {', '.join(missing)} is not; set "
                f"{'it' if len(missing) == 1 else 'them'}, or drop base_url to use an embedded "
                "sandbox."
            )
    for key in ("client_secret_env", "webhook_secret_env"):
        variable = text[key]
        if variable and not env.get(variable, "").strip():
            raise TenantsError(
                f"{where}: the environment variable {variable} ({key}) is not set; set it to "
                f"the tenant's {'client' if key.startswith('client') else 'webhook'} secret."
            )
    scale = entry.get("sandbox_scale", "small")
    if scale not in SANDBOX_SCALES:
        raise TenantsError(f"{where}: sandbox_scale must be small, medium or large, got {scale!r}.")
    faults = entry.get("sandbox_faults", {})
    if not isinstance(faults, dict) or not all(
        isinstance(v, int | float) and 0 <= v <= 1 for v in faults.values()
    ):
        raise TenantsError(
            f"{where}: sandbox_faults must be a table of rates between 0 and 1, e.g. "
            "{ http_503 = 0.05 }."
        )
    return Tenant(
        name=name,
        base_url=text["base_url"],
        client_id=text["client_id"],
        client_secret_env=text["client_secret_env"],
        scope=scope,
        webhook_secret_env=text["webhook_secret_env"],
        max_requests=_whole(entry, "max_requests", where, least=0),
        max_concurrency=_whole(entry, "max_concurrency", where, least=1, most=15),
        sandbox_seed=_whole(entry, "sandbox_seed", where, least=0) or 7,
        sandbox_scale=scale,
        sandbox_faults={str(k): float(v) for k, v in faults.items()},
    )


def _text(entry: dict[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise TenantsError(f"{where}: {key} must be a string, got {type(value).__name__}.")
    return value.strip() or None


def _whole(
    entry: dict[str, Any], key: str, where: str, *, least: int, most: int | None = None
) -> int | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise TenantsError(f"{where}: {key} must be a whole number of at least {least}.")
    if most is not None and value > most:
        raise TenantsError(
            f"{where}: {key} must be at most {most} (the service caps concurrent calls per "
            "address at 15)."
        )
    return value


def tenant_data_dir(data_dir: Path, name: str) -> Path:
    return data_dir / f"{TENANT_DIR_PREFIX}{name}"


def tenant_settings(
    base: Settings, tenant: Tenant, env: Mapping[str, str] | None = None
) -> Settings:
    """The settings of one tenant's run: its service, secrets, caps, data directory and lake
    prefix; the Dagster home shared under the deployment's data directory."""
    env = os.environ if env is None else env

    def secret(variable: str | None) -> str | None:
        return env.get(variable, "").strip() or None if variable else None

    lake_url = base.lake_url
    if lake_url:
        lake_url = f"{lake_url.rstrip('/')}/{TENANT_DIR_PREFIX}{tenant.name}"
    return replace(
        base,
        data_dir=tenant_data_dir(base.data_dir, tenant.name),
        base_url=tenant.base_url,
        client_id=tenant.client_id,
        client_secret=secret(tenant.client_secret_env),
        scope=tenant.scope,
        webhook_secret=secret(tenant.webhook_secret_env),
        max_requests=base.max_requests if tenant.max_requests is None else tenant.max_requests,
        max_concurrency=tenant.max_concurrency or base.max_concurrency,
        lake_url=lake_url,
        tenant=tenant.name,
        shared_dagster_home=base.dagster_home,
    )


def select_tenants(tenants: list[Tenant], names: list[str] | None) -> list[Tenant]:
    """The tenants named (all when `names` is empty); an unknown name fails with the known ones."""
    if not names:
        return tenants
    known = {t.name: t for t in tenants}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise TenantsError(
            f"no tenant named {', '.join(map(repr, unknown))} in {TENANTS_ENV}; known: "
            f"{', '.join(known)}."
        )
    return [known[n] for n in dict.fromkeys(names)]

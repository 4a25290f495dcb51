"""`reservoir dev` (`make dev`): the Dagster UI with every setting resolved.

`dagster dev` resolves `dg.EnvVar` settings in its own processes, so this command sets them for
the child: with no service configured it starts the embedded sandbox for as long as the UI runs
and hands its URL and credentials down, so runs launched from the UI work without credentials.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

from pipelines.lake_assets import SOURCE_ENV
from pipelines.runner import prepare_instance, service_target
from pipelines.settings import Settings


def dev_environment(settings: Settings, target_env: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(target_env)
    env["RESERVOIR_DATA_DIR"] = str(settings.data_dir.resolve())
    env["RESERVOIR_MAX_CONCURRENCY"] = str(settings.max_concurrency)
    env["DAGSTER_HOME"] = str(settings.dagster_home.resolve())
    return env


def run_dev(settings: Settings, *, port: int, scale: str, seed: int) -> int:
    prepare_instance(settings)
    with service_target(settings, scale=scale, seed=seed) as target:
        env = dev_environment(
            settings,
            {
                "RESERVOIR_BASE_URL": target.base_url,
                "RESERVOIR_CLIENT_ID": target.client_id,
                "RESERVOIR_CLIENT_SECRET": target.client_secret,
                "RESERVOIR_SCOPE": target.scope,
                SOURCE_ENV: target.source,
            },
        )
        if target.sandbox is not None:
            print(f"embedded sandbox serving {target.base_url} (stops with the UI)")
        dagster = Path(sys.executable).with_name("dagster")
        cmd = [str(dagster), "dev", "-w", "workspace.yaml", "-p", str(port)]
        with contextlib.suppress(KeyboardInterrupt):
            return subprocess.call(cmd, env=env)
    return 0

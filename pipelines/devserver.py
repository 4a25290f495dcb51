"""`reservoir dev` (`make dev`): the Dagster UI with every setting resolved.

`dagster dev` resolves `dg.EnvVar` settings in its own processes, so this command sets them for
the child: with no service configured it starts the embedded sandbox for as long as the UI runs
and hands its URL and credentials down, so runs launched from the UI work without credentials.
SIGTERM or Ctrl-C stops everything it started: the UI's whole process group (webserver, daemon,
code servers), then the sandbox.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

from pipelines.instance import prepare_instance
from pipelines.lake_assets import SOURCE_ENV
from pipelines.settings import Settings
from pipelines.target import service_target


def dev_environment(settings: Settings, target_env: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(target_env)
    env["RESERVOIR_DATA_DIR"] = str(settings.data_dir.resolve())
    env["RESERVOIR_MAX_CONCURRENCY"] = str(settings.max_concurrency)
    env["DAGSTER_HOME"] = str(settings.dagster_home.resolve())
    # `dagster dev` warns on every start that a newer command supersedes it; that command
    # needs a project layout of its own, so the warning says nothing the user can act on here.
    env["PYTHONWARNINGS"] = "ignore:Function `dev_command` is superseded"
    return env


STOP_SECONDS = 20.0  # the UI's processes get this long to stop before they are killed


def _stop(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is not None:
        return
    try:
        os.killpg(child.pid, signal.SIGTERM)
        child.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    except ProcessLookupError:
        pass


def run_dev(settings: Settings, *, port: int, scale: str, seed: int) -> int:
    from pipelines.partitions import ensure_partitions, tenant_names

    # The tenants (else `default`) are partitions before the UI opens, so its first
    # materialization can pick one (the tenants sensor keeps them current after that).
    ensure_partitions(prepare_instance(settings), tenant_names())
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
            admin = target.sandbox.admin_url
            print(f"embedded sandbox serving {target.base_url} (stops with the UI)")
            print(f"  move its clock: reservoir sandbox advance --url {admin} --hours 24")
        dagster = Path(sys.executable).with_name("dagster")
        cmd = [str(dagster), "dev", "-w", "workspace.yaml", "-p", str(port)]
        child = subprocess.Popen(cmd, env=env, start_new_session=True)

        def stop(signum: int, frame: FrameType | None) -> None:
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, stop)
        try:
            return child.wait()
        except KeyboardInterrupt:
            return 0
        finally:
            signal.signal(signal.SIGTERM, previous)
            _stop(child)
    return 0

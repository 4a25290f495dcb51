"""A throwaway PostgreSQL cluster from Debian's package, for the tests that need a real one.

`initdb` and `pg_ctl` (from /usr/lib/postgresql/<version>/bin, installed by
scripts/ensure-postgres.sh) make a cluster in a temporary folder, listening on a free loopback
port only; it is stopped and removed when the block ends, so nothing is left running. PostgreSQL
refuses to run as root: as root the cluster runs as the package's `postgres` user. When the
binaries or that user are missing the test is skipped with the reason and what to do.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ports import free_port

SUPERUSER = "reservoir"
DATABASE = "dagster"
HOW_TO_INSTALL = "run `bash scripts/ensure-postgres.sh` as root (or apt-get install postgresql)"


def _bin_dir() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(found[-1]).parent if found else None


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A running cluster for the block; yields the URL of its empty `dagster` database."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        pytest.skip(f"PostgreSQL server binaries are not installed: {HOW_TO_INSTALL}")
    user: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and the package's `postgres` user is missing")
        user = "postgres"
    root = Path(tempfile.mkdtemp(prefix="reservoir-pg-"))
    data, log = root / "data", root / "server.log"
    if user is not None:
        shutil.chown(root, user)

    def run(*args: str) -> None:
        subprocess.run(
            [str(bin_dir / args[0]), *args[1:]],
            check=True,
            user=user,
            capture_output=True,
            cwd=root,
            timeout=120,
        )

    port = free_port()
    started = False
    try:
        run("initdb", "-D", str(data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync")
        options = (
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c full_page_writes=off -c max_connections=50"
        )
        run("pg_ctl", "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60", "start")
        started = True
        run("createdb", "-h", "127.0.0.1", "-p", str(port), "-U", SUPERUSER, DATABASE)
        yield f"postgresql://{SUPERUSER}@127.0.0.1:{port}/{DATABASE}"
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
        server = log.read_text(errors="replace") if log.exists() else ""
        raise RuntimeError(
            f"{exc.cmd[0]} failed: {detail[-1:] or exc.returncode}; server log:\n{server[-2000:]}"
        ) from None
    finally:
        if started:
            with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
                run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)

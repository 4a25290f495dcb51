"""A run leaves SIGTERM as it found it, in a process started with SIGINT ignored.

A shell without job control starts a background command with SIGINT ignored. Dagster's run, on
its way out, gives SIGTERM whatever SIGINT's handler is (`dagster._utils.interrupts`), so such a
process came out of its first run unable to be stopped by a plain `kill` (`reservoir run` with a
tenants file runs several). `pipelines.runner.execute` keeps SIGTERM's own handler.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import signal
    import dagster as dg
    from pipelines.partitions import TENANTS
    from pipelines.runner import execute

    @dg.asset(partitions_def=TENANTS)
    def tiny() -> int:
        return 1

    defs = dg.Definitions(assets=[tiny], jobs=[dg.define_asset_job("tiny_job", selection=[tiny])])
    job = defs.resolve_job_def("tiny_job")
    with dg.DagsterInstance.ephemeral() as instance:
        for selection in (None, [dg.AssetKey("tiny")]):  # the job, then a selection
            result = execute(
                defs, job, instance=instance, resources={}, asset_selection=selection,
                run_config={}, tags={},
            )
            assert result.success
            handler = signal.getsignal(signal.SIGTERM)
            print("default" if handler is signal.SIG_DFL else repr(handler), flush=True)
    """
)


def _ignore_sigint() -> None:
    # as a shell starts a background command: SIGINT ignored, SIGTERM the default. Set both: a
    # child inherits ignored signals, and a pytest worker may have come out of a run of Dagster's
    # own `execute_job` with SIGTERM ignored (the very behaviour tested here)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def test_sigterm_still_stops_a_process_started_with_sigint_ignored(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        preexec_fn=_ignore_sigint,
        capture_output=True,
        text=True,
        timeout=300,
        env={"DAGSTER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # after each of two runs (the job, then a selection as `--select` makes it) SIGTERM is still
    # the default (ends the process), not ignored
    assert done.stdout.split() == ["default", "default"], done.stdout + done.stderr[-2000:]

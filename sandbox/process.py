"""Serve the sandbox from a child process, for `reservoir run` and the other CLI commands.

In a thread of the pipeline's process the sandbox shares its memory (a large world holds ~2 GB
and its encode cache up to 1 GiB more) and its GIL with the run, so the two cores never both
work. A child process separates both. The parent binds the loopback socket (the URL is known
before the child starts) and hands it over; the child reads its settings, secret included, from
its stdin (never from its command line, which other users can read), says "ready" on stdout
once it serves, and exits when its stdin closes: when the parent leaves the block, on an error
or Ctrl-C, and when the parent dies without cleaning up (the kernel closes the pipe). The
child runs in its own session, so Ctrl-C in the terminal reaches only the parent, which then
stops it; on Linux it also asks for SIGTERM when the parent dies (`PR_SET_PDEATHSIG`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import logging
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from sandbox.lifeline import die_with
from sandbox.settings import SandboxSettings

if TYPE_CHECKING:
    from sandbox.protocol import World

STARTUP_TIMEOUT = 900.0  # a large world takes ~20 s alone and minutes on a busy machine
SHUTDOWN_TIMEOUT = 10.0
READY = "ready"


class SandboxStartError(RuntimeError):
    """The sandbox's process did not start serving; the message carries its last words."""


@dataclass
class SandboxProcess:
    """A sandbox served by a child process: what a caller needs to talk to it over HTTP."""

    base_url: str
    admin_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str
    settings: SandboxSettings
    process: subprocess.Popen[bytes] = field(repr=False)
    _log: IO[bytes] | None = field(default=None, repr=False)
    _startup_timeout: float = field(default=STARTUP_TIMEOUT, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_ready(self) -> None:
        """Block until the child serves (at once when it already said so); raises
        `SandboxStartError` when it stops or takes too long (`run_sandbox_process(wait=False)`)."""
        if self._log is not None:
            _wait_ready(self.process, self._log, self._startup_timeout)
            self._log = None  # ready: later calls return at once

    def peak_rss_bytes(self) -> int | None:
        """The child's peak resident memory so far (Linux `VmHWM`); None when unknown."""
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return None


def _bind(host: str, port: int) -> socket.socket:
    from sandbox.runner import _bind as bind_listening

    return bind_listening(host, port)


def _wait_ready(proc: subprocess.Popen[bytes], log: IO[bytes], timeout: float) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    buffer = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SandboxStartError(f"the sandbox did not start within {timeout:.0f} s")
        readable, _, _ = select.select([fd], [], [], min(left, 1.0))
        if readable:
            chunk = os.read(fd, 4096)
            if not chunk:  # the child exited before it was ready
                proc.wait(SHUTDOWN_TIMEOUT)
                log.seek(0)
                tail = log.read().decode(errors="replace").strip().splitlines()[-5:]
                detail = "; ".join(tail) or f"exit code {proc.returncode}"
                raise SandboxStartError(f"the sandbox's process stopped while starting: {detail}")
            buffer += chunk
            if READY.encode() in buffer:
                return


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Close the child's lifeline, then escalate: it must not outlive the block."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    for step in (None, proc.terminate, proc.kill):
        if step is not None:
            with contextlib.suppress(ProcessLookupError):
                step()
        try:
            proc.wait(SHUTDOWN_TIMEOUT)
            break
        except subprocess.TimeoutExpired:
            continue
    if proc.stdout is not None:
        proc.stdout.close()


@contextlib.contextmanager
def run_sandbox_process(
    settings: SandboxSettings | None = None,
    *,
    startup_timeout: float = STARTUP_TIMEOUT,
    wait: bool = True,
) -> Iterator[SandboxProcess]:
    """Serve a generated world (`settings`) from a child process for the duration of the block.

    With `wait=False` the block starts as soon as the child does, while it generates its world:
    the caller does other work meanwhile and calls `wait_ready()` before its first request (its
    address is known already: the socket is bound here)."""
    from sandbox.server import ADMIN_PREFIX, SERVICE_PREFIX

    settings = settings or SandboxSettings()
    sock = _bind(settings.host, settings.port)
    host, port = sock.getsockname()[:2]
    # no name on disk (Linux: O_TMPFILE): nothing is left behind by a parent that ends without
    # leaving this block, e.g. `reservoir`'s exit without the interpreter's teardown
    with tempfile.TemporaryFile(prefix="reservoir-sandbox-", suffix=".log") as log:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "sandbox.process", str(sock.fileno()), str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                pass_fds=(sock.fileno(),),
                start_new_session=True,  # Ctrl-C reaches the parent, which stops the child
            )
        finally:
            sock.close()  # the child holds its own copy
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(dataclasses.asdict(settings)).encode() + b"\n")
            proc.stdin.flush()
            root = f"http://{host}:{port}"
            handle = SandboxProcess(
                base_url=root + SERVICE_PREFIX,
                admin_url=root + ADMIN_PREFIX,
                client_id=settings.client_id,
                client_secret=settings.client_secret,
                scope=settings.scope,
                settings=settings,
                process=proc,
                _log=log,
                _startup_timeout=startup_timeout,
            )
            if wait:
                handle.wait_ready()
            yield handle
        finally:
            _stop(proc)


def generated_world(settings: SandboxSettings) -> World:
    """The child's world, generated without the cyclic garbage collector, then frozen.

    Generation builds millions of objects that live as long as the process. With the collector
    on, each full collection walks all that exist so far (at large, 12 of them, 5.7 s of wall
    together on a loaded host, up to 1.5 s each, docs/benchmarks.md "Session 22"); without it
    the peak memory is the same. Then `gc.freeze()` moves what exists to the permanent
    generation, which the serving's collections skip (and a forked encode worker's too)."""
    from sandbox.runner import default_world, profiled

    gc.disable()
    try:
        world = profiled(default_world(settings), settings)
        gc.freeze()
    finally:
        gc.enable()
    return world


def _serve_child(fd: int, parent: int) -> None:
    """The child: settings from stdin, serve on the inherited socket until stdin closes."""
    die_with(parent)
    import uvicorn

    from sandbox.heap import keep_freed_memory
    from sandbox.runner import _config
    from sandbox.server import create_app

    stdin = sys.stdin.buffer
    settings = SandboxSettings(**json.loads(stdin.readline()))
    server: uvicorn.Server | None = None

    def watch_parent() -> None:
        # until EOF (the parent closed the pipe or died); raw reads hold no lock of sys.stdin,
        # which a forked encode worker closes as it starts (multiprocessing does)
        while os.read(stdin.fileno(), 4096):
            pass
        if server is None:
            os._exit(0)
        server.should_exit = True
        time.sleep(SHUTDOWN_TIMEOUT)
        os._exit(0)

    threading.Thread(target=watch_parent, name="sandbox-lifeline", daemon=True).start()
    world = generated_world(settings)
    app = create_app(world, settings)
    if settings.warm_cache:
        app.state.service.warm_cache()
    keep_freed_memory()  # pages' buffers are reused, not faulted in again (sandbox/heap.py)
    app.state.service.start_encode_pool(settings.encode_workers)  # forks: before the server
    server = uvicorn.Server(_config(app, settings, "warning"))
    original_startup = server.startup

    async def startup(sockets: list[socket.socket] | None = None) -> None:
        await original_startup(sockets=sockets)
        sys.stdout.write(READY + "\n")
        sys.stdout.flush()

    server.startup = startup  # type: ignore[method-assign]
    sock = socket.socket(fileno=fd)
    try:
        server.run(sockets=[sock])
    finally:
        app.state.service.close()
    # Returning would free the world object by object (a large one: seconds of CPU at the end
    # of every run, which the parent waits for); the server has stopped and nothing is left
    # to write but the log.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    _serve_child(int(sys.argv[1]), int(sys.argv[2]))

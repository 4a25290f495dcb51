"""A local S3-compatible server (moto in server mode, `moto[server]`) on a free loopback port,
for the tests of the lake on object storage. Stopped when the block ends."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.ports import free_port

ACCESS_KEY = "reservoir-test"
SECRET_KEY = "reservoir-test-secret"
REGION = "us-east-1"


@contextlib.contextmanager
def s3_server() -> Iterator[str]:
    """Yields the endpoint URL (http://127.0.0.1:<port>)."""
    pytest.importorskip("moto.server", reason="moto[server] is a dev dependency: make setup")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):  # bounded: at most about a minute on a loaded machine
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            if proc.poll() is not None:
                raise RuntimeError(f"moto's S3 server exited with {proc.returncode}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def make_bucket(endpoint: str, bucket: str) -> None:
    import boto3

    boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name=REGION,
    ).create_bucket(Bucket=bucket)

"""The receiver over real HTTP (uvicorn on loopback): durability, concurrency, streaming limits."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pipelines.webhook_inbox import WebhookInbox
from pipelines.webhook_server import RunningReceiver, run_webhook_receiver
from pipelines.webhooks import WEBHOOK_PATH
from tests.ports import free_port

from .conftest import OTHER_SECRET, SECRET, encode, payload, signed_headers


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[RunningReceiver]:
    with run_webhook_receiver(secret=SECRET, data_dir=tmp_path) as running:
        yield running


def test_push_over_http(receiver: RunningReceiver) -> None:
    body = encode(payload(101))
    with httpx.Client(timeout=10) as client:
        response = client.post(receiver.url, content=body, headers=signed_headers(body))
        assert response.status_code == 202
        forged = client.post(
            receiver.url, content=body, headers=signed_headers(body, secret=OTHER_SECRET)
        )
        assert forged.status_code == 401
        health = client.get(receiver.base_url + "/health")
    assert health.json()["inbox"] == {"total": 1, "pending": 1, "processed": 0}
    assert receiver.inbox.reservation_ids_pending() == [101]


def test_nothing_accepted_is_lost_across_a_restart(tmp_path: Path) -> None:
    accepted: list[str] = []
    with run_webhook_receiver(secret=SECRET, data_dir=tmp_path) as first:
        with httpx.Client(timeout=10) as client:
            for rid in (1, 2, 3):
                body = encode(payload(rid))
                headers = signed_headers(body)
                assert client.post(first.url, content=body, headers=headers).status_code == 202
                accepted.append(headers["webhook-id"])
        replay_body, replay_headers = body, headers

    # A fresh process's view: a new inbox object on the same directory.
    assert [n.webhook_id for n in WebhookInbox(tmp_path).pending()] == accepted

    with run_webhook_receiver(secret=SECRET, data_dir=tmp_path) as second:
        assert second.inbox.reservation_ids_pending() == [1, 2, 3]
        with httpx.Client(timeout=10) as client:
            # The replay set survived the restart as well.
            again = client.post(second.url, content=replay_body, headers=replay_headers)
            assert again.status_code == 200
            assert again.json()["status"] == "duplicate"
        assert second.inbox.counts()["total"] == 3


def test_concurrent_pushes_are_all_stored(receiver: RunningReceiver) -> None:
    bodies = [encode(payload(1000 + i)) for i in range(20)]
    requests = [(body, signed_headers(body)) for body in bodies]

    def push(item: tuple[bytes, dict[str, str]]) -> int:
        body, headers = item
        with httpx.Client(timeout=30) as client:
            return client.post(receiver.url, content=body, headers=headers).status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(push, requests))
    assert statuses == [202] * 20
    assert receiver.inbox.counts() == {"total": 20, "pending": 20, "processed": 0}
    assert receiver.inbox.reservation_ids_pending() == list(range(1000, 1020))


def test_concurrent_deliveries_of_one_id_store_it_once(receiver: RunningReceiver) -> None:
    body = encode(payload(55))
    headers = signed_headers(body)

    def push(_: int) -> str:
        with httpx.Client(timeout=30) as client:
            return client.post(receiver.url, content=body, headers=headers).json()["status"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=10) as pool:
        outcomes = sorted(pool.map(push, range(10)))
    assert outcomes == ["accepted"] + ["duplicate"] * 9
    assert receiver.inbox.counts()["total"] == 1


def test_oversized_chunked_body_is_refused_without_content_length(tmp_path: Path) -> None:
    with run_webhook_receiver(secret=SECRET, data_dir=tmp_path, max_body_bytes=2048) as running:
        body = encode(payload(1, filler="y" * 4000))
        headers = signed_headers(body)

        def chunks() -> Iterator[bytes]:
            for i in range(0, len(body), 512):
                yield body[i : i + 512]

        with httpx.Client(timeout=10) as client:
            response = client.post(running.url, content=chunks(), headers=headers)
        assert response.status_code == 413
        assert response.json()["code"] == "PAYLOAD_TOO_LARGE"
        assert running.inbox.counts()["total"] == 0


def test_oversized_body_with_default_limit(receiver: RunningReceiver) -> None:
    body = encode(payload(1, filler="z" * (256 * 1024)))
    with httpx.Client(timeout=10) as client:
        response = client.post(receiver.url, content=body, headers=signed_headers(body))
    assert response.status_code == 413


def test_acknowledged_pushes_survive_a_killed_receiver_process(tmp_path: Path) -> None:
    """SIGKILL right after the 2xx: the commit happened before the answer, so nothing is lost."""
    port = free_port()
    script = (
        "import os, sys\n"
        "from pipelines.webhook_server import serve_webhooks\n"
        "serve_webhooks('127.0.0.1', int(sys.argv[1]), os.environ['TEST_WEBHOOK_SECRET'],"
        " sys.argv[2], log_level='warning')\n"
    )
    env = {**os.environ, "TEST_WEBHOOK_SECRET": SECRET}
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(port), str(tmp_path)],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    accepted: list[str] = []
    try:
        with httpx.Client(timeout=10) as client:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if client.get(base + "/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "receiver did not start"
                time.sleep(0.05)
            for rid in (7, 8, 9):
                body = encode(payload(rid))
                headers = signed_headers(body)
                response = client.post(base + WEBHOOK_PATH, content=body, headers=headers)
                assert response.status_code == 202
                accepted.append(headers["webhook-id"])
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        if process.stderr:
            process.stderr.close()
    assert [n.webhook_id for n in WebhookInbox(tmp_path).pending()] == accepted


def test_oversized_headers_are_refused_by_the_server(receiver: RunningReceiver) -> None:
    """Headers beyond the server's limit are refused before the app sees them (no memory grows
    with them), and the receiver keeps serving."""
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(receiver.base_url)
    body = encode(payload(103))
    headers = "".join(f"{k}: {v}\r\n" for k, v in signed_headers(body).items())
    request = (
        (
            f"POST /webhooks/reservations HTTP/1.1\r\nHost: x\r\n{headers}"
            f"Content-Length: {len(body)}\r\nX-Big: "
        ).encode()
        + b"a" * (1024 * 1024)
        + b"\r\n\r\n"
        + body
    )
    with socket.create_connection((where.hostname, where.port), timeout=10) as sock:
        answer = b""
        try:
            sock.sendall(request)
            while chunk := sock.recv(4096):
                answer += chunk
        except (ConnectionResetError, BrokenPipeError):
            pass
    # A valid push but for its headers' size: without the limit it would be accepted (202).
    assert not answer.startswith(b"HTTP/1.1 202")
    assert receiver.inbox.reservation_ids_pending() == []
    body = encode(payload(102))
    with httpx.Client(timeout=10) as client:
        ok = client.post(receiver.url, content=body, headers=signed_headers(body))
    assert ok.status_code == 202


@pytest.mark.parametrize("stage", ["headers", "body"])
def test_slow_connections_are_closed_at_the_request_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    """400 connections dripping their headers (or their body) a few bytes at a time are closed
    once the request deadline passes, and a valid push is accepted afterwards."""
    from pipelines import webhook_server

    monkeypatch.setattr(webhook_server, "REQUEST_SECONDS", 1.0)
    head = b"POST " + WEBHOOK_PATH.encode() + b" HTTP/1.1\r\nHost: x\r\n"
    if stage == "body":
        head += b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
    with run_webhook_receiver(secret=SECRET, data_dir=tmp_path) as running:
        port = int(running.base_url.rsplit(":", 1)[1])
        slow = []
        for _ in range(400):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(head)
            slow.append(sock)
        closed = 0
        deadline = time.monotonic() + 6
        pending = list(slow)
        while pending and time.monotonic() < deadline:
            still = []
            for sock in pending:
                try:
                    sock.sendall(b"X-Drip: 1\r\n" if stage == "headers" else b" ")
                    sock.settimeout(0.01)
                    if sock.recv(1024) == b"":
                        closed += 1
                        continue
                except TimeoutError:
                    pass
                except OSError:  # reset or broken pipe: the server closed it
                    closed += 1
                    continue
                still.append(sock)
            pending = still
            time.sleep(0.2)
        for sock in slow:
            sock.close()
        assert closed == 400, f"{400 - closed} slow connections still open after 6 s"
        body = encode(payload(7))
        with httpx.Client(timeout=10) as client:
            assert (
                client.post(running.url, content=body, headers=signed_headers(body)).status_code
                == 202
            )

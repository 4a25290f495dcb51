"""A stub service over real loopback HTTP whose authenticate gives one scripted answer.

For commands that build their own client from RESERVOIR_* settings (`reservoir run`,
`reservoir doctor`), where a mock transport cannot be handed in. Data paths answer 404.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BASE_PATH = "/service/v2"
STUB_SECRET = "stub-secret-NEVER-SHOWN-4711"


@dataclass
class StubService:
    """Answers every POST .../authenticate with `status` and `body` (JSON text)."""

    status: int = 500
    body: str = '{"status": 500, "message": "Error occurred while processing"}'
    base_url: str = ""
    paths: list[str] = field(default_factory=list)

    def env(self, data_dir: str, **extra: str) -> dict[str, str]:
        """RESERVOIR_* settings pointing at this stub."""
        return {
            "RESERVOIR_BASE_URL": self.base_url,
            "RESERVOIR_CLIENT_ID": "stub-client",
            "RESERVOIR_CLIENT_SECRET": STUB_SECRET,
            "RESERVOIR_SCOPE": "STB",
            "RESERVOIR_DATA_DIR": data_dir,
            **extra,
        }

    @property
    def authentications(self) -> int:
        return sum(1 for p in self.paths if p.endswith("/authenticate"))


@contextmanager
def stub_service(status: int = 500, body: str | None = None) -> Iterator[StubService]:
    stub = StubService(status=status) if body is None else StubService(status=status, body=body)

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            stub.paths.append(self.path)
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            found = self.path.split("?", 1)[0].endswith("/authenticate")
            payload = (stub.body if found else '{"message": "not found"}').encode()
            self.send_response(stub.status if found else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stub.base_url = f"http://127.0.0.1:{server.server_address[1]}{BASE_PATH}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()

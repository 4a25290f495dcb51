"""A loopback port nobody listens on, for tests that start a server in another process (or point
a setting at a closed port). The socket is closed again before the port is returned: the other
process binds it itself, so a rare race with another program taking it in between is possible."""

from __future__ import annotations

import socket


def free_port() -> int:
    """An unused TCP port on 127.0.0.1, closed again when returned."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

"""Loopback ports for tests and benchmarks: a free one, and whether a server still listens."""

from __future__ import annotations

import asyncio
import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def refuses_connections(port: int) -> bool:
    """Whether a connection to 127.0.0.1:``port`` is refused (nothing listens there any more)."""
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return True
    writer.close()
    return False

"""Loopback ports for tests and benchmarks: a free one, and whether a server still listens."""

from __future__ import annotations

import asyncio
import socket

#: the ports :func:`free_port` has handed out in this process
_GIVEN: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now and that this process has not
    handed out before.  A port is often picked well before its server starts (a deployment's
    ports are known before any of it runs); the kernel, which knows nothing of that, may give the
    same port to the next caller, and a listener that took it first left the later server unable
    to bind while a PING there was answered by the wrong process (a fault proxy: CI's failover run
    met a sentinel that never ran).  The fault proxies take their ports here too; a listener that
    binds port 0 itself can still take one, so a server that must own its port checks who answers."""
    for _ in range(1000):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port
    raise RuntimeError("no loopback port left that this process has not handed out")


async def refuses_connections(port: int) -> bool:
    """Whether a connection to 127.0.0.1:``port`` is refused (nothing listens there any more)."""
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return True
    writer.close()
    return False

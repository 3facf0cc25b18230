"""Fixtures of the fault kit: an AOF redis-server per test and a proxy in front of it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.faults.proxy import Proxy
from tests.faults.redis_server import RedisServer, redis_server

__all__ = ["proxy", "redis_server"]


@pytest.fixture
async def proxy(redis_server: RedisServer) -> AsyncIterator[Proxy]:
    """A fault proxy in front of this test's redis-server."""
    p = await Proxy(redis_server).start()
    try:
        yield p
    finally:
        await p.close()

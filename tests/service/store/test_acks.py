"""service/store/acks.py: the acknowledgements asked for in one turn of the event loop go to Redis as one
XACK per stream; every caller returns once its entry is acknowledged, or learns of the Redis error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from service.store.acks import Acks
from service.store.groups import Group
from tools.loopback import free_port


async def _read(redis: Any, streams: list[str], n: int) -> list[tuple[str, str, Any]]:
    g = Group(redis, "g", "c")
    await g.create(streams)
    for s in streams:
        for i in range(n):
            await redis.xadd(s, {"m": str(i)})
    return await g.read(streams, 100)


async def _pending(redis: Any, stream: str) -> int:
    p = await redis.xpending(stream, "g")
    return p["pending"] if isinstance(p, dict) else p[0]


async def test_acks_asked_for_together_go_as_one_xack_per_stream(any_redis):
    got = await _read(any_redis, ["a", "b"], 3)
    acks = Acks(any_redis, "g")
    # Six lanes acknowledging at once (as a move's messages, delivered together, are).
    await asyncio.gather(*(acks.ack(stream, entry) for stream, entry, _ in got))
    assert acks.sent == 2
    assert await _pending(any_redis, "a") == 0 and await _pending(any_redis, "b") == 0


async def test_acks_asked_for_one_after_the_other_are_each_sent(any_redis):
    got = await _read(any_redis, ["a"], 2)
    acks = Acks(any_redis, "g")
    await acks.ack("a", got[0][1])
    assert await _pending(any_redis, "a") == 1  # the first is acknowledged when ack() returns
    await acks.ack("a", got[1][1])
    assert acks.sent == 2 and await _pending(any_redis, "a") == 0


async def test_a_redis_error_reaches_every_caller_of_the_batch():
    nowhere = aioredis.from_url(f"redis://127.0.0.1:{free_port()}")
    acks = Acks(nowhere, "g")
    results = await asyncio.gather(acks.ack("a", "1-0"), acks.ack("b", "1-1"), return_exceptions=True)
    assert all(isinstance(r, RedisConnectionError) for r in results), results
    assert acks.sent == 0
    with pytest.raises(RedisConnectionError):  # and the next batch tries again
        await acks.ack("a", "1-0")
    await nowhere.aclose()

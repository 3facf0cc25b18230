"""The stream one reader of all handles at a time (service/store/leased_stream.py): the ratings
projector's queue and the tournaments' command stream both run on it."""

from __future__ import annotations

import asyncio
from typing import Any

from service.store.leased_stream import Entry, LeasedStream
from tests.polling import eventually

STREAM, GROUP, LEASE = "q:{one}", "readers", "q:{one}:lease"


class Reader:
    """A reader that records what it handled and the Redis errors it was told of."""

    def __init__(self, redis: Any, name: str, **kw: Any) -> None:
        self.handled: list[str] = []
        self.errors: list[BaseException] = []
        self.stream = LeasedStream(redis, STREAM, GROUP, LEASE, name, self.errors.append, count=10, **kw)

    async def handle(self, entries: list[Entry]) -> int:
        for mid, fields in entries:
            self.handled.append((fields.get(b"n") or fields.get("n")).decode())
            await self.stream.ack(mid)
        return len(entries)


async def test_only_the_lease_holder_reads_and_each_entry_is_handled_once_in_order(any_redis):
    a, b = Reader(any_redis, "a"), Reader(any_redis, "b")
    await a.stream.setup()
    for i in range(25):
        await any_redis.xadd(STREAM, {"n": str(i)})
    stop = asyncio.Event()
    tasks = [asyncio.create_task(r.stream.run(r.handle, stop, block_ms=20)) for r in (a, b)]
    try:
        await eventually(lambda: len(a.handled) + len(b.handled) == 25)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    [holder] = [r for r in (a, b) if r.handled]  # the other one never held the lease
    assert holder.handled == [str(i) for i in range(25)]
    assert await any_redis.xlen(STREAM) == 0  # acknowledged and deleted


async def test_what_a_dead_reader_read_and_never_acknowledged_is_taken_over(any_redis):
    dead = Reader(any_redis, "dead")
    await dead.stream.setup()
    for i in range(3):
        await any_redis.xadd(STREAM, {"n": str(i)})
    assert len(await dead.stream.read(">", None)) == 3  # read, then it dies without acknowledging
    heir = Reader(any_redis, "heir", claim_idle_ms=0)
    assert await heir.stream.drain(heir.handle) == 0  # drain handles only its own entries...
    stop = asyncio.Event()
    task = asyncio.create_task(heir.stream.run(heir.handle, stop, block_ms=20))
    try:
        await eventually(lambda: heir.handled == ["0", "1", "2"])  # ...run claims the dead one's
    finally:
        stop.set()
        await task
    assert (await any_redis.xpending(STREAM, GROUP))["pending"] == 0


async def test_a_redis_error_is_told_and_the_reader_goes_on(any_redis):
    r = Reader(any_redis, "r")
    stop = asyncio.Event()
    task = asyncio.create_task(r.stream.run(r.handle, stop, block_ms=20))
    try:
        await any_redis.xadd(STREAM, {"n": "before"})
        await eventually(lambda: r.handled == ["before"])
        await any_redis.xgroup_destroy(STREAM, GROUP)  # its reads now fail (NOGROUP)
        await eventually(lambda: r.errors)
        assert "NOGROUP" in str(r.errors[0])
        await any_redis.xgroup_create(STREAM, GROUP, id="$", mkstream=True)
        await any_redis.xadd(STREAM, {"n": "after"})
        await eventually(lambda: r.handled == ["before", "after"])
    finally:
        stop.set()
        await task

"""service/store/groups.py: the consumer-group layer the worker and the deliveries share — re-reading a
consumer's own pending entries (a read whose reply was lost), claiming, dead letters, and retention
(an entry leaves a stream only once every group on it has acknowledged it)."""

from __future__ import annotations

from typing import Any

from service.store.groups import Group, Pause


async def _fill(redis: Any, n: int, stream: str = "s") -> list[str]:
    return [(await redis.xadd(stream, {"m": str(i)})).decode() for i in range(n)]


async def test_a_stream_without_a_group_is_never_trimmed(any_redis):
    await _fill(any_redis, 10)
    assert await Group(any_redis, "g", "c").trim(["s"]) == 0
    assert await any_redis.xlen("s") == 10


async def test_retention_removes_what_every_group_acknowledged_and_nothing_else(any_redis):
    ids = await _fill(any_redis, 30)
    a, b = Group(any_redis, "a", "c1"), Group(any_redis, "b", "c2")
    await a.create(["s"])
    await b.create(["s"])
    got = await a.read(["s"], 20)
    await any_redis.xack("s", "a", *[m for _, m, _ in got[:12]])
    # Group b has read nothing: nothing may go.
    assert await a.trim(["s"]) == 0 and await any_redis.xlen("s") == 30
    got_b = await b.read(["s"], 30)
    await any_redis.xack("s", "b", *[m for _, m, _ in got_b])
    # Now a's oldest pending entry (the 13th) is the floor: the 12 before it go, nothing after.
    assert await b.trim(["s"]) == 12
    assert [e[0].decode() for e in await any_redis.xrange("s")] == ids[12:]
    # Group a acknowledges the rest of what it read, and has 10 it never read: those stay.
    await any_redis.xack("s", "a", *[m for _, m, _ in got[12:]])
    assert await a.trim(["s"]) == 8
    assert [e[0].decode() for e in await any_redis.xrange("s")] == ids[20:]


async def test_a_grace_period_keeps_young_entries_even_when_acknowledged(any_redis):
    ids = await _fill(any_redis, 5)
    g = Group(any_redis, "g", "c")
    await g.create(["s"])
    got = await g.read(["s"], 5)
    await any_redis.xack("s", "g", *[m for _, m, _ in got])
    first_ms = int(ids[0].split("-")[0])
    assert await g.trim(["s"], keep_ms=60_000, now_ms=first_ms + 1000) == 0
    assert await g.trim(["s"], keep_ms=1, now_ms=first_ms + 10**7) == 5


async def test_own_pending_finds_what_a_lost_read_delivered(any_redis):
    await _fill(any_redis, 7)
    g = Group(any_redis, "g", "me")
    await g.create(["s"])
    # A read executed by Redis for this consumer whose reply never arrived (redis-py resent it).
    await any_redis.xreadgroup("g", "me", {"s": ">"}, count=5)
    await any_redis.xreadgroup("g", "someone-else", {"s": ">"}, count=2)
    mine = await g.own_pending(["s"], count=2)  # several pages
    assert [f[b"m"] for _, _, f in mine] == [b"0", b"1", b"2", b"3", b"4"]


async def test_reading_own_pending_again_is_not_a_delivery(any_redis):
    # A store outage re-reads a worker's pending commands at every retry: were each re-read counted,
    # an acknowledged command would soon look like one that kills workers and go to the dead letters.
    await _fill(any_redis, 3)
    g = Group(any_redis, "g", "me")
    await g.create(["s"])
    got = await g.read(["s"], 3)
    for _ in range(10):
        assert [m for _, m, _ in await g.own_pending(["s"], count=2)] == [m for _, m, _ in got]
    assert [await g.times_delivered("s", m) for _, m, _ in got] == [1, 1, 1]


async def test_own_pending_acknowledges_entries_deleted_meanwhile(any_redis):
    ids = await _fill(any_redis, 3)
    g = Group(any_redis, "g", "me")
    await g.create(["s"])
    await g.read(["s"], 3)
    await any_redis.xdel("s", ids[1])
    assert [f[b"m"] for _, _, f in await g.own_pending(["s"], count=10)] == [b"0", b"2"]
    assert await g.pending(["s"]) == 2


async def test_claim_and_dead_letter(any_redis):
    await _fill(any_redis, 3)
    g = Group(any_redis, "g", "heir")
    await g.create(["s"])
    await any_redis.xreadgroup("g", "dead", {"s": ">"}, count=3)
    got = await g.claim("s", 0, count=2, limit=100)
    assert len(got) == 3 and await g.times_delivered("s", got[0][1]) == 2
    pipe = any_redis.pipeline(transaction=False)
    g.queue_dead_letter(pipe, "dead", "s", got[0][1], {"m": "0", "error": "boom"})
    await pipe.execute()
    assert await g.pending(["s"]) == 2
    assert (await any_redis.xrange("dead"))[0][1][b"error"] == b"boom"


def test_pause_doubles_to_its_cap_and_resets():
    p = Pause(0.05, 0.3)
    assert [p.failed() for _ in range(5)] == [0.05, 0.1, 0.2, 0.3, 0.3]
    p.ok()
    assert p.failed() == 0.05


def test_a_process_notices_redis_is_back_within_half_a_second():
    # issue 12: the longest wait after an error is how late held commands resume after a restart
    p = Pause()
    assert max(p.failed() for _ in range(20)) <= 0.5

"""The watch's bounds (issue 32, 4 and 8): a page that reads slower than its table writes is ended
once ``queue_max`` messages wait for it (its queue never grows past
that), and a reconnect from far back (``Last-Event-ID: 0-0``) reads the outbox a counted page at a
time, ``catch_up_max`` entries at most."""

from __future__ import annotations

import asyncio

import fakeredis
import orjson
import pytest

from service.domain.identities import Player, Room
from service.domain.messages import Message, Recipient
from service.ops.runtime import build
from service.platform.watch import Lagging
from tests.adapters.web.support import settings
from tests.polling import eventually

TABLE = "tblbounds1"
ANA = Player(platform="acme", user="ana")


class CountingRedis(fakeredis.FakeAsyncRedis):
    """fakeredis that records the ``COUNT`` of every ``XRANGE`` (None: no count)."""

    counts: list[int | None]

    async def xrange(self, name, min="-", max="+", count=None):  # type: ignore[no-untyped-def]
        self.counts.append(count)
        return await super().xrange(name, min=min, max=max, count=count)


def _room_message(i: int) -> bytes:
    m = Message(id=f"m{i}", table=TABLE, version=i, locale="en", kind="table",
                to=Recipient(room=Room(platform="acme", chat="g", kind="group")))
    return orjson.dumps(m.model_dump(mode="json"))


async def test_a_page_that_falls_behind_is_ended_and_its_queue_is_bounded():
    redis = fakeredis.FakeAsyncRedis()
    w = build(settings(), redis=redis).watch(block_ms=20, queue_max=32)
    stream = w.keys.outbox_for(TABLE)
    feed = w.follow(TABLE, ANA, "0-0")
    got = asyncio.create_task(feed.__anext__())  # the page reads one message, then nothing more
    await eventually(lambda: w.subs.get(TABLE), 10, "the subscription")
    for i in range(100):
        await redis.xadd(stream, {"m": _room_message(i)})
    sub = next(iter(w.subs[TABLE]))
    await eventually(lambda: sub.behind, 10, "the page marked behind")
    assert sub.queue.qsize() <= 32 + 1
    await asyncio.wait_for(got, 10)
    with pytest.raises(Lagging):  # what was queued, then the end
        for _ in range(40):
            await asyncio.wait_for(feed.__anext__(), 10)
    assert TABLE not in w.subs  # its subscription given back
    await w.close()


async def test_a_reconnect_from_the_start_reads_with_a_count_and_a_bound():
    redis = CountingRedis()
    redis.counts = []
    w = build(settings(), redis=redis).watch(block_ms=20, catch_up_page=16, catch_up_max=40)
    stream = w.keys.outbox_for(TABLE)
    for i in range(100):
        await redis.xadd(stream, {"m": _room_message(i)})
    feed = w.follow(TABLE, None, "0-0")
    seen = [await asyncio.wait_for(feed.__anext__(), 10) for _ in range(40)]
    assert [m.id for _, m in seen] == [f"m{i}" for i in range(40)]
    assert redis.counts and all(c == 16 for c in redis.counts), redis.counts
    assert len(redis.counts) == 3  # 16 + 16 + 16 >= 40: no further read
    await feed.aclose()
    await w.close()

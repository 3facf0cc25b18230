"""Retention through the whole pipeline: after matches are played and everything is delivered, the
command streams and the outbox hold nothing; the tables' events are untouched (issue 13)."""

from __future__ import annotations

import asyncio
import time

from service.platform.delivery import Delivery, DeliveryOptions
from service.store.repository import load
from tests.service.support import ANA, BEA, Harness, Player, private


async def _lengths(h: Harness) -> tuple[int, int]:
    commands = sum([await h.redis.xlen(k) for k in h.keys.all_commands()])
    outbox = sum([await h.redis.xlen(h.keys.outbox(b)) for b in range(h.keys.buckets)])
    return commands, outbox


async def test_played_and_delivered_matches_leave_no_commands_and_no_outbox(any_redis):
    h = Harness(any_redis, workers=1)
    people = [ANA, BEA, Player(platform="tg", user="u3", name="Cris")]
    for p in people:  # three private matches against AI players, each played to its end
        await h.send(p, "/play cinquillo 3", room=private(p))
        await h.send(p, "/leave", room=private(p))
    tables = [await h.table_of(private(p)) for p in people]
    assert [(await load(h.worker.store, t)).status for t in tables] == ["finished"] * 3
    events_before = [len(await h.events(t)) for t in tables]
    commands, outbox = await _lengths(h)
    assert commands > 0 and outbox > 0  # everything is still there: nothing was acknowledged by all

    got: list[str] = []

    async def handler(m) -> None:
        got.append(m.id)

    d = Delivery(any_redis, h.settings, "tg", "d1",
                 options=DeliveryOptions(partitions=2, lease_ms=5000, block_ms=20, trim_s=0.05), keys=h.keys)
    # (a lease long enough that a loaded machine never loses it: a lost lease may redeliver, which
    # is at-least-once, not what this test counts)
    w = h.worker
    w.trim_s = 0.05
    stop = asyncio.Event()
    tasks = [asyncio.create_task(d.run(handler, stop)), asyncio.create_task(w.run())]
    deadline = time.monotonic() + 30
    while await _lengths(h) != (0, 0) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    stop.set()
    w.stop.set()
    await asyncio.gather(*tasks)
    assert await _lengths(h) == (0, 0)
    assert len(got) == len(set(got)) == outbox  # every message delivered once before it went
    assert [len(await h.events(t)) for t in tables] == events_before  # the truth is untouched

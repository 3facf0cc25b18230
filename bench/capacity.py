"""Redis memory per table, measured as an operator would, and the worker's RSS under a steady load.

usage: bench/capacity.py [--tables 100] [--live 100] [--soak 30] [--rate 4] [--buckets 1024] [--port P]

Starts its own ``redis-server`` on a free loopback port (no persistence), so that ``used_memory`` is
the service's alone, then:

1. **Finished tables**: ``--tables`` four-seat Cinquillo matches (a person opens ``/play cinquillo 4``
   and leaves; three AI players play it to the end), through the gateway and a worker in this process,
   every person's command with an adapter command id as a chat adapter sends it.  Prints
   ``used_memory`` growth per table, and ``MEMORY USAGE`` per table split by what holds it: the table's
   own keys (events, snapshot, done set), the outbox, the command streams, ``seen:``/``in:``, the rest.
2. **After trim**: ``cinq trim --days 0`` (``service.ops.trim.trim``): growth per table left, then the
   same once the shared streams are emptied as their own retention would (outbox and command streams
   trimmed, 24-hour ``seen:`` keys expired, the ratings projector's queue rated), which is what trim
   owes, split into what belongs to people (stats, prefs, ratings: kept), what is still per table
   (the ratings' set of tables rated) and what is in no key (Redis's own tables); goal: 1 KB beside
   what belongs to people.  ``used_memory`` is read with this process's connections closed and
   Redis's latency tracking off (see :func:`bench.redis_memory.start_redis`): both grew it by amounts
   that had nothing to do with the tables.
3. **Live tables**: ``--live`` matches of a person and three AI players, mid-match (the person has
   played 4 moves): ``used_memory`` and own keys per table.
4. **Worker RSS soak**: a ``cinq worker`` process on that Redis while this process starts ``--rate``
   AI-only matches a second for ``--soak`` seconds; prints the worker's RSS every few seconds and its
   growth per table served after the first third (warm-up).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis

import engine
from bench.redis_memory import by_group, kb, residue, start_redis, used
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.tables.state import FINISHED
from service.foundation import logs
from service.foundation.settings import Settings
from service.ops import trim
from service.ops.runtime import build
from service.ratings.projector import Projector
from service.store.repository import load
from tools.loopback import free_port

# every role on Redis refuses to start without a strong daily secret (CINQ_DAILY_SECRET)
DAILY_SECRET = "bench-daily-secret-not-for-production-0123"
# and a token secret of 32 bytes at least (the soak's worker refused the 31 of the one before)
TOKEN_SECRET = "bench-token-secret-not-for-production-01"



class Service:
    """A gateway and a worker in this process, over one Redis."""

    def __init__(self, r: Any, settings: Settings) -> None:
        self.r = r
        rt = build(settings, r, name="bench", timers=False)
        self.gw, self.worker = rt.gateway, rt.worker
        self.n = 0

    async def say(self, who: Player, text: str, room: Room) -> None:
        self.n += 1
        await self.gw.submit(Input(who, room, command_id=f"bench-{self.n}"), text)

    async def settle(self) -> None:
        while await self.worker.drain():
            pass


async def finished_tables(svc: Service, n: int, tag: str) -> list[str]:
    """``n`` finished four-seat matches (three AI players); their ids."""
    ids = []
    for i in range(n):
        who = Player(platform="bench", user=f"{tag}{i}", name=f"P{i}")
        room = Room(platform="bench", chat=f"{tag}{i}", kind="private")  # /play is for a private chat
        await svc.say(who, "/play cinquillo 4", room)
        await svc.settle()
        await svc.say(who, "/leave", room)
        await svc.settle()
        table = await svc.gw.table_of(room)
        assert table is not None
        ids.append(table)
    return ids


async def live_tables(svc: Service, n: int, moves: int = 4) -> list[str]:
    """``n`` matches of a person and three AI players, left at the person's turn after ``moves`` moves."""
    ids = []
    for i in range(n):
        who = Player(platform="bench", user=f"live{i}", name=f"L{i}")
        room = Room(platform="bench", chat=f"live{i}", kind="private")
        await svc.say(who, "/play cinquillo 4", room)
        await svc.settle()
        table = await svc.gw.table_of(room)
        assert table is not None
        for _ in range(moves):
            t = await load(svc.worker.store, table)
            if t is None or t.engine is None or engine.to_move(t.engine) is None:
                break
            await svc.say(who, f"/move {engine.legal_moves(t.engine)[0]}", room)
            await svc.settle()
        ids.append(table)
    return ids


async def empty_shared(r: Any, settings: Settings) -> None:
    """What the outbox/command-stream retention and the 24-hour TTLs would do, done at once."""
    from service.store.keys import Keys

    keys = Keys(settings.buckets, settings.command_shards, settings.key_prefix)
    pipe = r.pipeline(transaction=False)
    for b in range(keys.buckets):
        pipe.xtrim(keys.outbox(b), maxlen=0)
    for k in keys.all_commands():
        pipe.xtrim(k, maxlen=0)
    await pipe.execute()
    doomed = [k async for k in r.scan_iter(match="seen:*", count=1000)]
    for i in range(0, len(doomed), 1000):
        await r.delete(*doomed[i:i + 1000])


async def deliver_and_retain(r: Any, settings: Settings, svc: Service) -> None:
    """What a running deployment does next: the platform's delivery delivers every message and the
    retention trims what was delivered and what the workers acknowledged (service/store/groups.py)."""
    from service.platform.delivery import Delivery, DeliveryOptions

    async def handler(_: Any) -> None:
        return None

    d = Delivery(r, settings, "bench", "bench-d", options=DeliveryOptions(trim_s=0.05, block_ms=20),
                 keys=svc.gw.keys)
    stop = asyncio.Event()
    task = asyncio.create_task(d.run(handler, stop))
    keys = svc.gw.keys
    outboxes = [keys.outbox(b) for b in range(keys.buckets)]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        await svc.worker.intake.group.trim(keys.all_commands())
        pipe = r.pipeline(transaction=False)
        for k in outboxes:
            pipe.xlen(k)
        if sum(await pipe.execute()) == 0:
            break
        await asyncio.sleep(0.2)
    stop.set()
    await task
    # The ratings projector rates each finished match once and deletes its queue entry.
    await Projector(r, keys).drain()


async def memory(url: str, settings: Settings, n: int, live: int) -> None:
    r = aioredis.from_url(url)
    svc = Service(r, settings)
    # Warm-up (not counted): scripts loaded, groups and every bucket's outbox stream created, as on
    # a deployment that has been running.
    await svc.worker.setup()
    await finished_tables(svc, 2, "warm")
    for b in range(settings.buckets):
        await r.xadd(svc.gw.keys.outbox(b), {"m": "{}"})
    with tempfile.TemporaryDirectory() as d:
        # The platform's delivery group on every outbox stream is part of a running deployment too.
        await deliver_and_retain(r, settings, svc)
        await trim.trim(r, svc.gw.keys, 0, os.path.join(d, "warm.jsonl"), now=time.time() + 1)
        await empty_shared(r, settings)
        m0, g0 = await used(r), await by_group(r)

        t0 = time.perf_counter()
        ids = await finished_tables(svc, n, "f")
        took = time.perf_counter() - t0
        events = [await r.xlen(svc.gw.keys.events(t)) for t in ids]
        assert all([(await load(svc.worker.store, t)).status == FINISHED for t in ids])  # type: ignore[union-attr]
        m1, g1 = await used(r), await by_group(r)
        print(f"1. {n} finished tables (4 seats, {sum(events) / n:.0f} events each, {took:.1f} s)")
        print(f"   used_memory growth per table   {kb((m1 - m0) / n)}   (issue: 192 KB; goal <= 25 KB)")
        for g in g1:
            print(f"     {g:<28} {kb((g1[g] - g0.get(g, 0)) / n)}")
        await deliver_and_retain(r, settings, svc)
        m1b, g1b = await used(r), await by_group(r)
        print("   ... delivered, outbox and command-stream retention done (a running deployment)")
        print(f"   used_memory growth per table   {kb((m1b - m0) / n)}   (goal <= 25 KB)")
        for g in g1b:
            print(f"     {g:<28} {kb((g1b[g] - g0.get(g, 0)) / n)}")
        path = os.path.join(d, "archive.jsonl")
        trimmed = await trim.trim(r, svc.gw.keys, 0, path, now=time.time() + 1)
        m2, g2 = await used(r), await by_group(r)
        print(f"2. cinq trim --days 0: {len(trimmed)} tables archived "
              f"({os.path.getsize(path) / len(trimmed) / 1024:.1f} KB a table in the file)")
        print(f"   used_memory left per table     {kb((m2 - m0) / n)}   (issue: 175 KB, trim freed 9%)")
        for g in g2:
            print(f"     {g:<28} {kb((g2[g] - g0.get(g, 0)) / n)}")
        await empty_shared(r, settings)
        m3, g3 = await used(r), await by_group(r)
        print(f"   ... shared streams emptied     {kb((m3 - m0) / n)}   (what trim owes), made of:")
        residue(g0, g3, m0, m3, n)

    m4, g4 = await used(r), await by_group(r)
    ids = await live_tables(svc, live)
    versions = [await r.xlen(svc.gw.keys.events(t)) for t in ids]
    m5, g5 = await used(r), await by_group(r)
    print(f"3. {live} live tables mid-match (4 seats, {sum(versions) / max(live, 1):.0f} events each)")
    print(f"   used_memory growth per table   {kb((m5 - m4) / max(live, 1))}")
    for g in g5:
        print(f"     {g:<28} {kb((g5[g] - g4.get(g, 0)) / max(live, 1))}")
    await r.aclose()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def soak(url: str, settings: Settings, seconds: float, rate: float) -> None:
    env = {**os.environ, "CINQ_DAILY_SECRET": DAILY_SECRET,
           "REDIS_URL": url, "CINQ_BUCKETS": str(settings.buckets),
           "CINQ_KEY_PREFIX": "soak:", "CINQ_HTTP_PORT": str(free_port()), "CINQ_LOG_LEVEL": "WARNING",
           "CINQ_TOKEN_SECRETS": f'["{TOKEN_SECRET}"]', "CINQ_RETAIN_FINISHED_DAYS": "0"}
    cinq = Path(sys.executable).with_name("cinq")
    proc = subprocess.Popen([str(cinq), "worker"], env=env, stdout=subprocess.DEVNULL)
    r = aioredis.from_url(url)
    soaked = Settings(redis_url=url, buckets=settings.buckets, key_prefix="soak:")
    gw = build(soaked, r).gateway
    samples: list[tuple[float, int, int]] = []
    started = 0
    try:
        await asyncio.sleep(2.0)  # the worker starts and takes its leases
        t0 = time.monotonic()
        next_sample = t0
        while (now := time.monotonic()) - t0 < seconds:
            while started < (now - t0) * rate:
                who = Player(platform="soak", user=f"s{started}", name="S")
                room = Room(platform="soak", chat=f"s{started}", kind="private")
                await gw.submit(Input(who, room), "/play cinquillo 4")
                await gw.submit(Input(who, room), "/leave")
                started += 1
            if now >= next_sample:
                samples.append((now - t0, started, rss_kb(proc.pid)))
                next_sample += max(seconds / 10, 1.0)
            await asyncio.sleep(0.05)
        samples.append((time.monotonic() - t0, started, rss_kb(proc.pid)))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        await r.aclose()
    print(f"4. worker RSS, {rate:g} AI-only matches a second for {seconds:g} s ({started} tables)")
    for at, n, rss in samples:
        print(f"   {at:6.1f} s  {n:6d} tables  RSS {rss / 1024:7.1f} MB")
    warm = [s for s in samples if s[0] >= seconds / 3]
    if len(warm) >= 2 and warm[-1][1] > warm[0][1]:
        slope = (warm[-1][2] - warm[0][2]) / (warm[-1][1] - warm[0][1])
        print(f"   growth after warm-up: {slope:.2f} KB per table served (issue: ~27 KB; goal: flat)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--live", type=int, default=100)
    p.add_argument("--soak", type=float, default=30.0, help="seconds of the RSS soak (0: none)")
    p.add_argument("--rate", type=float, default=4.0, help="matches started a second in the soak")
    p.add_argument("--buckets", type=int, default=1024)
    p.add_argument("--port", type=int, default=None, help="the redis-server's port (default: a free one)")
    a = p.parse_args()
    logs.configure("WARNING")
    settings = Settings(redis_url=None, buckets=a.buckets, turn_seconds=60,
                        token_secrets=[TOKEN_SECRET])
    proc, url = start_redis(a.port)
    try:
        time.sleep(0.5)
        print(f"bench/capacity.py on redis-server {url} (Redis 7, jemalloc; MEMORY USAGE SAMPLES 0)")
        asyncio.run(memory(url, settings, a.tables, a.live))
        if a.soak > 0:
            asyncio.run(soak(url, settings, a.soak, a.rate))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()

"""The deal of the day at scale: a day of 10,000 attempts on one Redis (issue 37).

usage: bench/daily.py [--attempts 10000] [--writers 8] [--played 12] [--redis-url URL]

Starts its own ``redis-server`` on a free loopback port (no persistence) unless ``--redis-url`` names
one (whose database it flushes: never the shared one), then:

1. **Played attempts**: ``--played`` attempts per game through the gateway and a worker in this
   process (``/daily``; the person plays the first legal move; three AI players of the ``daily``
   level think in place).  Prints the Redis memory each finished attempt holds until retention
   archives it (its table's own keys: events, snapshot, done set), and the daily level's CPU per
   decision beside the hard player's with its 100 ms budget on the same positions (the reference).
2. **The day's board**: ``--attempts`` results recorded as the worker records them
   (:func:`service.daily.store.record`: one pipeline of three writes per attempt), ``--writers`` at a
   time, each timed: p50/p99 beside a bare one-``ZADD`` round trip timed the same way in the same run
   (the ratio is the figure).  Then ``MEMORY USAGE`` of the day's board and attempts and of the
   people's histories, per attempt, and ``used_memory`` growth per attempt.
3. **Reads at that size**: a person's standing (rank, percentile: three counts) and the day's top 10,
   p50/p99, beside a bare ``ZSCORE``.
4. **Expiry**: retention's :func:`service.daily.retention.archive_days` on that day once it is old
   enough: seconds, keys left, lines archived.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis

import engine
import engine.ai
from service.daily.retention import archive_days
from service.daily.store import Attempt, DailyStore, record
from service.domain import daily
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.tokens import issue
from service.foundation.settings import Settings
from service.ops.runtime import worker_for
from service.store.keys import Keys
from service.store.repository import load
from service.write import bots
from service.write.gateway import Gateway
from tools.loopback import free_port

PREFIX = "bench:dly:"
DAILY_SECRET = "bench-daily-secret-not-for-production-0123"


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A throw-away redis-server on a free port."""
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("bench/daily.py needs redis-server (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, f"redis://127.0.0.1:{port}/0"


def pct(xs: list[float], q: float) -> float:
    """The q-quantile of ``xs`` (nearest rank), in milliseconds from seconds."""
    s = sorted(xs)
    return 1000 * s[min(len(s) - 1, int(q * len(s)))]


def row(label: str, xs: list[float], ref: list[float] | None = None) -> str:
    out = f"  {label:<44} p50 {pct(xs, .5):7.3f} ms  p99 {pct(xs, .99):7.3f} ms"
    if ref:
        out += f"   (x{pct(xs, .99) / pct(ref, .99):.2f} the reference's p99)"
    return out


async def used(r: Any) -> int:
    await asyncio.sleep(0.2)
    info = await r.info("memory")
    clients, scripts = int(info.get("mem_clients_normal", 0)), int(info.get("used_memory_scripts", 0))
    return int(info["used_memory"]) - clients - scripts


async def memory_of(r: Any, pattern: str) -> int:
    total = 0
    async for k in r.scan_iter(match=pattern, count=1000):
        total += int(await r.memory_usage(k, samples=0) or 0)
    return total


class Timed:
    """bots.choose_move, timing each daily decision and the hard player's on the same position."""

    def __init__(self) -> None:
        self.daily: dict[str, list[float]] = {"cinquillo": [], "535": []}
        self.hard: dict[str, list[float]] = {"cinquillo": [], "535": []}

    def __call__(self, view: dict[str, Any], level: str, seed: int) -> str:
        if level != bots.DAILY or len(view.get("legal_moves") or []) < 2:
            return bots.choose_move(view, level, seed)
        t0 = time.process_time()
        move = bots.choose_move(view, level, seed)
        self.daily[view["game"]].append(time.process_time() - t0)
        t0 = time.process_time()
        bots.choose_move(view, "hard", seed)
        self.hard[view["game"]].append(time.process_time() - t0)
        return move


async def played(r: Any, n: int) -> None:
    settings = Settings(redis_url=None, key_prefix=PREFIX, buckets=64, command_shards=2, turn_seconds=0,
                        token_secrets=["bench-token-secret-not-for-production"], daily_secret=DAILY_SECRET)
    now = [time.time()]
    gateway = Gateway(r, settings, Keys.of(settings), clock=lambda: now[0])
    timed = Timed()
    worker = worker_for(r, settings, name="bench", clock=lambda: now[0], choose_move=timed, timers=False)
    keys = Keys.of(settings)
    print(f"1. played attempts: {n} per game (the person plays the first legal move)")
    for game in daily.GAMES:
        tables = []
        for i in range(n):
            p = Player(platform="bench", user=f"p{game}{i}", name=f"P{i}")
            room = Room(platform="bench", chat=f"dm{i}", kind="private")
            await gateway.submit(Input(p, room, command_id=f"b:{game}:{i}"), f"/daily {game}")
            table = daily.table_id(gateway.secrets[0], p, game, daily.day_of(now[0]))
            tables.append(table)
            while True:
                while await worker.drain():
                    pass
                t = await load(worker.store, table)
                if t is None or t.status != "running":
                    break
                move = engine.view(t.engine, 0)["legal_moves"][0]  # the person's turn: the AI's are done
                token = issue(gateway.secrets[0], table=table, seat=0, version=t.version, move=move)
                await gateway.submit(Input(p, room), token=token)
        own = 0
        for table in tables:
            for k in (keys.events(table), keys.snap(table), keys.done(table)):
                own += int(await r.memory_usage(k, samples=0) or 0)
        print(f"  {game:<9} a finished attempt's table (events, snapshot, done set) until retention: "
              f"{own / n / 1024:.1f} KB")
        print(row(f"{game}: daily AI decision, CPU (iteration cap)", timed.daily[game], timed.hard[game]))
        print(row(f"{game}: reference, hard with its 100 ms budget", timed.hard[game]))


async def board(r: Any, n: int, writers: int) -> None:
    keys = Keys(64, 2, PREFIX)
    day = daily.day_of(time.time())
    game = "cinquillo"
    rng = random.Random(37)
    people = [Player(platform="tg", user=str(100_000_000 + i), name=f"Person {i}") for i in range(n)]
    before = await used(r)
    lat: list[float] = []
    ref: list[float] = []
    sem = asyncio.Semaphore(writers)

    async def one(i: int) -> None:
        p = people[i]
        turns = rng.randint(6, 12)
        marks = "".join(rng.choice((daily.PLAYED, daily.PLAYED, daily.PASSED)) for _ in range(turns))
        att = Attempt(daily.Score(game, rng.randint(1, 4), rng.randint(0, 9)), marks,
                      f"t{i:09d}"[:10], p.name, time.time())
        async with sem:
            pipe = r.pipeline(transaction=False)
            record(pipe, keys, game, day, p, att)
            t0 = time.perf_counter()
            await pipe.execute()
            lat.append(time.perf_counter() - t0)
            # the reference: one bare ZADD round trip, timed the same way, beside it
            t0 = time.perf_counter()
            await r.zadd(f"{PREFIX}ref:board", {p.user: float(i % 500)})
            ref.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    took = time.perf_counter() - t0
    await r.delete(f"{PREFIX}ref:board")
    grown = await used(r) - before
    date = daily.day_name(day)
    day_keys = int(await r.memory_usage(keys.daily_board(game, date), samples=0) or 0) + \
        int(await r.memory_usage(keys.daily_attempts(game, date), samples=0) or 0)
    hist = await memory_of(r, f"{PREFIX}dly:{{tg:*}}:hist")
    print(f"2. the day's board: {n} attempts recorded, {writers} writers at a time, in {took:.1f} s "
          f"({n / took:.0f}/s)")
    print(row("board update (ZADD + 2 HSET, one pipeline)", lat, ref))
    print(row("reference: a bare ZADD round trip", ref))
    print(f"  memory per attempt: day's board + attempts {day_keys / n:.0f} B, the person's history "
          f"{hist / n:.0f} B (a new person: a key of their own), used_memory growth {grown / n:.0f} B")
    store = DailyStore(r, keys)
    reads: list[float] = []
    tops: list[float] = []
    bare: list[float] = []
    for i in range(0, n, max(1, n // 500)):
        att = await store.mine(people[i], game, day)
        assert att is not None
        t0 = time.perf_counter()
        await store.standing(game, day, att.score)
        reads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await store.top(game, day, 10)
        tops.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await r.zscore(keys.daily_board(game, date), people[i].user)
        bare.append(time.perf_counter() - t0)
    st = await store.standing(game, day, daily.Score(game, 2, 3))
    print(f"3. reads with {n} attempts on the board (a place 2, 3 cards left: rank {st.rank} of {st.of}, "
          f"better than {st.percentile}%)")
    print(row("a person's standing (3 counts, one pipeline)", reads, bare))
    print(row("the day's top 10 (ZRANGE + HMGET)", tops, bare))
    print(row("reference: a bare ZSCORE round trip", bare))
    with tempfile.TemporaryDirectory() as d:
        later = daily.day_end(day) + daily.GRACE_S + 30 * 86400 + 1
        t0 = time.perf_counter()
        archived = await archive_days(r, keys, d, 30, later)
        took = time.perf_counter() - t0
        lines = sum(len(p.read_text().splitlines()) for p in Path(d).glob("*.jsonl"))
        size = sum(p.stat().st_size for p in Path(d).glob("*.jsonl"))
    left = await r.exists(keys.daily_board(game, date), keys.daily_attempts(game, date))
    print(f"4. expiry: the day archived {took:.2f} s after retention found it 30 days after its reveal: "
          f"{archived}, {lines} line(s), {size / 1024:.0f} KB on disk, {left} of its keys left in Redis "
          f"(each person's history stays: their streaks)")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=10_000)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--played", type=int, default=12)
    ap.add_argument("--redis-url")
    args = ap.parse_args()
    proc = None
    url = args.redis_url
    if url is None:
        proc, url = start_redis()
    r = aioredis.from_url(url)
    for _ in range(100):
        try:
            await r.ping()
            break
        except Exception:
            await asyncio.sleep(0.05)
    try:
        await r.flushdb()
        info = await r.info("server")
        print(f"bench/daily.py on redis-server {info['redis_version']} {url}, engine "
              f"{'compiled' if engine.COMPILED else 'pure'}, load {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")
        if args.played:
            await played(r, args.played)
            await r.flushdb()
        await board(r, args.attempts, args.writers)
    finally:
        await r.aclose()
        if proc is not None:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    asyncio.run(main())

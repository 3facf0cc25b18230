"""The ratings' costs (issue 15): rebuilding from N finished matches, and the update on the hot path.

usage: bench/ratings.py [--matches 10000] [--people 2000] [--moves 60] [--ports 18700-18799] [REDIS_URL]

Without ``REDIS_URL`` it starts its own ``redis-server`` on a free loopback port in ``--ports``
(18700-18799; no persistence) and stops it at the end; with one it writes under the key prefix
``bench-ratings:`` and deletes what it wrote.  Then:

1. writes ``--matches`` finished tables' event streams (2-6 seats of people and AI players, both games,
   ``--moves`` stored moves each, which the rebuild must skip), as the worker would have;
2. **rebuild**: times ``service.ratings.rebuild.rebuild`` over them (goal: 10,000 matches < 10 s);
3. **worker's hot path**: the cost, per finished match, of what the worker adds to the append's
   follow-up pipeline (``service.write.match_end.queue``: the record and its XADD; p50/p99);
4. **projector**: each rating update (read the people's ratings, rate with openskill, the
   compare-and-set script) over the same matches queued, against that Redis (p50/p99, and per second).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis

from service.domain.events import (
    BotsAdded,
    MatchFinished,
    MatchStarted,
    MovePlayed,
    PlayerJoined,
    TableCreated,
    encode,
)
from service.domain.identities import Player, Room
from service.domain.tables.state import FINISHED, Seat, Table
from service.foundation import logs
from service.ratings.projector import Projector
from service.ratings.rebuild import rebuild
from service.store.keys import Keys
from service.write import match_end

PREFIX = "bench-ratings:"


def _free_port(first: int = 18700, last: int = 18799) -> int:
    for port in range(first, last + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port in {first}-{last}")


def _match(i: int, people: int, moves: int, rng: random.Random, at: float) -> tuple[str, list[str], Table]:
    """One finished table's raw events, and the table at its end."""
    game = rng.choice(("cinquillo", "535"))
    n = rng.randint(2, 6) if game == "535" else rng.randint(3, 6)
    humans = rng.randint(1, n)
    who = rng.sample(range(people), humans)
    group = Room(platform="tg", chat=f"-{rng.randrange(200)}", kind="group")
    creator = Player(platform="tg", user=str(who[0]), name=f"P{who[0]}")
    table = f"b{i:09d}"
    evs: list[Any] = [TableCreated(game=game, options={}, max_seats=n, creator=creator, room=group,
                                   locale="es", turn_seconds=60.0)]
    seats = []
    for s, u in enumerate(who):
        p = Player(platform="tg", user=str(u), name=f"P{u}")
        evs.append(PlayerJoined(seat=s, player=p, locale="es"))
        seats.append(Seat(player=p))
    if humans < n:
        evs.append(BotsAdded(seats=list(range(humans, n)), level=rng.choice(("easy", "medium", "hard"))))
        seats += [Seat(bot="medium")] * (n - humans)
    evs.append(MatchStarted(seed=f"s{i}", commitment="c", players=n))
    evs += [MovePlayed(seat=k % n, move="pass", cause="player") for k in range(moves)]
    scores = [rng.randrange(40) for _ in range(n)]
    best = min(scores) if game == "535" else max(scores)
    result = {"winners": [k for k, v in enumerate(scores) if v == best], "scores": scores}
    evs.append(MatchFinished(result=result))
    raws = [encode(e, at=at + k, cmd=f"c{i}-{k}") for k, e in enumerate(evs)]
    t = Table(id=table, version=len(evs), game=game, options={}, max_seats=n, creator=creator, rooms=(group,),
              locale="es", turn_seconds=60.0, seats=tuple(seats), status=FINISHED, result=result)
    return table, raws, t


async def _server_cpu(redis: Any) -> float:
    """The CPU seconds the redis-server has used (user and system, all threads)."""
    info = await redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def run(url: str, matches: int, people: int, moves: int) -> None:
    redis = aioredis.from_url(url)
    keys = Keys(prefix=PREFIX)
    rng = random.Random(15)
    tables: list[tuple[Table, dict[str, Any], float]] = []
    start = time.perf_counter()
    pipe = redis.pipeline(transaction=False)
    for i in range(matches):
        at = 1_700_000_000.0 + i * 60
        table, raws, t = _match(i, people, moves, rng, at)
        for v, raw in enumerate(raws, 1):
            pipe.xadd(keys.events(table), {"e": raw}, id=f"0-{v}")
        tables.append((t, t.result or {}, at + len(raws) - 1))
        if len(pipe) > 5000:
            await pipe.execute()
    await pipe.execute()
    print(f"wrote {matches} finished tables ({moves} moves each) in {time.perf_counter() - start:.1f} s")

    server_cpu = await _server_cpu(redis)
    started, cpu = time.perf_counter(), time.process_time()
    fold = await rebuild(redis, keys)
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    server_cpu = await _server_cpu(redis) - server_cpu
    rated = sum(len(p) for p in fold.ratings.values())
    print(f"rebuild: {len(fold.done)} matches, {rated} ratings in {took:.2f} s "
          f"({len(fold.done) / took:,.0f} matches/s; goal 10,000 in < 10 s): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in fold.seconds.items())
          + f"; CPU: this process {cpu:.2f} s, redis-server {server_cpu:.2f} s; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    hot: list[float] = []
    pipe = redis.pipeline(transaction=False)
    for t, result, at in tables:
        t0 = time.perf_counter()
        match_end.queue(pipe, keys, t, result, at)
        hot.append(time.perf_counter() - t0)
    await redis.delete(keys.rating_done())  # rate them all again, live this time
    await pipe.execute()
    print(f"worker's hot path (record + queued XADD, per finished match): p50 {_pct(hot, .5) * 1e6:.0f} µs, "
          f"p99 {_pct(hot, .99) * 1e6:.0f} µs")

    projector = Projector(redis, keys)
    t0 = time.perf_counter()
    n = await projector.drain()
    wall = time.perf_counter() - t0
    xs = projector.seconds
    print(f"projector: {n} updates in {wall:.2f} s ({n / wall:,.0f}/s); each (read, rate, compare-and-set): "
          f"p50 {_pct(xs, .5) * 1e3:.2f} ms, p99 {_pct(xs, .99) * 1e3:.2f} ms, "
          f"mean {statistics.fmean(xs) * 1e3:.2f} ms")

    async for k in redis.scan_iter(match=f"{PREFIX}*", count=5000):
        await redis.delete(k)
    await redis.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url", nargs="?", default=None)
    ap.add_argument("--matches", type=int, default=10_000)
    ap.add_argument("--people", type=int, default=2_000)
    ap.add_argument("--moves", type=int, default=60)
    ap.add_argument("--ports", default="18700-18799", help="where its redis-server may listen (a range)")
    args = ap.parse_args()
    logs.configure("WARNING")
    if args.url:
        asyncio.run(run(args.url, args.matches, args.people, args.moves))
        return
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("no redis-server: give a REDIS_URL")
    first, _, last = args.ports.partition("-")
    port = _free_port(int(first), int(last or first))
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--dir", d], stdout=subprocess.DEVNULL)
        try:
            for _ in range(100):
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.05)
            asyncio.run(run(f"redis://127.0.0.1:{port}/0", args.matches, args.people, args.moves))
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()

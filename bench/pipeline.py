"""The service pipeline on a real Redis, measured beside the bare pipeline of the design.

usage: bench/pipeline.py [REDIS_URL] [--port P] [--tables 1000] [--commands 20000] [--seconds 5]
                         [--check FLOOR]

Without REDIS_URL it starts its own ``redis-server`` (no persistence) on ``--port`` or a free loopback
port, and stops it at the end: nothing else shares it, and nothing of another user's is touched.

1. Sets up ``--tables`` Cinquillo tables of two people (through the gateway and a worker; not timed)
   and scripts each match's moves with the engine from the seed in its MatchStarted event: no AI
   player and no timer is involved.
2. Throughput: writes ``--commands`` scripted moves to the command streams, then times one worker
   (in this process, as the bare pipeline does) until every one is appended with its outbox messages.
3. Latency: sends moves at half that rate for ``--seconds`` while the worker runs, and reports p50/p99
   from a command's submission to its outbox messages (they are written in the append's Lua call).
4. Loading: the time to load a running table of 500+ events with no cache (snapshot + the events
   after it), and a finished one (its events alone).
5. Runs the bare pipeline of the design (bench/bare_pipeline.py, vendored from
   ../shared/bench/) on the same Redis, with the same python, once before the service's run and once
   after, and prints the service's throughput over their mean: the machines are shared, so only a
   ratio of one run says something.  ``--check FLOOR`` exits non-zero when that ratio is below
   FLOOR in each of ``--attempts`` runs (``make bench-check``: 2.0, 3 runs; CI: 0.5, 10 runs), or
   with ``--gc-max SHARE`` when the garbage collector took more than SHARE of the worker's CPU (CI:
   0.12).  ``--unfrozen`` runs the worker as it was before issue 33's fix (heap not frozen, CPython's
   thresholds), to show what the guards say of that regression.

Only keys under the prefix ``bench:pl:`` are touched (deleted before and after): not those of another
benchmark sharing the Redis (``bench:wh:``, bench/webhook.py's; deleting them under it, leases
included, was a suspect of a webhook run's stalled moves: issue 33).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis as sync_redis
import redis.asyncio as aioredis

import engine
from service.domain.commands import TableCommand
from service.domain.events import MatchStarted, TableCreated
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.foundation import logs
from service.foundation.settings import Settings
from service.ops.runtime import build, worker_for
from service.store.keys import Keys
from service.store.repository import fold, history, load, snapshot_json
from service.write.gateway import Gateway
from service.write.worker import Worker
from tools.loopback import free_port

PREFIX = "bench:pl:"
PROFILE = 0  # --profile N: the throughput run under cProfile, its N costliest functions printed
UNFROZEN = False  # --unfrozen: the heap not frozen, CPython's thresholds (issue 33's regression)
GEN0 = 0  # --gen0 N: the young generation's threshold instead of the worker's (Worker.freeze_heap)
BARE = Path(__file__).resolve().parent / "bare_pipeline.py"
PRODUCER = Path(__file__).resolve().parent / "producer.py"


def timed_worker(r: Any, settings: Settings, **args: Any) -> Any:
    """A worker (wired by ``service.ops.runtime``) whose ``latencies`` record, per command, the time
    from its submission to its append + outbox (an observer of its finishing stage)."""
    worker: Any = worker_for(r, settings, **args)
    worker.latencies = []

    def observe(cmd: Any, version: int, outcome: str, now: float) -> None:
        if cmd.at:
            worker.latencies.append(time.time() - cmd.at)

    worker.finisher.observers.append(observe)
    return worker


async def clean(r: Any, prefix: str = PREFIX) -> None:
    """Delete every key under ``prefix`` (a benchmark's own keys), in batches."""
    batch = []
    async for k in r.scan_iter(match=f"{prefix}*", count=1000):
        batch.append(k)
        if len(batch) >= 1000:
            await r.delete(*batch)
            batch = []
    if batch:
        await r.delete(*batch)


async def setup_tables(r: Any, settings: Settings, n: int, worker: Worker) -> dict[str, dict[str, Any]]:
    """N started two-person tables, each with its scripted moves (seat, move) from the engine."""
    gw = Gateway(r, settings, Keys.of(settings))
    rooms = [Room(platform="bench", chat=str(i), kind="group") for i in range(n)]
    people = [(Player(platform="bench", user=f"a{i}"), Player(platform="bench", user=f"b{i}"))
              for i in range(n)]
    for (a, _), room in zip(people, rooms, strict=True):
        await gw.submit(Input(a, room), "/new cinquillo")
    await worker.drain()
    for (a, b), room in zip(people, rooms, strict=True):
        await gw.submit(Input(b, room), "/join")
        await gw.submit(Input(a, room), "/start")
    await worker.drain()
    tables: dict[str, dict[str, Any]] = {}
    for (a, b), room in zip(people, rooms, strict=True):
        table = await gw.table_of(room)
        assert table is not None
        stored = await history(worker.store, table)
        created = next(s.event for s in stored if isinstance(s.event, TableCreated))
        started = next(s.event for s in stored if isinstance(s.event, MatchStarted))
        state = engine.new_game(created.game, players=2, seed=started.seed, **created.options)
        script = []
        while engine.to_move(state) is not None:
            seat, move = engine.to_move(state), engine.legal_moves(state)[0]
            script.append((seat, move))
            state = engine.play(state, move)
        tables[table] = {"people": (a, b), "room": room, "script": script, "next": 0}
    return tables


Planned = list[tuple[str, str, TableCommand]]


def next_commands(tables: dict[str, dict[str, Any]], count: int, keys: Any) -> Planned:
    """The next ``count`` scripted moves, round-robin over the tables (each table's in order)."""
    out = []
    while len(out) < count:
        progressed = False
        for table, t in tables.items():
            if t["next"] < len(t["script"]) and len(out) < count:
                seat, move = t["script"][t["next"]]
                t["next"] += 1
                progressed = True
                cmd = TableCommand(id=f"m:{table}:{t['next']}", table=table, name="move", args={"move": move},
                                   actor=t["people"][seat], room=t["room"], locale="en")
                out.append((keys.commands_for(table), table, cmd))
        if not progressed:
            break
    return out


async def xadd_all(r: Any, cmds: list[tuple[str, str, TableCommand]], stamp: bool) -> None:
    pipe = r.pipeline(transaction=False)
    now = time.time()
    for stream, _, cmd in cmds:
        c = cmd.replace(at=now) if stamp else cmd
        pipe.xadd(stream, {"c": c.dumps()})
    await pipe.execute()


async def redis_cpu(r: Any) -> float:
    """The Redis server's CPU seconds so far (user + system, every thread)."""
    info = await r.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def throughput(worker: Any, r: Any, tables: dict[str, Any], n: int) -> tuple[float, int, float]:
    """Prefill ``n`` scripted moves, then time the worker until all are appended; (commands/s,
    commands, the garbage collector's share of the worker's CPU)."""
    cmds = next_commands(tables, n, worker.keys)
    for i in range(0, len(cmds), 1000):
        await xadd_all(r, cmds[i:i + 1000], stamp=False)
    await worker.setup()
    # The CPU time spent in the cyclic garbage collector (process time: on a shared machine a
    # collection's wall time also counts the moments another process held the core).
    gc_time = [0.0, 0.0]
    longest = [0.0, 0.0, 0.0]  # the longest collection of each generation (its pause, in CPU time)

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_time[1] = time.process_time()
        else:
            took = time.process_time() - gc_time[1]
            gc_time[0] += took
            g = info["generation"]
            longest[g] = max(longest[g], took)

    gc.callbacks.append(on_gc)
    profiler = cProfile.Profile() if PROFILE else None
    collections = [s["collections"] for s in gc.get_stats()]
    redis_cpu0 = await redis_cpu(r)
    t0, cpu0 = time.perf_counter(), time.process_time()
    try:
        if profiler is not None:
            profiler.enable()
        done = await worker.drain()
    finally:
        if profiler is not None:
            profiler.disable()
        gc.callbacks.remove(on_gc)
    dt, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    served = await redis_cpu(r) - redis_cpu0
    runs = [s["collections"] - c for s, c in zip(gc.get_stats(), collections, strict=True)]
    print(f"  (gc collections per 1,000 commands: gen0 {runs[0] * 1000 / done:.1f}, gen1 "
          f"{runs[1] * 1000 / done:.2f}, gen2 {runs[2] * 1000 / done:.3f}; thresholds {gc.get_threshold()}; "
          f"longest {', '.join(f'{x * 1000:.1f}' for x in longest)} ms)")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(PROFILE)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(PROFILE)
    print(f"  (worker CPU {cpu / done * 1e6:.0f} us per command, of which garbage collection "
          f"{gc_time[0] / done * 1e6:.0f} us; {cpu / dt:.0%} of one core; Redis CPU "
          f"{served / done * 1e6:.0f} us per command)")
    return done / dt, done, gc_time[0] / cpu


async def latency(worker: Any, url: str, tables: dict[str, Any], rate: float,
                  seconds: float) -> list[float]:
    """Open-loop load at ``rate`` for ``seconds``; per-command latency from submission to outbox.

    The commands are written by bench/producer.py in a process of its own (as the adapters write
    them in production), stamped as they are sent, so that the worker's process measures only the
    worker."""
    worker.latencies = []
    worker.stop.clear()
    # Scripted before the clock starts, then handed to the producer as lines "<stream> <json>".
    planned = next_commands(tables, int(rate * seconds), worker.keys)
    with tempfile.NamedTemporaryFile("wb", suffix=".cmds", delete=False) as f:
        for stream, _, cmd in planned:
            f.write(stream.encode() + b" " + cmd.dumps().encode() + b"\n")
    task = asyncio.create_task(worker.run())
    producer = await asyncio.create_subprocess_exec(sys.executable, str(PRODUCER), url, str(rate), f.name,
                                                    stdout=asyncio.subprocess.PIPE)
    try:
        out, _ = await producer.communicate()
        sent = int(out or 0)
        t0 = time.perf_counter()
        while len(worker.latencies) < sent and time.perf_counter() - t0 < 10:
            await asyncio.sleep(0.01)
    finally:
        Path(f.name).unlink()
        worker.stop.set()
        await task
    return worker.latencies


async def load_time(r: Any, settings: Settings) -> tuple[int, float]:
    """Build a table of 500+ events (AI players, many rounds) and time cold loads of it while it runs
    (its latest snapshot and the events after it), then of the whole finished table (its events
    alone: a finished table keeps no snapshot)."""
    rt = build(settings, r, timers=False)
    gw, worker = rt.gateway, rt.worker
    room = Room(platform="bench", chat="long")
    me = Player(platform="bench", user="long")
    await gw.submit(Input(me, room), "/play cinquillo tradicional 6 puntos objetivo=60")
    await worker.drain()
    await gw.submit(Input(me, room), "/leave")
    while await worker.drain():
        pass
    finished = await gw.table_of(room)
    assert finished is not None
    raws = await worker.store.events(finished)
    # The same table as it was before its last move (running), stored as the worker stores a running
    # table: its events under a table id of its own and its snapshot at the last multiple of
    # snapshot_every (an append writes it there).
    table, keep = f"{finished}r", len(raws) - 2
    at = keep // settings.snapshot_every * settings.snapshot_every
    base = fold(table, None, raws[:at])
    assert base is not None and fold(table, None, raws[:keep]).status == "running"
    pipe = r.pipeline(transaction=False)
    for v, raw in enumerate(raws[:keep], 1):
        pipe.xadd(worker.keys.events(table), {"e": raw}, id=f"0-{v}")
    pipe.hset(worker.keys.snap(table), mapping={"v": at, "s": snapshot_json(base)})
    await pipe.execute()
    times, restore, whole = [], [], []
    snap = json.loads((await worker.store.load(table)).snapshot or "{}")
    for _ in range(200):
        t0 = time.perf_counter()
        await load(worker.store, table)
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        engine.restore(snap["engine"])
        restore.append(time.perf_counter() - t0)
    for _ in range(20):
        t0 = time.perf_counter()
        await load(worker.store, finished)
        whole.append(time.perf_counter() - t0)
    print(f"  (of which engine.restore of the snapshot: {statistics.median(restore) * 1000:.2f} ms; the "
          f"finished table, {len(raws)} events and no snapshot: {statistics.median(whole) * 1000:.2f} ms)")
    return keep, statistics.median(times)


def bare(url: str, n: int, tables: int) -> float:
    """The bare pipeline's commands/s (bench/bare_pipeline.py, in a process of its own)."""
    out = subprocess.run([sys.executable, str(BARE), url, str(n), str(tables)], capture_output=True,
                         text=True, check=True).stdout
    print(out.strip())
    return float(out.split("bare pipeline:")[1].split()[0])


def start_redis(port: int | None) -> tuple[subprocess.Popen[bytes], str]:
    """A throw-away redis-server (no persistence) on ``port`` or a free loopback port, answering."""
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("bench/pipeline.py needs redis-server (apt-get install redis-server) or a REDIS_URL")
    port = port or free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    client = sync_redis.Redis.from_url(url)
    for _ in range(200):
        try:
            client.ping()
            break
        except sync_redis.ConnectionError:
            time.sleep(0.05)
    else:
        proc.kill()
        sys.exit(f"redis-server did not start on port {port}")
    client.close()
    return proc, url


async def service(url: str, n_tables: int, n_commands: int, seconds: float) -> tuple[float, float]:
    """The service's part of the run; returns its throughput (commands/s) and the garbage collector's
    share of the worker's CPU in it."""
    logs.configure("WARNING")
    settings = Settings(redis_url=url, key_prefix=PREFIX, turn_seconds=0, batch=256, block_ms=5)
    r = aioredis.from_url(url)
    await clean(r)
    try:
        # One long-running worker throughout (its table cache is warm, as in production).
        worker = timed_worker(r, settings, timers=False)
        tables = await setup_tables(r, settings, n_tables, worker)
        # As Worker.run does at its start (the heap frozen, the young generation's threshold set),
        # once the setup's tables are in the cache: drain() alone does neither.
        if UNFROZEN:
            gc.set_threshold(700, 10, 10)  # CPython's default, no freezing: the regression of issue 33
        else:
            worker.freeze_heap()
        if GEN0:
            gc.set_threshold(GEN0, *gc.get_threshold()[1:])  # --gen0: another threshold, to compare
        rate, done, gc_share = await throughput(worker, r, tables, n_commands)
        print(f"service pipeline: {rate:.0f} commands/s ({done} scripted moves over {n_tables} tables, "
              "one worker)")
        lat = await latency(worker, url, tables, rate / 2, seconds)
        if lat:
            q = statistics.quantiles(lat, n=100)
            print(f"latency at {rate / 2:.0f} commands/s: p50 {q[49] * 1000:.2f} ms, "
                  f"p99 {q[98] * 1000:.2f} ms (command to outbox, {len(lat)} commands)")
        version, t = await load_time(r, settings)
        print(f"load of a running table with {version} events (snapshot every {settings.snapshot_every}): "
              f"{t * 1000:.2f} ms median")
    finally:
        await clean(r)
        await r.aclose()
    return rate, gc_share


def main(url: str, n_tables: int, n_commands: int, seconds: float, check: float | None,
         attempts: int = 1, gc_max: float | None = None) -> int:
    """Bare, service, bare again; the ratio; with ``check``, 1 when the ratio is below it in each of
    ``attempts`` runs (a shared machine's noise can sink one run: a regression sinks every one).
    ``gc_max``: 1 as well when the garbage collector's share of the worker's CPU is above it in every
    run (a share of one process's CPU: the machine changes it little, unlike the ratio)."""
    ratio, gc_share = 0.0, 0.0
    for attempt in range(1, attempts + 1):
        before = bare(url, n_commands, n_tables)
        rate, gc_share = asyncio.run(service(url, n_tables, n_commands, seconds))
        after = bare(url, n_commands, n_tables)
        ratio = rate / ((before + after) / 2)
        print(f"ratio service/bare: {ratio:.2f} (bare pipeline {before:.0f} before and {after:.0f} after, "
              "same run)")
        ratio_ok = check is None or ratio >= check
        gc_ok = gc_max is None or gc_share <= gc_max
        if ratio_ok and gc_ok:
            return 0
        if attempt < attempts:
            why = f"below the floor of {check}x" if not ratio_ok else f"gc {gc_share:.0%} above {gc_max:.0%}"
            print(f"({why} in run {attempt} of {attempts}: once more)")
    if not ratio_ok:
        print(f"FAIL: the pipeline is at {ratio:.2f}x the bare pipeline, below the floor of {check}x "
              f"in {attempts} run(s)")
    else:
        print(f"FAIL: garbage collection takes {gc_share:.0%} of the worker's CPU, above {gc_max:.0%} "
              f"in {attempts} run(s)")
    return 1


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("redis_url", nargs="?", default=None,
                   help="a Redis to use (default: a redis-server of this run's own)")
    p.add_argument("--port", type=int, default=None, help="the port of this run's own redis-server")
    p.add_argument("--tables", type=int, default=1000)
    p.add_argument("--commands", type=int, default=20000)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--check", type=float, default=None, metavar="FLOOR",
                   help="exit 1 if the ratio to the bare pipeline is below FLOOR")
    p.add_argument("--attempts", type=int, default=1, metavar="N",
                   help="with --check: fail only when N runs in a row are below the floor")
    p.add_argument("--gc-max", type=float, default=None, metavar="SHARE",
                   help="fail (too) when gc takes more than SHARE (0-1) of the worker's CPU in every run")
    p.add_argument("--unfrozen", action="store_true",
                   help="the worker's heap not frozen and CPython's gc thresholds (issue 33's regression)")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="run the throughput part under cProfile and print its N costliest functions")
    p.add_argument("--gen0", type=int, default=0, metavar="N",
                   help="collect the young generation every N containers instead of the worker's threshold")
    a = p.parse_args()
    PROFILE, GEN0, UNFROZEN = a.profile, a.gen0, a.unfrozen
    proc = None
    if a.redis_url is None:
        proc, a.redis_url = start_redis(a.port)
    try:
        code = main(a.redis_url, a.tables, a.commands, a.seconds, a.check, a.attempts, a.gc_max)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    sys.exit(code)

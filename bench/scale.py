"""Throughput of the pipeline with 1, 2 and 4 worker processes on one Redis and on a three-master
Redis Cluster, in one run.

usage: bench/scale.py REDIS_URL [--tables 400] [--commands 8000] [--seconds 3] [--workers 1 2 4]
                      [--cluster auto|URL|none]

``--cluster auto`` (the default) starts a throwaway three-master cluster on loopback ports
(tools/local_cluster.py: redis-server and redis-cli must be installed) and stops it at the end; a URL
uses an existing cluster; ``none`` skips the cluster rows.

For each worker count, on a clean key prefix (``bench:pl:``, bench/pipeline.py's, deleted before and after):

1. the tables and their scripted moves are set up as ``bench/pipeline.py`` does (its helpers are
   imported: two-person Cinquillo tables, moves scripted from the seed, no AI player, no timer);
2. N ``cinq worker`` processes are started and left idle (their start-up is not timed);
3. throughput: ``--commands`` scripted moves, in waves of one move per table (each wave written at
   once), timed until every command shard has nothing left undelivered or unacknowledged; the share
   of them that appended events is printed too (a refused move appends none);
4. latency: moves are sent open-loop at half that rate for ``--seconds``; a command's latency runs from
   its submission (its ``at``) to its first outbox entry, whose id is the Redis clock when the append's
   Lua call wrote it (same host, same clock).

Prints one table, then the CPU each command cost in the throughput runs (the workers together, Redis,
this process: /proc and INFO cpu) and the ceiling that sets: N workers go no faster than N cores'
worth of the workers' CPU per command, nor than the machine's cores shared by every process a command
goes through (issue 33 asks two workers for 1.8x one; on 2 cores that needs Redis and the producer
to cost under a ninth of a worker, see bench/results/taps.txt).

Each command shard is leased to one worker process (service/store/leases.py), so with 4 shards and 4
workers each owns one; with fewer, a worker reads several shards (on the cluster, one
read per slot: see service/store/streams.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from bench.pipeline import PREFIX, clean, next_commands, setup_tables, xadd_all
from service.foundation import logs
from service.foundation.settings import Settings
from service.ops.runtime import worker_for
from service.store.keys import Keys
from service.write.worker import Worker
from tools import local_cluster

# every role on Redis refuses to start without a strong daily secret (CINQ_DAILY_SECRET)
DAILY_SECRET = "bench-daily-secret-not-for-production-0123"
# every role refuses to start without a token secret of 32 bytes at least (the workers never started)
TOKEN_SECRETS = '["bench-token-secret-not-for-production-01"]'

BUCKETS, SHARDS = 1024, 4


def _settings(url: str, cluster: bool = False) -> Settings:
    return Settings(redis_url=url, key_prefix=PREFIX, turn_seconds=0, batch=256, block_ms=5,
                    buckets=BUCKETS, command_shards=SHARDS, redis_cluster=cluster)


def _client(url: str, cluster: bool) -> Any:
    return RedisCluster.from_url(url) if cluster else aioredis.from_url(url)


def spawn_workers(url: str, n: int, cluster: bool = False) -> list[subprocess.Popen]:
    """N ``cinq worker`` processes on the benchmark's prefix and settings."""
    env = {**os.environ, "CINQ_DAILY_SECRET": DAILY_SECRET, "CINQ_TOKEN_SECRETS": TOKEN_SECRETS,
           "REDIS_URL": url, "CINQ_KEY_PREFIX": PREFIX, "CINQ_TURN_SECONDS": "0",
           "CINQ_BATCH": "256", "CINQ_BLOCK_MS": "5", "CINQ_BUCKETS": str(BUCKETS),
           "CINQ_COMMAND_SHARDS": str(SHARDS), "CINQ_HTTP_PORT": "0", "CINQ_LOG_LEVEL": "ERROR",
           "CINQ_REDIS_CLUSTER": "true" if cluster else "false"}
    return [subprocess.Popen([sys.executable, "-m", "service.ops.cli", "worker"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]


def stop_workers(procs: list[subprocess.Popen]) -> None:
    """SIGTERM (the batch in hand is finished), then wait."""
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


async def _backlog(r: Any, settings: Settings) -> int:
    """Commands not yet delivered (lag) or delivered and not acknowledged (pending), over all shards."""
    total = 0
    for key in Keys.of(settings).all_commands():
        for g in await r.xinfo_groups(key):
            if _s(g["name"]) == settings.group:
                total += int(g.get("lag") or 0) + int(g["pending"])
    return total


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def redis_cpu_s(r: Any) -> float:
    """CPU seconds Redis has used so far (on a cluster: every master's)."""
    infos = await r.info("cpu")
    nodes = infos.values() if isinstance(r, RedisCluster) else [infos]
    return sum(float(i["used_cpu_user"]) + float(i["used_cpu_sys"]) for i in nodes)


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else v


async def _wait_started(r: Any, settings: Settings, n: int, timeout: float = 120) -> None:
    """Until the N workers have shared the command shards out (each owns its fair share)."""
    keys = Keys.of(settings)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        owners = [await r.get(keys.shard_lease(s)) for s in range(settings.command_shards)]
        if None not in owners and len(set(owners)) == min(n, settings.command_shards):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("the workers did not start")


async def _events(r: Any, worker: Worker, tables: dict[str, Any]) -> int:
    """The number of events of the benchmark's tables (a refused move appends none)."""
    pipe = r.pipeline(transaction=False)
    for table in tables:
        pipe.xlen(worker.keys.events(table))
    return sum(await pipe.execute())


async def _outbox_times(r: Any, worker: Worker, since_ms: int) -> dict[str, float]:
    """Command id -> the time (s) of its first outbox entry written after ``since_ms``."""
    first: dict[str, float] = {}
    for b in range(worker.keys.buckets):
        for mid, f in await r.xrange(worker.keys.outbox(b), min=f"{since_ms}-0"):
            cid = _s(f[b"c"])
            ms = int(_s(mid).split("-")[0])
            if cid not in first or ms < first[cid] * 1000:
                first[cid] = ms / 1000
    return first


async def one_row(url: str, n_workers: int, n_tables: int, n_commands: int,
                  seconds: float, cluster: bool = False) -> dict[str, Any]:
    """Throughput and latency with ``n_workers`` worker processes (a fresh set of tables)."""
    settings = _settings(url, cluster)
    r = _client(url, cluster)
    await clean(r)
    procs: list[subprocess.Popen] = []
    try:
        helper = worker_for(r, settings, timers=False)
        tables = await setup_tables(r, settings, n_tables, helper)
        procs = spawn_workers(url, n_workers, cluster)
        await _wait_started(r, settings, n_workers)
        # Throughput: waves of one move per table, each wave written at once (a person, too, moves
        # only after seeing the last move).
        events_before = await _events(r, helper, tables)
        cpu0 = [cpu_s(p.pid) for p in procs] + [await redis_cpu_s(r), time.process_time()]
        sent, t0 = 0, time.perf_counter()
        while sent < n_commands:
            wave = next_commands(tables, min(len(tables), n_commands - sent), helper.keys)
            if not wave:
                break
            await xadd_all(r, wave, stamp=False)
            sent += len(wave)
            while await _backlog(r, settings):
                await asyncio.sleep(0.002)
        rate = sent / (time.perf_counter() - t0)
        cpu1 = [cpu_s(p.pid) for p in procs] + [await redis_cpu_s(r), time.process_time()]
        # CPU per command (us): the workers together, Redis, this process (the producer and its polls)
        per = [(b - a) / max(sent, 1) * 1e6 for a, b in zip(cpu0, cpu1, strict=True)]
        cpu = {"workers": sum(per[:-2]), "redis": per[-2], "producer": per[-1]}
        applied = (await _events(r, helper, tables) - events_before) / max(sent, 1)
        # Latency: open-loop at half that rate.
        planned = next_commands(tables, int(rate / 2 * seconds), helper.keys)
        sent_at: dict[str, float] = {}
        start_ms = int(time.time() * 1000) - 1
        sent, t0 = 0, time.perf_counter()
        while sent < len(planned):
            due = min(int((time.perf_counter() - t0) * rate / 2), len(planned)) - sent
            if due > 0:
                now = time.time()  # xadd_all stamps the batch with time.time() as it starts
                await xadd_all(r, planned[sent:sent + due], stamp=True)
                sent_at.update((cmd.id, now) for _, _, cmd in planned[sent:sent + due])
                sent += due
            await asyncio.sleep(0.002)
        deadline = time.monotonic() + 30
        while await _backlog(r, settings) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        out = await _outbox_times(r, helper, start_ms)
        lat = [max(out[c] - at, 0.0) for c, at in sent_at.items() if c in out]
        q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [0.0] * 99
        return {"redis": "cluster (3 masters)" if cluster else "one Redis", "workers": n_workers,
                "rate": rate, "p50": q[49] * 1000, "p99": q[98] * 1000,
                "load": rate / 2, "measured": len(lat), "applied": applied, "cpu": cpu}
    finally:
        stop_workers(procs)
        await clean(r)
        await r.aclose()


async def main(url: str, workers: list[int], n_tables: int, n_commands: int, seconds: float,
               cluster: str) -> None:
    """Run every row (one Redis, then the cluster) and print the table."""
    logs.configure("WARNING")
    rows = []
    for n in workers:
        print(f"... one Redis, {n} worker process(es)", file=sys.stderr)
        rows.append(await one_row(url, n, n_tables, n_commands, seconds))
    procs: list[subprocess.Popen[bytes]] = []
    cluster_url = None if cluster == "none" else cluster
    try:
        if cluster == "auto":
            tmp = tempfile.mkdtemp(prefix="cinq-cluster-")
            cluster_url, procs = local_cluster.start(Path(tmp))
        if cluster_url:
            for n in workers:
                print(f"... cluster, {n} worker process(es)", file=sys.stderr)
                rows.append(await one_row(cluster_url, n, n_tables, n_commands, seconds, cluster=True))
    finally:
        local_cluster.stop(procs)
    print(f"one Redis ({url}) and a Redis Cluster ({cluster_url or 'not run'}), {n_tables} tables, "
          f"{n_commands} commands per throughput run, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{'redis':>19} | {'workers':>7} | {'commands/s':>10} | {'applied':>7} | {'latency at':>10} | "
          f"{'p50 ms':>7} | {'p99 ms':>7}")
    print(f"{'-' * 19}-+-{'-' * 7}-+-{'-' * 10}-+-{'-' * 7}-+-{'-' * 10}-+-{'-' * 7}-+-{'-' * 7}")
    for row in rows:
        # "applied": events appended per command sent (a move is one event, a last move two; a
        # refusal none), so that refused moves cannot pass for throughput.
        print(f"{row['redis']:>19} | {row['workers']:>7} | {row['rate']:>10.0f} | {row['applied']:>7.0%} | "
              f"{row['load']:>8.0f}/s | {row['p50']:>7.2f} | {row['p99']:>7.2f}")
    print("CPU per command in the throughput runs (us), and the ceiling it sets on this machine's cores:")
    cores = os.cpu_count() or 1
    for row in rows:
        c = row["cpu"]
        total = c["workers"] + c["redis"] + c["producer"]
        # N workers cannot go faster than N cores' worth of one worker's CPU, nor than the machine's
        # cores shared by every process the commands go through (the workers, Redis, the producer).
        ceiling = min(row["workers"] / max(c["workers"], 1e-9), cores / max(total, 1e-9)) * 1e6
        print(f"  {row['redis']:>19}, {row['workers']} worker(s): workers {c['workers']:.0f}, "
              f"Redis {c['redis']:.0f}, producer {c['producer']:.0f} = {total:.0f} us a command; "
              f"ceiling {ceiling:,.0f} commands/s (measured {row['rate']:,.0f})")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("redis_url", nargs="?", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--tables", type=int, default=400)
    p.add_argument("--commands", type=int, default=8000)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--cluster", default="auto",
                   help="auto: start a three-master cluster here; a URL: an existing one; none: skip")
    a = p.parse_args()
    asyncio.run(main(a.redis_url, a.workers, a.tables, a.commands, a.seconds, a.cluster))

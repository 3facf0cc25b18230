"""What waiting for a replica costs (issue 36): the worker's command -> outbox latency and throughput
with and without ``CINQ_REDIS_MIN_REPLICAS=1``, in one run, on one primary with one replica.

usage: bench/replicas.py [--tables 1000] [--commands 3000] [--seconds 5] [--rounds 2]

Starts its own ``redis-server`` primary (AOF, ``appendfsync always``) and one replica on free loopback
ports, sets up the tables once (``bench/pipeline.py``), then alternates the two settings ``--rounds``
times (so that neither always runs on a warmer cache): throughput over ``--commands`` scripted moves,
and latency (p50/p99, submission to outbox) at half the no-wait throughput for ``--seconds``.  Prints
each round and the ratio with/without.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import pipeline  # noqa: E402  (bench/pipeline.py)
import redis.asyncio as aioredis  # noqa: E402

from service.foundation import logs  # noqa: E402
from service.foundation.settings import Settings  # noqa: E402
from tests.faults.replicated import Replicated  # noqa: E402


def _q(lat: list[float]) -> tuple[float, float]:
    if len(lat) < 100:
        # Each table's match has a few dozen scripted moves; every round spends some of them.
        raise SystemExit(f"only {len(lat)} commands measured: the tables ran out of moves, use more --tables")
    q = statistics.quantiles(lat, n=100)
    return q[49] * 1000, q[98] * 1000


async def main(n_tables: int, n_commands: int, seconds: float, rounds: int) -> None:
    logs.configure("WARNING")
    with tempfile.TemporaryDirectory(prefix="cinq-replicas-") as d:
        pair = Replicated(Path(d), replicas=1, sentinels=0).start()
        r = aioredis.from_url(pair.primary.url)
        try:
            base = dict(redis_url=pair.primary.url, key_prefix=pipeline.PREFIX, turn_seconds=0, batch=256,
                        block_ms=5)
            modes = {"no wait": Settings(**base),
                     "WAIT 1 replica": Settings(**base, redis_min_replicas=1, redis_replica_timeout_ms=5000)}
            await pipeline.clean(r)
            setup = pipeline.timed_worker(r, modes["no wait"], timers=False)
            tables = await pipeline.setup_tables(r, modes["no wait"], n_tables, setup)
            if setup.thinker is not None:
                setup.thinker.close()
            results: dict[str, list[tuple[float, float, float]]] = {m: [] for m in modes}
            rate = None
            for n in range(rounds):
                for mode in (list(modes) if n % 2 == 0 else list(modes)[::-1]):
                    # One consumer name for every round's worker: each takes back at once the
                    # command shards the last one leased (another name would wait for them to expire).
                    w = pipeline.timed_worker(r, modes[mode], timers=False, name="bench-replicas")
                    await w.setup()
                    tput, _ = await pipeline.throughput(w, r, tables, n_commands)
                    rate = rate or tput  # the same offered load for both: half the first no-wait rate
                    p50, p99 = _q(await pipeline.latency(w, pair.primary.url, tables, rate / 2, seconds))
                    results[mode].append((tput, p50, p99))
                    if w.thinker is not None:
                        w.thinker.close()
                    print(f"round {n + 1} {mode:>15}: {tput:7.0f} commands/s; at {rate / 2:.0f} commands/s "
                          f"p50 {p50:.2f} ms, p99 {p99:.2f} ms", flush=True)
            med = {m: tuple(statistics.median(x[i] for x in v) for i in range(3)) for m, v in results.items()}
            (t0, a50, a99), (t1, b50, b99) = med["no wait"], med["WAIT 1 replica"]
            print(f"median: no wait {t0:.0f}/s p50 {a50:.2f} p99 {a99:.2f} ms; WAIT 1 replica {t1:.0f}/s "
                  f"p50 {b50:.2f} p99 {b99:.2f} ms; throughput ratio {t1 / t0:.2f}, p50 +{b50 - a50:.2f} ms, "
                  f"p99 +{b99 - a99:.2f} ms")
        finally:
            await pipeline.clean(r)
            await r.aclose()
            pair.stop()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--tables", type=int, default=1000)
    p.add_argument("--commands", type=int, default=3000)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    asyncio.run(main(a.tables, a.commands, a.seconds, a.rounds))

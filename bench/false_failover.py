"""What a failover of a live primary loses, by how many replicas a write waits for (Redis alone).

A primary with two replicas and three sentinels (real ``redis-server`` and ``redis-sentinel`` on
loopback, :mod:`tests.faults.replicated`), eight writers of plain redis-py (not the service's code)
that find the primary through the sentinels and count a write acknowledged once ``WAIT n`` says ``n``
replicas have it.  Two seconds in, ``SENTINEL FAILOVER`` promotes a replica while the primary lives on
(as sentinels do when they wrongly judge it down); fifteen seconds later the writers stop and the new
primary is read: every acknowledged write it lacks is lost.

This is why the roles refuse to wait for fewer replicas than the primary has
(``service.store.connection.too_few_waited``).  Prints one line per run:

    python bench/false_failover.py [--runs 3] [--waits 1,2]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from pathlib import Path

import redis
import redis.asyncio as aioredis
from redis.asyncio.sentinel import Sentinel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.faults.replicated import MASTER, Replicated


async def one(wait: int, seed: int, writers: int = 8) -> str:
    """One run: the line it prints."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="cinq-false-failover-") as d:
        rep = Replicated(Path(d), replicas=2, sentinels=3, min_replicas=1)
        await asyncio.to_thread(rep.start)
        try:
            sentinel = Sentinel([("127.0.0.1", s.port) for s in rep.sentinels],  # type: ignore[no-untyped-call]
                                sentinel_kwargs={"socket_timeout": 1.0})
            acked: list[str] = []
            stop = asyncio.Event()

            async def writer(w: int) -> None:
                client = sentinel.master_for(MASTER, socket_timeout=2.0)
                i = 0
                while not stop.is_set():
                    i += 1
                    try:
                        pipe = client.pipeline(transaction=False)
                        pipe.rpush("L", f"{w}:{i}")
                        pipe.execute_command("WAIT", wait, 1000)
                        if int((await pipe.execute())[1]) >= wait:
                            acked.append(f"{w}:{i}")
                    except redis.RedisError:
                        await asyncio.sleep(0.05)
                await client.aclose()

            tasks = [asyncio.create_task(writer(w)) for w in range(writers)]
            await asyncio.sleep(2.0 + rng.random())
            old = await asyncio.to_thread(rep.primary_now)
            await asyncio.to_thread(rep.fail_over)
            await asyncio.sleep(15.0)
            stop.set()
            await asyncio.gather(*tasks)
            now = await asyncio.to_thread(rep.primary_now)
            for _ in range(100):  # the old primary back as a replica: the deployment settled
                settled = now is not None and now is not old
                if settled and await asyncio.to_thread(rep.connected_replicas, now) >= 2:
                    break
                await asyncio.sleep(0.3)
                now = await asyncio.to_thread(rep.primary_now)
            assert now is not None and old is not None
            client = aioredis.Redis(port=now.port)
            held = {x.decode() for x in await client.lrange("L", 0, -1)}
            await client.aclose()
            lost = sum(1 for v in acked if v not in held)
            return (f"WAIT {wait} seed {seed}: {len(acked)} writes acknowledged, {lost} lost "
                    f"(primary :{old.port} -> :{now.port})")
        finally:
            await asyncio.to_thread(rep.stop)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--waits", default="1,2")
    args = ap.parse_args()
    for wait in (int(w) for w in args.waits.split(",")):
        for seed in range(args.runs):
            print(asyncio.run(one(wait, seed)), flush=True)


if __name__ == "__main__":
    main()

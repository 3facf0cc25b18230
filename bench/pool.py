"""What the bounded Redis pool costs (issue 32, 5): commands per second through the client every role
now uses (``service.store.pool.BoundedPool``) beside redis-py's default pool, in the same run on the
same ``redis-server`` (port 7160), alternated three times.

Each round: ``--tasks`` concurrent tasks send ``--commands`` commands in all (a ``SET`` and a ``GET``
of a small key, and one ``EVALSHA`` of a small script, as the service's round trips are), below the
pool's bound (``--tasks`` 32 < 64) and above it (``--tasks`` 200: tasks wait for a connection).

    python bench/pool.py [--commands 20000] [--tasks 32 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis

from service.store.pool import BoundedPool

PORT = 7160


async def _round(client: Any, commands: int, tasks: int) -> float:
    script = client.register_script("return redis.call('INCR', KEYS[1])")
    per = commands // (3 * tasks)

    async def one(i: int) -> None:
        for j in range(per):
            await client.set(f"bench:pool:{i}", j)
            await client.get(f"bench:pool:{i}")
            await script(keys=[f"bench:pool:n:{i}"])

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(tasks)))
    return per * 3 * tasks / (time.perf_counter() - t0)


async def main(commands: int, tasks_list: list[int]) -> None:
    url = f"redis://127.0.0.1:{PORT}/0"
    rows = []
    for tasks in tasks_list:
        default: list[tuple[float, int]] = []
        bounded: list[tuple[float, int]] = []
        for _ in range(3):
            for name, make in (("default", lambda: aioredis.from_url(url)),
                               ("bounded", lambda: aioredis.Redis(connection_pool=BoundedPool.from_url(
                                   url, max_connections=64, timeout=5.0)))):
                client = make()
                rate = await _round(client, commands, tasks)
                clients = int((await client.info("clients"))["connected_clients"])
                await client.aclose()
                (default if name == "default" else bounded).append((rate, clients))
        d = sorted(r for r, _ in default)[1]
        b = sorted(r for r, _ in bounded)[1]
        dc, bc = max(c for _, c in default), max(c for _, c in bounded)
        rows.append(f"  {tasks:>4} tasks: default pool {d:8.0f} cmd/s ({dc:>3} clients)"
                    f"   bounded pool {b:8.0f} cmd/s ({bc:>3} clients)   ratio {b / d:.2f}")
    print(f"Redis pool, {commands} commands a round, median of 3 (load average {os.getloadavg()[0]:.1f})")
    print("\n".join(rows))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=20000)
    p.add_argument("--tasks", type=int, nargs="+", default=[32, 200])
    a = p.parse_args()
    data = tempfile.mkdtemp(prefix="cinq-pool-")
    server = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port", str(PORT),
                               "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", data],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        asyncio.run(main(a.commands, a.tasks))
    finally:
        server.terminate()
        server.wait()

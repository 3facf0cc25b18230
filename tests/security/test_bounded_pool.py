"""The flooder against the Redis connections of a deployment (issue 32, 5).

Hundreds of concurrent unauthenticated ``GET /api/replay/<anything>`` (each one a Redis read) take
the web process's Redis client no further than its pool's bound (``CINQ_REDIS_MAX_CONNECTIONS``):
Redis's client count, sampled throughout, stays under it, every request gets an answer (404 for a
table that does not exist, or 503 when no connection came free in time), and the service still
answers afterwards.
"""

from __future__ import annotations

import asyncio
import secrets

import aiohttp

from tests.security.deployment import deployed

BOUND = 12
FLOOD = 400


async def test_a_flood_of_replays_stays_within_the_redis_pool(tmp_path):
    async with deployed(tmp_path, {"CINQ_REDIS_MAX_CONNECTIONS": str(BOUND)}) as d:
        peak = 0
        done = asyncio.Event()

        async def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, int((await d.redis.info("clients"))["connected_clients"]))
                await asyncio.sleep(0.02)

        sampler = asyncio.create_task(sample())
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            async def one() -> int:
                async with http.get(f"{d.web}/api/replay/{secrets.token_hex(8)}") as r:
                    await r.read()
                    return r.status

            statuses = await asyncio.gather(*(one() for _ in range(FLOOD)))
        done.set()
        await sampler
        assert set(statuses) <= {404, 503}, sorted(set(statuses))
        assert statuses.count(404) > 0
        # The service's one client (its bound), and the test's own oracle connection.
        assert peak <= BOUND + 1, peak
        status, _ = await d.get(f"{d.web}/api/replay/{secrets.token_hex(8)}")
        assert status == 404
        assert "Traceback" not in d.log(), d.log()[-3000:]

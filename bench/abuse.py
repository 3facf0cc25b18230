"""The web process under abuse (issue 32): Redis clients, open feeds and memory, before, during and
after 1,000 idle feeds and 1,000 concurrent ``/readyz`` (and 1,000 ``/api/replay/<anything>``).

One deployment as an operator runs it (``tests/security/deployment.py``: a ``redis-server`` and one
``cinq serve`` with the worker, the web table and a webhook platform), on ports 7150-7153.  Figures:

- **Redis clients**: ``INFO clients`` ``connected_clients`` less this script's own connection;
- **feeds**: ``cinq_web_feeds`` from the process's ``/metrics`` (operations listener);
- **RSS**: the ``cinq serve`` process's ``VmRSS``.

"During" is the peak sampled every 20 ms while the load is on; "after" once the clients went (after
2 s, and again once idle Redis connections have been closed: ``service/store/pool.py``, 30 s).

    python bench/abuse.py [--feeds 1000] [--requests 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp

from service.domain.weblinks import issue_link
from tests.faults.redis_server import RedisServer
from tests.security.deployment import PLATFORM, TOKEN_SECRET, Deployment
from tests.security.sse import Feed, open_feed

PORTS = range(7150, 7154)  # this helper's range: redis, web, webhook, operations


class Probe:
    """Samples the three figures of the deployment ``d``."""

    def __init__(self, d: Deployment, http: aiohttp.ClientSession) -> None:
        self.d, self.http = d, http

    async def clients(self) -> int:
        return int((await self.d.redis.info("clients"))["connected_clients"]) - 1

    async def feeds(self) -> int:
        async with self.http.get(f"http://127.0.0.1:{self.d.http_port}/metrics") as r:
            text = await r.text()
        m = re.search(r"^cinq_web_feeds\S* ([0-9.e+]+)$", text, flags=re.M)
        return int(float(m.group(1))) if m else -1

    def rss_mb(self) -> float:
        assert self.d.proc is not None
        status = Path(f"/proc/{self.d.proc.pid}/status").read_text()
        kb = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        return kb / 1024

    async def now(self) -> tuple[int, int, float]:
        return await self.clients(), await self.feeds(), self.rss_mb()


async def _peak(probe: Probe, work: Any) -> tuple[Any, tuple[int, int, float]]:
    """Run ``work`` while sampling; its result and the peak of each figure."""
    peak = [0, 0, 0.0]
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            c, f, m = await probe.now()
            peak[0], peak[1], peak[2] = max(peak[0], c), max(peak[1], f), max(peak[2], m)
            await asyncio.sleep(0.02)

    sampler = asyncio.create_task(sample())
    try:
        result = await work
    finally:
        done.set()
        await sampler
    return result, (peak[0], peak[1], peak[2])


def _row(label: str, fig: tuple[int, int, float]) -> str:
    return f"  {label:<34} redis clients {fig[0]:>5}   feeds {fig[1]:>5}   RSS {fig[2]:7.1f} MB"


async def main(n_feeds: int, n_requests: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="cinq-abuse-"))
    d = Deployment(tmp)
    d.redis_server = RedisServer(tmp / "redis", port=PORTS[0])
    d.web_port, d.webhook_port, d.http_port = PORTS[1], PORTS[2], PORTS[3]
    await d.start()
    out: list[str] = []
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            probe = Probe(d, http)
            await d.say("ana", "/play cinquillo")
            hands = await d.platform.wait_for(
                lambda: [m for m in d.platform.to_user("ana") if m["kind"] == "hand"], 60)
            table = hands[-1]["table"]
            await asyncio.sleep(2.0)
            out.append(_row("baseline", await probe.now()))

            links = [issue_link(TOKEN_SECRET.encode(), table=table, expires=time.time() + 3600,
                                platform=PLATFORM, user=f"idle{i}") for i in range(n_feeds)]

            async def open_all() -> list[Feed]:
                sem = asyncio.Semaphore(100)

                async def one(k: str) -> Feed:
                    async with sem:
                        return await open_feed(d.web_port, k, timeout=120)
                return list(await asyncio.gather(*(one(k) for k in links)))

            feeds, peak = await _peak(probe, open_all())
            opened = sum(1 for f in feeds if f.status == 200)
            await asyncio.sleep(1.0)
            out.append(_row(f"{n_feeds} idle feeds open ({opened} 200)", await probe.now()))
            out.append(_row("  peak while opening", peak))
            for f in feeds:
                f.drop()
            await asyncio.sleep(2.0)
            out.append(_row("2 s after they went", await probe.now()))

            async def flood(url: str) -> dict[int, int]:
                async def one() -> int:
                    try:
                        async with http.get(url) as r:
                            await r.read()
                            return r.status
                    except aiohttp.ClientError:
                        return 0
                statuses = await asyncio.gather(*(one() for _ in range(n_requests)))
                return {s: statuses.count(s) for s in sorted(set(statuses))}

            got, peak = await _peak(probe, flood(f"http://127.0.0.1:{d.http_port}/readyz"))
            out.append(_row(f"{n_requests} concurrent /readyz, peak", peak) + f"   answers {got}")
            await asyncio.sleep(2.0)
            out.append(_row("2 s after", await probe.now()))
            got, peak = await _peak(probe, flood(f"{d.web}/api/replay/nosuchtable"))
            out.append(_row(f"{n_requests} concurrent /api/replay/x, peak", peak) + f"   answers {got}")
            await asyncio.sleep(2.0)
            out.append(_row("2 s after", await probe.now()))
            await asyncio.sleep(33.0)
            out.append(_row("35 s after (idle connections closed)", await probe.now()))
    finally:
        await d.close()
    load = os.getloadavg()[0]
    print(f"web process under abuse (cinq serve + redis-server on loopback; load average {load:.1f})")
    print("\n".join(out))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--feeds", type=int, default=1000)
    p.add_argument("--requests", type=int, default=1000)
    a = p.parse_args()
    asyncio.run(main(a.feeds, a.requests))

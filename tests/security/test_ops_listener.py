"""The stranger at the public ports (issue 32 #5 and #8, operations surfaces), on a real deployment:
``cinq serve`` with the web table, the webhook adapter and the Telegram bot (polling a fake Bot API),
configured as an operator would, leaving every host setting at its default.

- ``/readyz`` and ``/metrics`` answer 404 on every public port (web, webhook, Telegram): they are on
  the operations listener alone, whose ``/metrics`` has every role's metrics;
- the operations listener and the Telegram role bind 127.0.0.1 by default (read from the kernel's
  table of listening sockets, not from the configuration);
- a flood of ``/readyz`` costs Redis at most one write a second and no new connection.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import aiohttp
import redis.asyncio as aioredis

from service.ops.health import READY_CACHE_S
from tests.adapters.telegram.fake_api import FakeTelegram
from tests.security.deployment import deployed
from tools.loopback import free_port

TELEGRAM_TOKEN = "4242:AAbbCCddEEffGGhhIIjjKKllMMnn-ops"


def listening(port: int) -> set[str]:
    """The addresses a TCP socket listens on at ``port`` (the kernel's tables: /proc/net/tcp, tcp6)."""
    found = set()
    for path, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            lines = Path(path).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, state = fields[1], fields[3]
            ip_hex, port_hex = address.split(":")
            if state != "0A" or int(port_hex, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(ip_hex)
            # each 32-bit word is in the host's (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            found.add(socket.inet_ntop(family, raw))
    return found


async def _status(http: aiohttp.ClientSession, url: str) -> int:
    async with http.get(url) as r:
        await r.read()
        return r.status


async def test_health_and_metrics_are_off_the_public_ports_and_on_loopback(tmp_path):
    fake = FakeTelegram()
    await fake.start()
    telegram_port = free_port()
    env = {"CINQ_TELEGRAM_TOKEN": TELEGRAM_TOKEN, "CINQ_TELEGRAM_API_URL": fake.url,
           "CINQ_TELEGRAM_PORT": str(telegram_port), "CINQ_TELEGRAM_POLLING_TIMEOUT": "1",
           # the defaults under test: no host given to the operations listener or to Telegram
           "CINQ_HTTP_HOST": None, "CINQ_TELEGRAM_HOST": None}
    try:
        async with deployed(tmp_path, env) as d:
            ops = f"http://127.0.0.1:{d.http_port}"
            telegram = f"http://127.0.0.1:{telegram_port}"
            assert d.http is not None
            deadline = time.monotonic() + 120
            while await _status(d.http, f"{ops}/readyz") != 200:  # the bot polls, the loops run
                assert time.monotonic() < deadline, d.log()[-2000:]
                await asyncio.sleep(0.2)
            for public in (d.web, d.webhook, telegram):
                assert await _status(d.http, f"{public}/healthz") == 200, public
                for path in ("/readyz", "/metrics"):
                    assert await _status(d.http, f"{public}{path}") == 404, public + path
            async with d.http.get(f"{ops}/metrics") as r:
                assert r.status == 200
                metrics = await r.text()
            # every role's part, in one exposition (the worker, the web table, the webhook, the bot)
            for name in ("cinq_commands_total", "cinq_web_feeds", "cinq_webhook_requests",
                         "cinq_telegram_api_calls_total"):
                assert name in metrics, name
            assert metrics.count("# TYPE cinq_deliveries_total ") <= 1  # one family, merged
            # bound to loopback by default, as the kernel has it
            assert listening(d.http_port) == {"127.0.0.1"}
            assert listening(telegram_port) == {"127.0.0.1"}
            assert listening(d.web_port) == {"127.0.0.1"} and listening(d.webhook_port) == {"127.0.0.1"}
    finally:
        await fake.stop()


async def test_a_flood_of_readiness_checks_costs_one_write_a_second_and_no_connection(tmp_path):
    async with deployed(tmp_path) as d:
        ops = f"http://127.0.0.1:{d.http_port}"
        assert d.http is not None
        assert await _status(d.http, f"{ops}/readyz") == 200
        await asyncio.sleep(READY_CACHE_S + 0.1)  # that result is stale by the flood
        # count the probe's writes: Redis tells of every SET on the key (keyspace notifications)
        await d.redis.config_set("notify-keyspace-events", "K$")
        watcher = aioredis.from_url(d.redis_server.url)
        pubsub = watcher.pubsub()
        await pubsub.subscribe("__keyspace@0__:probe:worker")
        await pubsub.get_message(timeout=1)  # the subscription's confirmation
        clients_before = (await d.redis.info("clients"))["connected_clients"]
        started = time.monotonic()
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            answers = await asyncio.gather(*(_status(http, f"{ops}/readyz") for _ in range(1000)))
            clients_during = (await d.redis.info("clients"))["connected_clients"]
        took = time.monotonic() - started
        writes = 0
        while await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5) is not None:
            writes += 1
        await pubsub.aclose()
        await watcher.aclose()
        assert answers.count(200) == 1000
        # one write per second at most (and the first); before: one write per request
        assert 1 <= writes <= int(took) + 2, (writes, took)
        assert clients_during <= clients_before + 1, (clients_before, clients_during)
        print(f"1000 concurrent /readyz in {took:.1f} s: {writes} probe writes, "
              f"Redis clients {clients_before} -> {clients_during}")

"""Graceful shutdown of the webhook role (issue 8): on SIGTERM, ``python -m adapters.webhook`` stops
taking input at once, finishes the delivery in hand, leaves nothing unacknowledged, and exits 0."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import aiohttp
import redis.asyncio as aioredis
from aiohttp import web

from service.domain.identities import Room
from service.platform.outbox import Message, Recipient
from service.store.keys import Keys
from tests.adapters.webhook.support import PLATFORM, SECRETS, FakePlatform
from tools.loopback import free_port, refuses_connections


async def test_sigterm_stops_input_then_finishes_the_delivery_in_hand(real_redis_url):
    prefix = f"whstop{os.getpid()}:"
    keys = Keys(16, 2, prefix)
    slow_started = asyncio.Event()

    async def slow(attempt: int, body: dict) -> web.StreamResponse | None:
        slow_started.set()
        await asyncio.sleep(1.5)  # the delivery in hand when SIGTERM arrives
        return None

    platform = FakePlatform(responder=slow)
    url = await platform.start()
    port, ops_port = free_port(), free_port()
    env = {**os.environ, "REDIS_URL": real_redis_url, "CINQ_HTTP_PORT": str(ops_port),
           "CINQ_KEY_PREFIX": prefix, "CINQ_BUCKETS": "16",
           "CINQ_COMMAND_SHARDS": "2", "CINQ_WEBHOOK_PORT": str(port), "CINQ_LOG_LEVEL": "WARNING",
           "CINQ_TOKEN_SECRETS": '["a-test-secret-for-shutdown-0123456789ab"]',
           "CINQ_WEBHOOK_PLATFORMS": json.dumps([{"name": PLATFORM, "secrets": SECRETS,
                                                  "callback_url": url}])}
    proc = subprocess.Popen([sys.executable, "-m", "adapters.webhook"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    r = aioredis.from_url(real_redis_url)
    try:
        async with aiohttp.ClientSession() as s:
            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None, proc.stderr.read().decode()[-1000:]  # type: ignore[union-attr]
                try:
                    async with s.get(f"http://127.0.0.1:{ops_port}/readyz") as resp:
                        if resp.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    pass
                assert time.monotonic() < deadline, "the webhook role did not start"
                await asyncio.sleep(0.1)
        m = Message(id="c1-t1:0", table="t1", version=1, locale="en", kind="table", text="hello",
                    to=Recipient(room=Room(platform=PLATFORM, chat="g1", kind="group")))
        stream = keys.outbox_for("t1")
        await r.xadd(stream, {"c": m.id, "m": m.dumps()})
        await asyncio.wait_for(slow_started.wait(), 30)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        # Input stops at once: the port refuses connections while the delivery is still in hand.
        while not await refuses_connections(port):
            assert time.monotonic() - t0 < 1.0, "still taking input after SIGTERM"
            await asyncio.sleep(0.02)
        assert not platform.received
        rc = await asyncio.get_running_loop().run_in_executor(None, lambda: proc.wait(timeout=20))
        assert rc == 0, proc.stderr.read().decode()[-1000:]  # type: ignore[union-attr]
        # The delivery in hand was finished, and acknowledged: nothing is left pending.
        assert [x["id"] for x in platform.received] == [m.id]
        pending = await r.xpending(stream, f"deliver:{PLATFORM}")
        assert pending["pending"] == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        async for k in r.scan_iter(match=f"{prefix}*"):
            await r.delete(k)
        await r.aclose()
        await platform.close()

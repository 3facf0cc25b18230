"""The bot receiving updates for real: long polling the fake server's getUpdates, and a webhook the fake
server POSTs to over loopback (a press answered in the HTTP response).  And the role's readiness,
over real HTTP: Redis, the delivery loop, updates coming in, Bot API calls not failing for long."""

from __future__ import annotations

import asyncio
import random
import time

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from service.ops.health import Ops
from tests.adapters.telegram.support import World, person, play_out

EVA = person(81, "Eva", "en")


def _over(w: World, chat: int):
    return lambda: any(m.text.startswith("🏁") for m in w.fake.chat_messages(chat))


@pytest.mark.parametrize("transport", ["polling", "webhook"])
async def test_a_private_match_over_a_real_transport(fake_redis, transport):
    async with World(fake_redis, transport=transport) as w:
        await w.say(EVA, "/play 535 players=2 hand_size=4 target=6")
        await w.quiet()
        presses = await play_out(w, [EVA], random.Random(6), over=_over(w, EVA.id))
        methods = [c.method for c in w.fake.calls]
        answered = [a for a in w.fake.answers.values() if a.get("text", "").startswith("✓")]
        assert len(answered) == presses > 0
        if transport == "polling":
            # Each press answered with a call; the updates came through getUpdates.
            assert methods.count("answerCallbackQuery") == presses and "getUpdates" in methods
            assert w.fake.webhook_replies == []
        else:
            # The answers travelled in the webhook's HTTP responses: no call at all.
            assert "answerCallbackQuery" not in methods and "getUpdates" not in methods
            assert len(w.fake.webhook_replies) == presses and w.fake.webhook_set


def _ops(w: World, redis: object = None) -> Ops:
    """The process's operations listener with the bot's part, as `cinq telegram` runs it."""
    ops = Ops(redis or w.tg.redis, w.tg.gateway.keys.probe)
    ops.add(w.tg.metrics, w.tg.health.problem)
    return ops


async def _ready(w: World) -> tuple[int, dict]:
    async with TestClient(TestServer(_ops(w).app())) as client:  # loopback HTTP
        resp = await client.get("/readyz")
        return resp.status, await resp.json()


async def _until(w: World, status: int, timeout: float = 10.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        got, body = await _ready(w)
        if got == status:
            return body
        assert time.monotonic() < deadline, (got, body)
        await asyncio.sleep(0.05)


async def test_readiness_follows_the_bot_api_and_the_delivery_loop_over_http(fake_redis):
    async with World(fake_redis, transport="polling") as w:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{w.tg.port}/healthz") as resp:
                assert resp.status == 200
            for path in ("/readyz", "/metrics"):  # on the operations listener only (issue 32)
                async with http.get(f"http://127.0.0.1:{w.tg.port}{path}") as resp:
                    assert resp.status == 404
        async with TestClient(TestServer(_ops(w).app())) as client:
            text = await (await client.get("/metrics")).text()
            assert 'cinq_telegram_api_calls_total{method="getMe",outcome="ok"} 1.0' in text
        assert await _ready(w) == (200, {"status": "ready"})
        # (the "/" menu is set a moment after start-up: done before Telegram goes down, so that the
        # call found failing is the long poll's)
        for _ in range(1000):
            if len(w.fake.commands) == 4:
                break
            await asyncio.sleep(0.02)
        # Telegram stops answering: not ready once the calls have failed for long enough.
        w.tg.health.failing_for_s = 0.3
        w.fake.down = True
        body = await _until(w, 503)
        assert "Bot API calls failing" in body["error"] and "getUpdates" in body["error"]
        w.fake.down = False
        await _until(w, 200)
        # The delivery loop dies: not ready.
        w.tg.health.delivery.cancel()
        body = await _until(w, 503)
        assert "delivery" in body["error"]


async def test_in_webhook_mode_ready_means_the_webhook_is_set(fake_redis):
    async with World(fake_redis, transport="webhook") as w:
        assert w.fake.webhook_set and await _ready(w) == (200, {"status": "ready"})
        w.tg.health.receiving = None  # as before setWebhook answered (a failure stops the process)
        body = await _until(w, 503)
        assert "not receiving updates" in body["error"]


async def test_not_ready_when_redis_does_not_answer(fake_redis):
    async with World(fake_redis, transport="polling") as w, \
            TestClient(TestServer(_ops(w, _DownRedis()).app())) as client:  # loopback HTTP
        resp = await client.get("/readyz")
        assert resp.status == 503 and "refused" in (await resp.json())["error"]
        assert (await client.get("/healthz")).status == 200


class _DownRedis:
    async def ping(self) -> None:
        raise ConnectionError("connection refused")

    async def set(self, *args: object, **kwargs: object) -> None:
        raise ConnectionError("connection refused")


async def test_not_ready_while_redis_answers_but_refuses_writes(own_redis):
    async with World(own_redis, transport="polling") as w:
        await _until(w, 200)
        await own_redis.config_set("maxmemory", 1)  # every write refused: OOM
        try:
            assert await own_redis.ping()
            body = await _until(w, 503)
            assert "OutOfMemoryError" in body["error"] and "maxmemory" in body["error"]
        finally:
            await own_redis.config_set("maxmemory", 0)
        await _until(w, 200)

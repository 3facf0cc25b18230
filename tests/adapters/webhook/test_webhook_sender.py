"""Outbound callbacks through real HTTP: signatures, retries (500, timeout, 429 + Retry-After), dead
letters and their replay (also from the command line)."""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate
from typing import Any

import pytest
from aiohttp import web

from adapters.webhook.sender import retry_after
from service.platform.delivery import Delivery
from service.store.keys import Keys
from tests.adapters.webhook.support import (
    PLATFORM,
    WRONG_SECRET,
    FakePlatform,
    Harness,
    event,
    fast_options,
)
from tests.polling import eventually
from tests.service.support import SECRET


async def _run(redis: Any, responder: Any, *, secrets: list[str] | None = None, **opts: Any) -> Any:
    platform = FakePlatform(secrets=secrets, responder=responder)
    await platform.start()
    h = await Harness(redis, platform.url, options=fast_options(**opts), ws={"timeout_s": 0.3}).start()
    return platform, h


async def _help(h: Harness, chat: str = "g1") -> None:
    status, _, _ = await h.client.post(event("/help", user="u1", chat=chat))
    assert status == 202


def _count(h: Harness, name: str, **labels: str) -> float:
    value = h.adapter.metrics.registry.get_sample_value(name, {"platform": PLATFORM, **labels})
    return value or 0.0


async def test_a_500_is_retried_then_delivered(fake_redis):
    async def responder(n: int, _: Any) -> Any:
        return web.Response(status=500) if n == 1 else None

    platform, h = await _run(fake_redis, responder)
    try:
        await _help(h)
        got = await platform.wait_for(lambda: platform.received)
        assert got[0]["kind"] == "reply" and "/join" in got[0]["text"]
        assert len(platform.attempts) == 2 and platform.bad_signatures == 0
        assert platform.attempts[0][1]["id"] == platform.attempts[1][1]["id"], "the same idempotency id"
        assert _count(h, "cinq_delivery_retries_total") == 1
        await eventually(lambda: _count(h, "cinq_deliveries_total", outcome="delivered") == 1)
    finally:
        await h.close()
        await platform.close()


async def test_a_receiver_that_times_out_is_retried(fake_redis):
    async def responder(n: int, _: Any) -> Any:
        if n == 1:
            await asyncio.sleep(1.0)  # longer than the sender's 0.3 s timeout
        return None

    platform, h = await _run(fake_redis, responder)
    try:
        await _help(h)
        await platform.wait_for(lambda: platform.received)
        assert len(platform.attempts) >= 2 and len(platform.received) == 1
    finally:
        await h.close()
        await platform.close()


async def test_a_429_is_retried_after_its_retry_after(fake_redis):
    async def responder(n: int, _: Any) -> Any:
        return web.Response(status=429, headers={"Retry-After": "1"}) if n == 1 else None

    platform, h = await _run(fake_redis, responder)
    try:
        await _help(h)
        await platform.wait_for(lambda: platform.received)
        (t1, _), (t2, _) = platform.attempts
        assert t2 - t1 >= 0.95, "Retry-After was not honoured"
    finally:
        await h.close()
        await platform.close()


async def test_order_per_chat_is_kept_through_retries(fake_redis):
    """A chat whose first message fails waits for it: its second message is not delivered first."""
    failed: set[str] = set()

    async def responder(_: int, msg: Any) -> Any:
        if msg["to"]["chat"]["id"] == "g1" and msg["id"] not in failed:
            failed.add(msg["id"])
            return web.Response(status=503)
        return None

    platform, h = await _run(fake_redis, responder, backoff_base_s=0.05)
    try:
        await _help(h, "g1")
        await _help(h, "g1")
        await _help(h, "g2")
        await platform.wait_for(lambda: len(platform.received) == 3)
        g1 = [m["id"] for m in platform.to_chat("g1")]
        outbox = [m.id for m in await h.outbox() if m.to.room and m.to.room.chat == "g1"]
        assert g1 == outbox
        assert platform.received[0]["to"]["chat"]["id"] == "g2", "another chat was not held up"
    finally:
        await h.close()
        await platform.close()


async def test_the_last_failure_goes_to_the_dead_letters_and_replay_delivers_it(any_redis):
    down = True

    async def responder(_: int, __: Any) -> Any:
        return web.Response(status=502) if down else None

    platform, h = await _run(any_redis, responder, max_attempts=3)
    try:
        await _help(h)
        d = Delivery(any_redis, h.settings, PLATFORM, keys=Keys.of(h.settings))
        letters = await eventually(d.dead_letters)
        assert len(letters) == 1
        assert len(platform.attempts) == 3 and not platform.received
        assert "HTTP 502" in letters[0].error and letters[0].attempts == 3
        assert letters[0].message is not None and letters[0].message.kind == "reply"
        assert _count(h, "cinq_delivery_dead_letters_total") == 1
        down = False
        assert await d.replay([letters[0].id]) == 1
        got = await platform.wait_for(lambda: platform.received)
        assert got[0]["id"] == letters[0].message.id
        assert await d.dead_letters() == []
    finally:
        await h.close()
        await platform.close()


async def test_a_4xx_is_not_retried(fake_redis):
    async def responder(_: int, __: Any) -> Any:
        return web.Response(status=400)

    platform, h = await _run(fake_redis, responder)
    try:
        await _help(h)
        d = Delivery(fake_redis, h.settings, PLATFORM, keys=Keys.of(h.settings))
        await eventually(d.dead_letters)
        [letter] = await d.dead_letters()
        assert letter.attempts == 1 and "HTTP 400" in letter.error and len(platform.attempts) == 1
    finally:
        await h.close()
        await platform.close()


async def test_the_platform_refuses_callbacks_signed_with_another_secret(fake_redis):
    """The fake platform's check can fail: with a secret it does not share, nothing is accepted."""
    platform, h = await _run(fake_redis, None, secrets=[WRONG_SECRET])
    try:
        await _help(h)
        d = Delivery(fake_redis, h.settings, PLATFORM, keys=Keys.of(h.settings))
        await eventually(d.dead_letters)
        assert platform.bad_signatures == 1 and not platform.received
        [letter] = await d.dead_letters()
        assert "HTTP 401" in letter.error
    finally:
        await h.close()
        await platform.close()


def test_retry_after_reads_seconds_and_dates():
    now = time.time()
    assert retry_after("7", now) == 7
    assert retry_after(None, now) is None and retry_after("soon", now) is None
    assert 9 <= retry_after(formatdate(now + 10, usegmt=True), now) <= 10  # type: ignore[operator]
    assert retry_after(formatdate(now - 10, usegmt=True), now) == 0


@pytest.fixture
def env(real_redis_url, monkeypatch):
    monkeypatch.setenv("REDIS_URL", real_redis_url)
    monkeypatch.setenv("CINQ_TOKEN_SECRETS", f'["{SECRET.decode()}"]')
    monkeypatch.setenv("CINQ_BUCKETS", "16")
    monkeypatch.setenv("CINQ_WEBHOOK_PLATFORMS",
                       '[{"name": "acme", "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], '
                       '"callback_url": "http://127.0.0.1:9/cinq"}]')
    return real_redis_url


def test_the_command_line_lists_and_replays_dead_letters(env, capsys):
    """``cinq webhook dead-letters``: the service's command line hands it to the adapter."""
    import redis as sync_redis

    from service.domain.identities import Room
    from service.ops.cli import main as cinq
    from service.platform.delivery import DeliveryKeys
    from service.platform.outbox import Message, Recipient
    from service.store.keys import Keys

    r = sync_redis.Redis.from_url(env)
    r.flushdb()
    dk = DeliveryKeys(Keys(16, 4, ""), PLATFORM)
    msg = Message(id="c1:0", table="tab1", version=3, to=Recipient(room=Room(platform=PLATFORM, chat="g1")),
                  locale="en", kind="table", text="hello")
    dead_id = r.xadd(dk.dead, {"m": msg.dumps(), "stream": "out:{1}", "entry": "1-0", "error": "HTTP 500",
                               "attempts": 8, "at": time.time()}).decode()
    assert cinq(["webhook", "dead-letters"]) == 0
    listing = capsys.readouterr().out
    assert "acme: 1 dead letters" in listing and dead_id in listing and "c1:0" in listing
    assert cinq(["webhook", "dead-letters", "--replay", dead_id]) == 0
    assert "acme: 1 replayed" in capsys.readouterr().out
    assert r.xlen(dk.dead) == 0 and r.xlen(dk.replay) == 1
    r.flushdb()
    r.close()

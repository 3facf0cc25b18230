"""The entry point under ``cinq serve``: idle without platforms; with one, it serves until cancelled."""

from __future__ import annotations

import asyncio
import json
from importlib.metadata import entry_points

import aiohttp
import pytest

from service.ops.runtime import build
from tests.adapters.webhook.support import PLATFORM, SECRETS, settings
from tools.loopback import free_port


def _webhook():
    [adapter] = [ep.load() for ep in entry_points(group="cinq.adapters") if ep.name == "webhook"]
    return adapter.serve


async def test_without_a_platform_the_adapter_is_idle(fake_redis, monkeypatch):
    monkeypatch.delenv("CINQ_WEBHOOK_PLATFORMS", raising=False)
    rt = build(settings(), redis=fake_redis)  # the runtime `cinq serve` hands its adapters
    await asyncio.wait_for(_webhook()(rt), 5)  # returns at once


async def test_under_serve_it_answers_until_cancelled(fake_redis, monkeypatch):
    port = free_port()
    monkeypatch.setenv("CINQ_WEBHOOK_PORT", str(port))
    monkeypatch.setenv("CINQ_WEBHOOK_PLATFORMS", json.dumps(
        [{"name": PLATFORM, "secrets": SECRETS, "callback_url": "http://127.0.0.1:9/"}]))
    rt = build(settings(), redis=fake_redis)  # the runtime `cinq serve` hands its adapters
    task = asyncio.create_task(_webhook()(rt))
    try:
        async with aiohttp.ClientSession() as s:
            for _ in range(100):
                try:
                    async with s.get(f"http://127.0.0.1:{port}/healthz") as r:
                        assert r.status == 200
                        break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            else:
                pytest.fail("the adapter did not come up")
            async with s.get(f"http://127.0.0.1:{port}/readyz") as r:
                assert r.status == 404  # on the process's operations listener, not the public port
        # its part of the process's operations listener (started by `cinq serve`): its metrics
        assert b"cinq_webhook_requests" in rt.ops.exposition()
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.ClientConnectionError):
            await s.get(f"http://127.0.0.1:{port}/healthz")

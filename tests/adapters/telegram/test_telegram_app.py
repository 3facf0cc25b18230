"""The two ways the bot receives updates: polling (no public URL) and webhook (with the secret)."""

from __future__ import annotations

import asyncio
import contextlib

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from adapters.telegram.app import build
from adapters.telegram.config import TelegramSettings
from service.store.keys import Keys
from service.write.gateway import Gateway
from tests.adapters.telegram.fake_api import FakeTelegram
from tests.adapters.telegram.support import FAST, TOKEN, settings


async def _run_briefly(fake_redis, tg: TelegramSettings) -> FakeTelegram:
    fake = FakeTelegram()
    await fake.start()
    bot = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(fake.url)))
    s = settings()
    app = await build(fake_redis, s, tg, Gateway(fake_redis, s, Keys.of(s)), bot=bot, limits=FAST)
    task = asyncio.create_task(app.run())
    for _ in range(200):
        if any(c.method in ("getUpdates", "setWebhook") for c in fake.calls):
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert app.health.receiving is None and app.health.delivery.done()  # everything stopped
    calls = len(fake.calls)
    await asyncio.sleep(0.3)
    assert len(fake.calls) == calls  # no polling left behind
    await bot.session.close()
    await fake.stop()
    return fake


async def test_without_a_public_url_the_bot_polls(fake_redis):
    tg = TelegramSettings(token=TOKEN, host="127.0.0.1", port=0, polling_timeout=0)
    fake = await _run_briefly(fake_redis, tg)
    methods = [c.method for c in fake.calls]
    assert "deleteWebhook" in methods and "getUpdates" in methods and "setWebhook" not in methods


async def test_with_a_public_url_the_bot_registers_its_webhook_with_the_secret(fake_redis):
    tg = TelegramSettings(token=TOKEN, public_url="https://bot.example/", webhook_secret="k3y",
                          host="127.0.0.1", port=0)
    fake = await _run_briefly(fake_redis, tg)
    [hook] = [c for c in fake.calls if c.method == "setWebhook"]
    assert hook.params["url"] == "https://bot.example/telegram/webhook"
    assert hook.params["secret_token"] == "k3y"
    assert "getUpdates" not in [c.method for c in fake.calls]

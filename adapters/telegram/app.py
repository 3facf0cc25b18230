"""Wiring of the Telegram bot: the Bot, the Dispatcher and its routers, the sender and the consumer.

:func:`build` makes a :class:`TelegramBot` from a Redis client and the settings; :meth:`TelegramBot.run`
delivers the outbox and receives updates by long polling (no public URL) or by webhook (aiohttp,
with the secret token header checked) until it is cancelled.  Nothing about a game is kept here:
every piece of state is in Redis, so a new process carries on where the last one stopped.

The process serves ``/healthz``, ``/readyz`` and ``/metrics`` (:mod:`service.health`) on the webhook's
host and port, in both modes: ready means Redis answers, the delivery loop runs, updates come in
(the webhook was set, or polling started) and Bot API calls have not been failing for a minute
(:mod:`adapters.telegram.health`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web

from adapters.telegram.config import Limits, TelegramSettings
from adapters.telegram.consumer import OutboxHandler
from adapters.telegram.handlers import routers
from adapters.telegram.handlers.people import RoomOf
from adapters.telegram.health import ApiWatch, BotHealth, TelegramMetrics
from adapters.telegram.presses import Presses
from adapters.telegram.render import PLATFORM
from adapters.telegram.sender import Sender
from service import logs
from service.delivery import Delivery, DeliveryOptions
from service.gateway import Gateway
from service.health import add_routes
from service.platform_state import PlatformState
from service.settings import Settings

# How long a stopping bot waits for the deliveries in hand.
CLOSE_WAIT_S = 5.0


def make_bot(tg: TelegramSettings) -> Bot:
    """A Bot for the token, on the official Bot API or on ``api_url``."""
    if not tg.token:
        raise ValueError("CINQ_TELEGRAM_TOKEN is not set")
    session = AiohttpSession(api=TelegramAPIServer.from_base(tg.api_url)) if tg.api_url else None
    return Bot(tg.token, session=session)


@dataclass
class TelegramBot:
    """One bot process: its Bot, Dispatcher, sender and outbox consumer."""

    bot: Bot
    dispatcher: Dispatcher
    sender: Sender
    handler: OutboxHandler
    delivery: Delivery
    gateway: Gateway
    state: PlatformState
    tg: TelegramSettings
    health: BotHealth
    metrics: TelegramMetrics
    redis: Any = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    port: int | None = None  # the port the HTTP server listens on, once it does

    def http_app(self) -> web.Application:
        """The role's HTTP app: the webhook (webhook mode) and health, readiness and metrics."""
        app = self.webhook_app() if self.tg.public_url else web.Application()
        return add_routes(app, self.redis, self.metrics, ready=self.health.problem)

    async def deliver(self) -> None:
        """Deliver outbox messages until :attr:`stop` is set (the slots left dirty by a restart first)."""
        await self.handler.recover()
        await self.delivery.run(self.handler, self.stop)

    def webhook_app(self) -> web.Application:
        """The aiohttp app of webhook mode: updates without the right secret header get 401.

        Updates are handled before the response, so that a button's answer travels back in it
        (no Bot API call): a handler only parses and hands on, which takes milliseconds.
        """
        app = web.Application()
        SimpleRequestHandler(dispatcher=self.dispatcher, bot=self.bot, handle_in_background=False,
                             secret_token=self.tg.webhook_secret).register(app, path=self.tg.webhook_path)
        setup_application(app, self.dispatcher, bot=self.bot)
        return app

    async def run(self) -> None:
        """Receive updates (polling, or webhook when a public URL is set) and deliver the outbox."""
        log = logs.get("telegram")
        delivery = asyncio.create_task(self.deliver())
        self.health.delivery = delivery
        runner: web.AppRunner | None = None
        try:
            if self.tg.http:
                runner = web.AppRunner(self.http_app())
                await runner.setup()
                site = web.TCPSite(runner, self.tg.host, self.tg.port)
                await site.start()
                server = getattr(site, "_server", None)
                self.port = server.sockets[0].getsockname()[1] if server and server.sockets else self.tg.port
            if self.tg.public_url:
                url = self.tg.public_url.rstrip("/") + self.tg.webhook_path
                await self.bot.set_webhook(url, secret_token=self.tg.webhook_secret,
                                           allowed_updates=self.dispatcher.resolve_used_update_types())
                self.health.receiving = "webhook"
                log.info("webhook", url=url)
                await asyncio.Event().wait()
            else:
                await self.bot.delete_webhook()
                self.health.receiving = "polling"
                log.info("polling")
                await self._poll()
        finally:
            self.health.receiving = None
            await self.close(delivery)
            if runner is not None:
                await runner.cleanup()
            await self.bot.session.close()

    async def _poll(self) -> None:
        """Long polling until cancelled.  aiogram's polling runs in tasks of its own that cancelling
        ``start_polling`` would leave running: a cancellation stops them with ``stop_polling``."""
        polling = asyncio.create_task(self.dispatcher.start_polling(
            self.bot, handle_signals=False, close_bot_session=False, polling_timeout=self.tg.polling_timeout,
            allowed_updates=self.dispatcher.resolve_used_update_types()))
        try:
            await asyncio.shield(polling)
        finally:
            if not polling.done():
                with contextlib.suppress(RuntimeError):
                    await self.dispatcher.stop_polling()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await polling

    async def close(self, delivery: asyncio.Task[None] | None = None) -> None:
        """Stop delivering; what was not sent is redelivered to the next process."""
        self.stop.set()
        if delivery is not None:
            # Let the delivery finish what it has in hand (it releases its partitions), then stop it.
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(delivery), timeout=CLOSE_WAIT_S)
            delivery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await delivery
        await self.sender.close()


async def build(redis: Any, settings: Settings, tg: TelegramSettings, *, bot: Bot | None = None,
                limits: Limits | None = None, clock: Callable[[], float] = time.time,
                delivery_options: DeliveryOptions | None = None) -> TelegramBot:
    """Wire a bot process on ``redis`` (asks Telegram who the bot is, for deep links)."""
    bot = bot or make_bot(tg)
    metrics = TelegramMetrics()
    watch = ApiWatch(metrics)
    bot.session.middleware(watch)
    me = await bot.me()
    username = me.username or ""
    state = PlatformState(redis, settings.key_prefix)
    gateway = Gateway(redis, settings, clock=clock, bot_username=username)
    sender = Sender(bot, state, limits or tg.limits())
    presses = Presses(tg.press_wait_s)
    handler = OutboxHandler(state, sender, bot_username=username, turn_seconds=settings.turn_seconds,
                            clock=clock, presses=presses)
    delivery = Delivery(redis, settings, PLATFORM, tg.consumer, options=delivery_options, clock=clock,
                        metrics=metrics.delivery)
    dp = Dispatcher(gateway=gateway, platform_state=state, sender=sender, secrets=settings.secrets_bytes(),
                    presses=presses, outbox=handler)
    dp.message.outer_middleware(RoomOf())
    dp.callback_query.outer_middleware(RoomOf())
    dp.include_routers(*routers())
    return TelegramBot(bot, dp, sender, handler, delivery, gateway, state, tg, BotHealth(watch), metrics,
                       redis)

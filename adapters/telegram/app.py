"""Wiring of the Telegram bot: the Bot, the Dispatcher and its routers, the sender and the consumer.

:func:`build` makes a :class:`TelegramBot` from a Redis client and the settings; :meth:`TelegramBot.run`
delivers the outbox and receives updates by long polling (no public URL) or by webhook (aiohttp,
with the secret token header checked) until it is cancelled.  Nothing about a game is kept here:
every piece of state is in Redis, so a new process carries on where the last one stopped.

The webhook's host and port (both modes, unless ``CINQ_TELEGRAM_HTTP=false``) serve the webhook and
``/healthz`` alone; ``/readyz`` and ``/metrics`` are on the process's operations listener
(:mod:`service.ops.health`, loopback by default), to which :func:`adapters.telegram.serve` adds the
bot's part: ready means Redis takes a write, the delivery loop runs, updates come in (the webhook
was set, or polling started) and Bot API calls have not been failing for a minute
(:mod:`adapters.telegram.health`).

Stopping (SIGTERM, or the task cancelled by ``cinq serve``) goes in this order, within
:data:`SHUTDOWN_WAIT_S`: input stops first (the HTTP port closes, or polling stops: no new
``getUpdates``), the updates in hand are handled, the deliveries in hand finish, then the per-chat
queues are flushed.  What could not be sent in time stays in Redis for the next process: outbox
entries unacknowledged, edits as dirty slots.
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
from aiogram.types import TelegramObject, Update
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web

from adapters.telegram.commands_menu import register as register_commands
from adapters.telegram.config import Limits, TelegramSettings
from adapters.telegram.consumer import OutboxHandler
from adapters.telegram.content import PLATFORM
from adapters.telegram.handlers import routers
from adapters.telegram.handlers.people import RoomOf
from adapters.telegram.health import ApiWatch, BotHealth, TelegramMetrics
from adapters.telegram.polling import Poller
from adapters.telegram.presses import Presses
from adapters.telegram.sender import Sender
from adapters.telegram.throttle import Throttle
from service.foundation import logs
from service.foundation.settings import Settings
from service.ops.health import add_liveness
from service.platform.delivery import Delivery, DeliveryOptions
from service.platform.inbound import Admission
from service.platform.platform_state import PlatformState
from service.write.gateway import Gateway

# How long a stopping bot may take in all to stop its input and flush what it owes (deliveries in
# hand, queued messages).  Under `cinq serve`'s own bound (service.ops.cli.SHUTDOWN_WAIT_S, 10 s), which
# is itself well under the 30 s an orchestrator waits before SIGKILL.
SHUTDOWN_WAIT_S = 8.0
# Of that, how long the updates already taken in (webhook requests, polled updates) may take.
UPDATES_WAIT_S = 3.0
# The "/" menu is set this long after the bot started receiving: building it (both languages'
# catalogues) took the CPU the first updates wait on (bench/startup.py), and nothing needs it sooner.
MENU_AFTER_S = 1.0


class UpdatesInHand:
    """An outer middleware on every update: which updates this process is handling.

    A stopping bot lets them finish, so that their commands reach the service: when polling, they run
    in tasks of their own that nothing else waits for (the process would exit under them).  (One
    killed before its command was stored is not lost: the poller had not confirmed it to Telegram.)
    """

    def __init__(self) -> None:
        self.in_hand: set[int] = set()

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Any], event: TelegramObject,
                       data: dict[str, Any]) -> Any:
        uid = event.update_id if isinstance(event, Update) else None
        if uid is None:
            return await handler(event, data)
        self.in_hand.add(uid)
        try:
            return await handler(event, data)
        finally:
            self.in_hand.discard(uid)

    async def settle(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until no update is being handled; True if none is."""
        deadline = time.monotonic() + timeout
        while self.in_hand and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return not self.in_hand


class _WebhookHandler(SimpleRequestHandler):
    """aiogram's webhook handler, except that stopping the HTTP server does not close the bot's
    session: the queues still have to be flushed through it after the port closed (a session closed
    under a call in flight would fail it, and a retry could post a message twice)."""

    async def close(self) -> None:
        """Nothing: :meth:`TelegramBot.run` closes the session last."""


def make_bot(tg: TelegramSettings) -> Bot:
    """A Bot for the token, on the official Bot API or on ``api_url``."""
    if not tg.token:
        raise ValueError("CINQ_TELEGRAM_TOKEN is not set")
    session = AiohttpSession(api=TelegramAPIServer.from_base(tg.api_url)) if tg.api_url else None
    return Bot(tg.token.get_secret_value(), session=session)


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
    updates: UpdatesInHand = field(default_factory=UpdatesInHand)
    # How long a stop may take in all.
    shutdown_wait_s: float = SHUTDOWN_WAIT_S
    # False: a stop drops the queues instead of flushing them, as a crash would (the tests' restarts,
    # to check that Redis keeps what the queues held); the deliveries in hand still finish.
    flush_on_stop: bool = True

    def http_app(self) -> web.Application:
        """The role's public HTTP app: the webhook (webhook mode) and liveness; readiness and metrics
        are on the operations listener (:mod:`service.ops.health`)."""
        return add_liveness(self.webhook_app() if self.tg.public_url else web.Application())

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
        _WebhookHandler(dispatcher=self.dispatcher, bot=self.bot, handle_in_background=False,
                        secret_token=self.tg.secret_value()).register(app, path=self.tg.webhook_path)
        setup_application(app, self.dispatcher, bot=self.bot)
        return app

    async def run(self) -> None:
        """Receive updates (polling, or webhook when a public URL is set) and deliver the outbox, until
        cancelled; then stop in order (see the module docstring)."""
        log = logs.get("telegram")
        delivery = asyncio.create_task(self.deliver())
        self.health.delivery = delivery
        menu: asyncio.Task[None] | None = None  # the "/" menu: set once receiving, not waited for
        runner: web.AppRunner | None = None
        try:
            if self.tg.http:
                # Requests in progress when the server stops get UPDATES_WAIT_S (aiohttp's default: 60 s).
                runner = web.AppRunner(self.http_app(), shutdown_timeout=UPDATES_WAIT_S)
                await runner.setup()
                site = web.TCPSite(runner, self.tg.host, self.tg.port)
                await site.start()
                server = getattr(site, "_server", None)
                self.port = server.sockets[0].getsockname()[1] if server and server.sockets else self.tg.port
            if self.tg.public_url:
                url = self.tg.public_url.rstrip("/") + self.tg.webhook_path
                await self.bot.set_webhook(url, secret_token=self.tg.secret_value(),
                                           allowed_updates=self.dispatcher.resolve_used_update_types())
                self.health.receiving = "webhook"
                log.info("webhook", url=url)
                menu = asyncio.create_task(self._menu())
                await asyncio.Event().wait()
            else:
                await self.bot.delete_webhook()
                self.health.receiving = "polling"
                log.info("polling")
                menu = asyncio.create_task(self._menu())
                await self._poll()  # stops polling (no new getUpdates) when cancelled
        finally:
            if menu is not None:
                menu.cancel()
            await self._shutdown(delivery, runner)

    async def _menu(self) -> None:
        """Set the "/" menu, :data:`MENU_AFTER_S` after receiving began."""
        await asyncio.sleep(MENU_AFTER_S)
        await register_commands(self.bot)

    async def _shutdown(self, delivery: asyncio.Task[None], runner: web.AppRunner | None) -> None:
        """Stop taking input, then flush what is owed, within :attr:`shutdown_wait_s`.

        The webhook is left registered: Telegram keeps (and retries) the updates that find the port
        closed, for the next process; deleting it would stop the process that replaces this one.
        """
        log = logs.get("telegram")
        deadline = time.monotonic() + self.shutdown_wait_s
        self.health.receiving = None
        if self.flush_on_stop:
            self.sender.hurry()  # no more merging: whatever is queued now is all there will be
        try:
            # 1. Input.  The port closes at once (webhook and health); requests in progress finish.
            #    The delivery keeps running meanwhile: a press waits for its verdict through it.
            if runner is not None:
                await runner.cleanup()
            left = deadline - time.monotonic()
            if not await self.updates.settle(min(UPDATES_WAIT_S, max(left, 0.0))):
                log.warning("updates_in_hand", updates=sorted(self.updates.in_hand))
            # 2. What is owed: the deliveries in hand, then the queues.
            await self.close(delivery, wait=deadline - time.monotonic())
        finally:
            await self.bot.session.close()
        log.info("stopped", calls=self.sender.calls)

    async def _poll(self) -> None:
        """Long polling until cancelled, confirming an update to Telegram only once its command is
        stored (:mod:`adapters.telegram.polling`).  A cancellation abandons the long poll in progress
        (no update is taken in after that); the handlers in hand go on (see :meth:`_shutdown`)."""
        await Poller(self.bot, self.dispatcher, timeout=self.tg.polling_timeout,
                     allowed_updates=self.dispatcher.resolve_used_update_types()).run()

    async def close(self, delivery: asyncio.Task[None] | None = None, *, wait: float | None = None) -> None:
        """Stop delivering and flush the queues, within ``wait`` seconds (default
        :attr:`shutdown_wait_s`).  Nothing is acknowledged that was not done: a post is acknowledged
        once sent, an edit once recorded in Redis as its slot's wanted content (dirty until it went
        out); what is not done by then is sent by the next process."""
        deadline = time.monotonic() + (self.shutdown_wait_s if wait is None else wait)
        if self.flush_on_stop:
            self.sender.hurry()
        self.stop.set()
        if delivery is not None:
            # The delivery reads nothing more; the messages in hand finish (a post is acknowledged
            # once the queue sent it), and it releases its partitions.
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(delivery), max(deadline - time.monotonic(), 0.0))
            # Past the bound: a message still in hand is not acknowledged; it stays pending for the next
            # process (which claims it under the same consumer name).
            delivery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await delivery
        for countdown in self.handler.countdowns.values():
            countdown.cancel()
        # The edits acknowledged but still queued (and the handlers' own edits): sent now.
        if self.flush_on_stop:
            await self.sender.flush(deadline - time.monotonic())
        await self.sender.close()


async def build(redis: Any, settings: Settings, tg: TelegramSettings, gateway: Gateway, *,
                bot: Bot | None = None, limits: Limits | None = None, clock: Callable[[], float] = time.time,
                delivery_options: DeliveryOptions | None = None) -> TelegramBot:
    """Wire a bot process on ``redis`` (asks Telegram who the bot is, for deep links), on the
    process's ``gateway`` (its runtime's: :func:`service.ops.runtime.build`)."""
    bot = bot or make_bot(tg)
    metrics = TelegramMetrics()
    watch = ApiWatch(metrics)
    bot.session.middleware(watch)
    me = await bot.me()
    username = me.username or ""
    state = PlatformState(redis, gateway.keys)
    gateway.name_bot(PLATFORM, username)
    sender = Sender(bot, state, limits or tg.limits())
    presses = Presses(tg.press_wait_s)
    handler = OutboxHandler(state, sender, bot_username=username, turn_seconds=settings.turn_seconds,
                            clock=clock, presses=presses)
    delivery = Delivery(redis, settings, PLATFORM, tg.consumer, options=delivery_options, clock=clock,
                        metrics=metrics.delivery, keys=gateway.keys)
    dp = Dispatcher(gateway=gateway, platform_state=state, sender=sender, secrets=settings.secrets_bytes(),
                    presses=presses, outbox=handler)
    updates = UpdatesInHand()
    dp.update.outer_middleware(updates)
    # Each person's rate first (the webhook's limiter): an update past it makes no command.
    throttle = Throttle(Admission(redis, gateway.keys, tg.rate, tg.burst), clock)
    dp.message.outer_middleware(throttle)
    dp.callback_query.outer_middleware(throttle)
    dp.message.outer_middleware(RoomOf())
    dp.callback_query.outer_middleware(RoomOf())
    dp.include_routers(*routers())
    return TelegramBot(bot, dp, sender, handler, delivery, gateway, state, tg, BotHealth(watch), metrics,
                       redis, updates=updates)

"""Long polling that confirms an update only once what it asked for is stored.

Telegram forgets every update below the ``offset`` of the next ``getUpdates``: that call *confirms*
them.  aiogram's own polling sends it as soon as it has handed a batch to handler tasks, so a process
killed before a handler wrote its command loses a press (or a ``/play``) that Telegram will never
send again.  :class:`Poller` is a polling loop of this adapter's own, on aiogram's Bot API method
(``GetUpdates``) and dispatcher (``feed_update``): the next ``getUpdates`` waits until every update
of the batch is *settled* — its handler said its commands are stored (:func:`durable`: the gateway
returned, so they are on the replicas a failover could promote when ``CINQ_REDIS_MIN_REPLICAS`` is
set), or it finished.  Handlers go on after :func:`durable` (a press waits a moment for its verdict)
while the next long poll already runs, so a press is not held up by another's.

A handler that failed on the store (a Redis error, :class:`~service.store.replicas.NotReplicated`
included: "not yet") is not confirmed: after a pause the updates from it on are fetched again and
the failed ones handled again, with the same command ids (a second copy of a command is a no-op).
One that failed otherwise (a bug) is logged and confirmed, as aiogram does, so that one bad update
cannot stop the bot for everyone.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.methods import GetUpdates, TelegramMethod
from aiogram.types import Update
from redis.exceptions import RedisError

from service.foundation import logs

# Pauses before fetching again an update whose handler could not store its command (the last
# one repeats): the store is down, failing over, or its replicas are behind.
RETRY_S = (0.2, 0.5, 1.0, 2.0, 5.0)


class Receipt:
    """One update in hand: ``settled`` once it may be confirmed (or must be fetched again: ``failed``)."""

    __slots__ = ("failed", "settled", "update_id")

    def __init__(self, update_id: int) -> None:
        self.update_id = update_id
        self.settled = asyncio.Event()
        self.failed = False


_receipt: ContextVar[Receipt | None] = ContextVar("cinq_telegram_receipt", default=None)


def durable() -> None:
    """Say that the update being handled has stored everything it will: Telegram may forget it now,
    though its handler goes on.  Outside :class:`Poller` (webhook mode: the HTTP answer waits for the
    whole handler) it does nothing."""
    receipt = _receipt.get()
    if receipt is not None:
        receipt.settled.set()


class Poller:
    """The polling loop (see the module docstring); :meth:`run` until cancelled."""

    def __init__(self, bot: Bot, dispatcher: Dispatcher, *, timeout: int, allowed_updates: list[str],
                 retry_s: tuple[float, ...] = RETRY_S) -> None:
        self.bot = bot
        self.dispatcher = dispatcher
        self.timeout = timeout
        self.allowed_updates = allowed_updates
        self.retry_s = retry_s
        self.offset: int | None = None  # the next getUpdates' offset: every update below is confirmed
        self.tasks: set[asyncio.Task[None]] = set()
        # Updates at or above the offset whose handling settled well: fetched again with a failed one,
        # they are not handled twice by this process.
        self._settled: set[int] = set()
        self._failures = 0
        self.log = logs.get("telegram")

    async def run(self) -> None:
        """Poll, handle and confirm until cancelled (a long poll in progress is then abandoned; the
        handlers in hand go on, and what they had not settled is fetched again by the next process)."""
        method = GetUpdates(offset=None, timeout=self.timeout, allowed_updates=self.allowed_updates)
        # The HTTP request must outlive the long poll it carries (aiogram does the same).
        request_timeout = int((self.bot.session.timeout or 0) + self.timeout) or None
        while True:
            method.offset = self.offset
            try:
                updates = await self.bot(method, request_timeout=request_timeout)
            except Exception as e:  # network, Telegram 5xx: poll again, after a pause
                self.log.warning("get_updates_failed", error=f"{type(e).__name__}: {e}")
                await self._pause()
                continue
            receipts = [self._start(u) for u in updates if u.update_id not in self._settled]
            if await self._settle(receipts) and updates:
                # All stored: the next call confirms the batch.
                self.offset = max(u.update_id for u in updates) + 1
                self._settled = {u for u in self._settled if u >= self.offset}

    async def _settle(self, receipts: list[Receipt]) -> bool:
        """Wait until the batch's updates all settled; True if none failed on the store.  Otherwise
        hold the offset at the first that failed (the next call fetches it again) and pause."""
        await asyncio.gather(*(r.settled.wait() for r in receipts))
        failed = [r.update_id for r in receipts if r.failed]
        self._settled.update(r.update_id for r in receipts if not r.failed)
        if not failed:
            self._failures = 0
            return True
        self.offset = min(failed)
        self.log.warning("updates_not_stored", updates=failed, retry_in_s=self._delay())
        await self._pause()
        return False

    def _delay(self) -> float:
        return self.retry_s[min(self._failures, len(self.retry_s) - 1)]

    async def _pause(self) -> None:
        delay = self._delay()
        self._failures += 1
        await asyncio.sleep(delay)

    def _start(self, update: Update) -> Receipt:
        receipt = Receipt(update.update_id)
        task = asyncio.create_task(self._handle(update, receipt))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return receipt

    async def _handle(self, update: Update, receipt: Receipt) -> None:
        _receipt.set(receipt)  # this task's own context: durable() in the handler finds it
        try:
            response: Any = await self.dispatcher.feed_update(self.bot, update)
            if isinstance(response, TelegramMethod):
                # A handler's answer (a press's alert): webhook mode sends it in the HTTP response.
                await self.dispatcher.silent_call_request(self.bot, response)
        except RedisError as e:
            if not receipt.settled.is_set():
                receipt.failed = True
            self.log.warning("update_not_stored", update=update.update_id, error=f"{type(e).__name__}: {e}")
        except Exception as e:  # a bug: logged, and confirmed, as aiogram does
            self.log.error("update_failed", update=update.update_id, error=f"{type(e).__name__}: {e}")
        finally:
            receipt.settled.set()

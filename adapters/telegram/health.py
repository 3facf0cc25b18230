"""Is the bot really working?  What ``/readyz`` of the Telegram role answers, and its metrics.

:class:`ApiWatch` is an aiogram *request middleware*: it sees every Bot API call the process makes
(the sender's, the handlers', ``getUpdates``) and remembers when one last succeeded and since when
they have been failing.  A failure that is about one chat or one message (a 400, a 403, a 429) says
nothing about the bot: only network errors, Telegram's 5xx and a refused token (401/404 on every
method) count.  :class:`BotHealth` turns that, the delivery loop and the way updates come in into one
answer: ``None`` (ready) or what is wrong, for :class:`service.ops.health.Ops`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiogram.client.session.middlewares.base import BaseRequestMiddleware
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramRetryAfter,
)
from prometheus_client import CollectorRegistry, Counter, generate_latest

from service.platform.delivery import DeliveryMetrics

# Bot API calls failing for longer than this make the role not ready.
FAILING_FOR_S = 60.0
# Errors about one chat or message, not about the bot's access to Telegram.
_CHAT_ERRORS = (TelegramBadRequest, TelegramForbiddenError, TelegramRetryAfter, TelegramMigrateToChat)


class TelegramMetrics:
    """Bot API calls by method and outcome, and the delivery metrics, in one registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.calls = Counter("cinq_telegram_api_calls", "Bot API calls, by method and outcome",
                             ["method", "outcome"], registry=self.registry)
        self.delivery = DeliveryMetrics(self.registry)

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)


@dataclass
class ApiWatch(BaseRequestMiddleware):
    """Watches every Bot API call (register with ``bot.session.middleware(watch)``)."""

    metrics: TelegramMetrics | None = None
    clock: Callable[[], float] = time.monotonic
    last_ok: float | None = None
    failing_since: float | None = None
    last_error: str = ""

    async def __call__(self, make_request: Any, bot: Any, method: Any) -> Any:
        name = getattr(method, "__api_method__", type(method).__name__)
        try:
            response = await make_request(bot, method)
        except _CHAT_ERRORS:
            self._ok(name, "refused")  # Telegram answered: the bot can reach it
            raise
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._failed(name, e)
            raise
        self._ok(name, "ok")
        return response

    def _ok(self, name: str, outcome: str) -> None:
        self.last_ok, self.failing_since = self.clock(), None
        if self.metrics is not None:
            self.metrics.calls.labels(name, outcome).inc()

    def _failed(self, name: str, e: Exception) -> None:
        if self.failing_since is None:
            self.failing_since = self.clock()
        self.last_error = f"{name}: {e!r}"[:200]
        if self.metrics is not None:
            self.metrics.calls.labels(name, "failed").inc()

    def failing_for(self) -> float:
        """How long every Bot API call has been failing (0: the last one did not)."""
        return 0.0 if self.failing_since is None else self.clock() - self.failing_since


@dataclass
class BotHealth:
    """The readiness of one bot process (see the module docstring)."""

    watch: ApiWatch
    failing_for_s: float = FAILING_FOR_S
    delivery: asyncio.Task[Any] | None = None
    receiving: str | None = None  # "polling" or "webhook" once updates can come in

    async def problem(self) -> str | None:
        """None when ready, else why not (for :class:`service.ops.health.Ops`)."""
        if self.delivery is None or self.delivery.done():
            return "the outbox delivery loop is not running"
        if self.receiving is None:
            return "not receiving updates (webhook not set, or polling not started)"
        if self.watch.failing_for() > self.failing_for_s:
            return f"Bot API calls failing for {self.watch.failing_for():.0f} s ({self.watch.last_error})"
        return None

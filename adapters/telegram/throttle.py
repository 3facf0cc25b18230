"""Each person's rate of updates (issue 32, 6): the webhook's limiter on Telegram's way in.

An outer middleware on messages and button presses takes a token of the sender's bucket
(:meth:`service.platform.inbound.Admission.take`, ``rl:{telegram:<user id>}``: the same bucket as
the person's web table requests) before anything else is done.  An update over the rate makes no
command and gets one cheap answer: a press is answered with a short notice (``answerCallbackQuery``,
which Telegram does not count against the bot's message limits; the spinner must stop anyway), a
message with one "too fast" reply per wait, the later ones of that wait with nothing.  A Redis that
does not answer lets the update through: the gateway then says what it says when Redis is away.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import CallbackQuery, Message, TelegramObject
from redis.exceptions import RedisError

from adapters.telegram.content import PLATFORM
from service.platform.inbound import Admission
from service.protocol.i18n import translate

TOO_FAST = "web.refused.too_fast"


class Throttle(BaseMiddleware):
    """Refuses a person's updates past their rate (see the module docstring)."""

    def __init__(self, admission: Admission, clock: Callable[[], float] = time.time) -> None:
        self.admission = admission
        self.clock = clock
        self.refused = 0

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        user = getattr(event, "from_user", None)
        if user is None or not isinstance(event, (Message, CallbackQuery)):
            return await handler(event, data)
        try:
            over = await self.admission.take(PLATFORM, str(user.id), self.clock())
        except RedisError:
            over = None
        if over is None:
            return await handler(event, data)
        self.refused += 1
        text = translate(user.language_code, TOO_FAST)
        if isinstance(event, CallbackQuery) or not over.told:
            await event.answer(text)
        return None

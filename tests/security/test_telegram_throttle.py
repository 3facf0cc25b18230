"""The flooder on Telegram's way in (issue 32, 6): a person's messages and presses past their rate
make no command and get one cheap answer, with the bot on a fake Bot API on loopback and a real
``redis-server``.

Bea sends 30 ``/help`` at once at 1 update/s with a burst of 5: the bot answers at most what her
bucket let through, plus one "too fast" notice per wait; then she presses a button 30 times: every
press is answered (``answerCallbackQuery``, as Telegram wants), but no more of them reach the
service than her bucket allows.  Counts are bounded by the bucket, never by time.
"""

from __future__ import annotations

import asyncio
import time

from tests.adapters.telegram.support import World, person

RATE, BURST = 1.0, 5
BEA = person(77, "Bea", "es")


def _bound(started: float) -> int:
    return BURST + int((time.monotonic() - started) * RATE) + 1


async def test_a_flood_of_updates_gets_one_cheap_answer_each(real_redis):
    async with World(real_redis, rate=(RATE, BURST)) as w:
        started = time.monotonic()
        await asyncio.gather(*(w.say(BEA, "/help") for _ in range(30)))
        await w.quiet()
        replies = [c for c in w.fake.calls_to(BEA.id, ("sendMessage",))]
        notices = [c for c in replies if "Demasiado" in str(c.params.get("text"))]
        helps = [c for c in replies if c not in notices]
        assert 1 <= len(helps) <= _bound(started), len(helps)
        assert 1 <= len(notices) <= int((time.monotonic() - started) * RATE) + 1, len(notices)

        await asyncio.sleep(BURST / RATE + 1)  # the bucket full again
        await w.say(BEA, "/play cinquillo")
        await w.quiet()
        shown = w.move_buttons(BEA.id)
        assert shown is not None
        message, buttons = shown
        before = len(w.fake.calls)
        started = time.monotonic()
        answers = await asyncio.gather(*(w.press(BEA, message, buttons[0]["callback_data"])
                                         for _ in range(30)))
        await w.quiet()
        assert len(answers) == 30
        answered = [c for c in w.fake.calls[before:] if c.method == "answerCallbackQuery"]
        assert len(answered) == 30  # every press answered, the refused ones cheaply
        too_fast = [c for c in answered if "Demasiado" in str(c.params.get("text"))]
        assert 30 - _bound(started) <= len(too_fast) < 30, len(too_fast)

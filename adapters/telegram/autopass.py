"""Forced passes made for the player: when passing is a hand's only move, the bot passes for them
after a short visible delay (``CINQ_TELEGRAM_AUTO_PASS_S``, 1.5 s; 0 turns it off), so that nobody
taps to pass when there is nothing else to do.

The pass is submitted as the player's own press would be: the hand's action token, the same
"one press per turn" mark (a tap meanwhile is answered "already done", and a tap first makes the
automatic pass do nothing), and a command id of its own per turn (the service acts on it once,
whichever process or redelivery submits it).  A bot that stops within the delay leaves the pass to
the player (the button is still there).
"""

from __future__ import annotations

import asyncio
import contextlib

from service.domain.identities import Room
from service.domain.tokens import TokenError, open_token
from service.foundation import logs
from service.platform.outbox import Message
from service.platform.platform_state import PlatformState
from service.write.gateway import Gateway

PLATFORM = "telegram"
# The same mark as a pressed button's (adapters.telegram.handlers.buttons.PRESS_TTL_S).
PRESS_TTL_S = 24 * 3600


def forced_pass(msg: Message) -> bool:
    """Whether ``msg`` is a hand whose only move is to pass."""
    return msg.kind == "hand" and len(msg.actions) == 1 and msg.actions[0].move == "pass"


class AutoPass:
    """Passes for players whose only move is to pass (see the module docstring)."""

    def __init__(self, gateway: Gateway, state: PlatformState, secrets: list[bytes], delay_s: float) -> None:
        self.gateway, self.state, self.secrets, self.delay_s = gateway, state, secrets, delay_s
        self.tasks: set[asyncio.Task[None]] = set()
        self.log = logs.get("telegram.autopass")

    @property
    def on(self) -> bool:
        """Whether forced passes are made for the players."""
        return self.delay_s > 0

    def offer(self, msg: Message) -> bool:
        """Schedule the pass if ``msg`` is a forced pass for a Telegram player; True if scheduled."""
        player = msg.to.player
        if not self.on or player is None or player.platform != PLATFORM or not forced_pass(msg):
            return False
        task = asyncio.create_task(self._pass(msg))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return True

    async def _pass(self, msg: Message) -> None:
        await asyncio.sleep(self.delay_s)
        token, player = msg.actions[0].token, msg.to.player
        assert player is not None
        try:
            claims = open_token(self.secrets, token)
        except TokenError:
            return
        turn = f"{claims.table}:{claims.seat}:{claims.version}"
        if not await self.state.mark_once(PLATFORM, f"press:{turn}", PRESS_TTL_S):
            return  # the player pressed first
        room = Room(platform=PLATFORM, chat=player.user, kind="private")
        try:
            await self.gateway.submit(None, user=player, room=room, token=token, claims=claims,
                                      command_id=f"tg:ap:{turn}")
        except Exception as e:  # the button is still there: the player can pass themselves
            await self.state.unmark(PLATFORM, f"press:{turn}")
            self.log.warning("auto_pass_failed", turn=turn, error=logs.error_text(e, 200))

    async def close(self) -> None:
        """Cancel the passes still waiting (their buttons stay)."""
        for task in list(self.tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

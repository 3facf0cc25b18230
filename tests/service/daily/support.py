"""Helpers of the daily deal's tests: a harness whose AI players think in place, and a person who
plays their attempt to the end."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.domain import daily
from service.domain.identities import Player, Room
from service.platform.outbox import Message
from service.write import bots
from tests.service.support import Clock, Harness

DAY = 20_793  # 2026-12-06
NOON = DAY * daily.DAY_S + 43_200.0
DAILY_SECRET = "daily-test-secret-0123456789abcdefghij"


def harness(redis: Any, clock: Clock | None = None, **kw: Any) -> Harness:
    """The service on ``redis`` at noon of :data:`DAY`, its AI players thinking in the worker."""
    kw.setdefault("daily_secret", DAILY_SECRET)
    h = Harness(redis, clock or Clock(NOON), **kw)
    h.workers = [h.new_worker(name="w0", choose_move=bots.choose_move)]
    return h


def dm(p: Player) -> Room:
    """The private chat of a person."""
    return Room(platform=p.platform, chat=f"dm{p.user}", kind="private")


def hands_of(msgs: list[Message], p: Player) -> list[Message]:
    """The hand messages addressed to ``p``."""
    return [m for m in msgs if m.kind == "hand" and m.to.player is not None and p.same(m.to.player)]


def first(actions: list[Any]) -> Any:
    """Pick the first legal move."""
    return actions[0]


async def play(h: Harness, p: Player, pick: Callable[[list[Any]], Any] = first, room: Room | None = None,
               limit: int = 200) -> list[str]:
    """Play ``p``'s running attempt to its end, choosing with ``pick``; the moves made, in order."""
    made: list[str] = []
    for _ in range(limit):
        hands = hands_of(h.messages, p)
        if not hands or not hands[-1].actions:
            return made
        action = pick(hands[-1].actions)
        made.append(action.move)
        await h.send(p, room=room or dm(p), token=action.token)
    raise AssertionError("the attempt did not end")

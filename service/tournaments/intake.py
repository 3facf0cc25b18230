"""The gateway's side of tournaments: ``/tournament`` and the sign-up buttons, to the director's stream.

The gateway (:mod:`service.write.gateway`) hands over what it parsed; nothing here decides anything
(the director does, :mod:`service.tournaments.director`) but where the command goes: a new
tournament's id is derived from the adapter's command id (a retry names the same one), any other
action goes to the tournament the group shows, and a chat where tournaments cannot be is answered
at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from service.domain.commands import TableCommand
from service.domain.identities import Player, Room
from service.protocol import chats
from service.protocol.i18n import translate
from service.protocol.i18n.reasons import error_text
from service.protocol.parse import ProtocolError
from service.store.decoding import as_text
from service.store.keys import Keys
from service.tournaments.director import tournament_id

Answer = Callable[..., Awaitable[str]]


async def command(redis: Any, keys: Keys, secret: bytes, cid: str, command_id: str | None,
                  args: dict[str, Any], user: Player, room: Room, locale: str, moderator: bool, at: float,
                  answer: Answer) -> str:
    """``/tournament``: to the tournament director's stream (refused at once outside a group, or
    with no tournament shown for anything but ``open``)."""
    if not chats.allowed("tournament", room.kind):
        error = ProtocolError("wrong_chat", command="tournament", chat=room.kind)
        return await answer(error_text(locale, error), "wrong_chat")
    if args.get("action") == "open":
        tid = tournament_id(secret, command_id)
    else:
        shown = await redis.get(keys.tournament_current(room.platform, room.chat))
        if shown is None:
            refusal = "tournament.refusal.no_tournament_here"
            return await answer(translate(locale, refusal), "no_tournament_here")
        tid = as_text(shown)
    cmd = TableCommand(id=cid, table=tid, name="tournament", args=args, actor=user, room=room, locale=locale,
                       at=at, moderator=moderator)
    await redis.xadd(keys.tournament_commands(), {"c": cmd.dumps()})
    return cid


async def press(redis: Any, keys: Keys, cid: str, tournament: str, move: str, token: str, user: Player,
                room: Room, locale: str, moderator: bool, at: float, answer: Answer) -> str:
    """A sign-up button (its token names the tournament): join, leave or start, for whoever pressed it."""
    if move not in ("join", "leave", "start"):
        return await answer(translate(locale, "refusal.token_forged"), "token_forged")
    await redis.xadd(keys.tournament_commands(), {"c": TableCommand(
        id=cid, table=tournament, name="tournament", args={"action": move}, actor=user, room=room,
        locale=locale, token=token, at=at, moderator=moderator).dumps()})
    return cid

"""The gateway's side of tournaments: ``/tournament`` and the sign-up buttons, to the director's stream.

:func:`register` puts both in the gateway's table of handlers (:mod:`service.domain.inputs`).
Nothing here decides anything (the director does, :mod:`service.tournaments.director`) but where the
command goes: a new tournament's id is derived from the adapter's command id (a retry names the same
one), any other action goes to the tournament the group shows.  The parser refuses ``/tournament``
outside a group (``service.protocol.chats``), so only groups get here.
"""

from __future__ import annotations

from typing import Any

from service.domain.commands import TableCommand
from service.domain.inputs import Handlers, Received, Reply
from service.domain.tokens import Claims
from service.protocol.i18n import translate
from service.store.decoding import as_text
from service.store.keys import Keys
from service.tournaments.director import is_tournament, tournament_id

SIGNUP_MOVES = ("join", "leave", "start")


def register(handlers: Handlers, redis: Any, keys: Keys, secret: bytes) -> None:
    """Send ``/tournament`` and the sign-up buttons (tokens naming a tournament) to the director."""

    async def command(inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str:
        # ``open`` makes a new tournament; anything else is for the one the group shows.
        if args.get("action") == "open":
            tid = tournament_id(secret, inp.command_id)
        else:
            shown = await redis.get(keys.tournament_current(inp.room.platform, inp.room.chat))
            if shown is None:
                return await reply(translate(inp.locale, "tournament.refusal.no_tournament_here"),
                                   "no_tournament_here")
            tid = as_text(shown)
        return await _send(inp, tid, args)

    async def pressed(inp: Received, claims: Claims, token: str, reply: Reply) -> str:
        # A sign-up button: join, leave or start, for whoever pressed it.
        if claims.move not in SIGNUP_MOVES:
            return await reply(translate(inp.locale, "refusal.token_forged"), "token_forged")
        return await _send(inp, claims.table, {"action": claims.move}, token)

    async def _send(inp: Received, tid: str, args: dict[str, Any], token: str | None = None) -> str:
        cmd = TableCommand(id=inp.cid, table=tid, name="tournament", args=args, actor=inp.user, room=inp.room,
                           locale=inp.locale, token=token, at=inp.at, moderator=inp.moderator)
        await redis.xadd(keys.tournament_commands(), {"c": cmd.dumps()})
        return inp.cid

    handlers.command("tournament", command)
    handlers.press(is_tournament, pressed)

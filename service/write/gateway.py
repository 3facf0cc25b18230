"""The single entry point of every adapter: chat text, an action token or a typed command in, a command
id out.

``submit`` takes the adapter's :class:`~service.domain.inputs.Input` (who, where, command id, language,
moderator, replaced message) and what it carries, resolves it once into a
:class:`~service.domain.inputs.Received` (command id, locale, time), parses the text once (bad
syntax, or a command sent to the wrong kind of chat, is answered at once, in the player's language, and
goes no further), hands the commands that need no table to their handlers (:class:`Handlers`: the
gateway's own ``/help``, ``/rules``, ``/lang``, ``/stats`` in :mod:`service.write.answers`, the
ratings' ``/rating``, ``/top`` and the tournaments' ``/tournament``, each registered by its package),
opens a button's token once and hands it to what it names, resolves the table a command is for
(``/new`` and ``/play`` make a new id; the others use the room's current table) and appends the
command to that table's command stream for a worker.

**Exactly once.**  An adapter passes its idempotency key as ``command_id`` (a platform's update id,
a webhook id) and may submit the same input again whenever it is not sure the first try went
through (a 5xx, a broken connection): ``submit`` writes nothing that a retry would repeat or that
would make a retry look done when it was not.

- A table command carries that id to the worker, whose compare-and-append recognises it (the
  table's done set): a second copy in the stream is acknowledged without acting.  Nothing is marked
  "seen" before the command is in its stream.
- ``/new`` and ``/play`` derive the new table's id from the command id (:meth:`Gateway.table_for`),
  so a retry names the same table; the room is pointed at it only *after* its command is in the
  stream, and never at a table whose ``/new`` a worker has refused (the worker leaves a mark beside
  the room, checked in the same call).
- A reply the gateway writes itself (``/help``, a syntax error...) is written with its duplicate mark
  in one call on the reply's outbox (both share its hash tag): a retry finds the mark and writes
  nothing again; a failed call wrote neither.

**Only what a failover keeps.**  With replicas (``CINQ_REDIS_MIN_REPLICAS``), ``submit`` returns only
once what it wrote (or found written by an earlier try) is on them (:mod:`service.store.replicas`);
otherwise it raises :class:`~service.store.replicas.NotReplicated`, a Redis error: the adapter answers
"not yet" (503) and the platform's retry, with the same id, finds the command and waits again.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any

from service.daily.intake import DailyIntake
from service.domain.commands import TableCommand
from service.domain.identities import Player, Room
from service.domain.inputs import Handlers, Input, Moderator, Received, Reply
from service.domain.messages import Action, Message, Recipient
from service.domain.requests import CREATING, Typed
from service.domain.tokens import Claims, TokenError, open_token
from service.foundation.settings import Settings
from service.protocol import chats
from service.protocol.i18n import pick_locale, translate
from service.protocol.i18n.reasons import error_text
from service.protocol.parse import Command, ProtocolError, parse_command
from service.ratings import boards
from service.ratings.store import RatingStore
from service.store import doorbell
from service.store.decoding import as_text, as_text_or_none
from service.store.keys import Keys
from service.store.replicas import Replicas
from service.tournaments import intake
from service.write import answers
from service.write.lookup import playing

# The argument of /new and /play with the table the room showed before (see ``submit``).
ROOM_WAS = "room_was"
# How long an adapter's command id is remembered, to answer a duplicate delivery without acting.
SEEN_TTL_S = 24 * 3600

# A reply and its duplicate mark in one call.  KEYS: mark, outbox.  ARGV: mark ttl ('' : no mark),
# command id, message JSON.  Returns 1 (written) or 0 (a duplicate: nothing written).
_REPLY = """
if ARGV[1] ~= '' and not redis.call('SET', KEYS[1], 1, 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('XADD', KEYS[2], '*', 'c', ARGV[2], 'm', ARGV[3])
return 1
"""
# Point a room at a new table unless a worker refused that table's /new, or the room has moved on to
# another table since the gateway looked (a late retry must not take it back).
# KEYS: room, refusal mark.  ARGV: the new table, the table the room showed ('' : none).
_POINT_ROOM = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local now = redis.call('GET', KEYS[1])
if now and now ~= ARGV[1] and now ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""


def new_table_id() -> str:
    """A new table id: 10 characters of base32 from the CSPRNG (short enough for action tokens)."""
    return base64.b32encode(secrets.token_bytes(10)).decode()[:10].lower()


async def _ask(moderator: Moderator, name: str) -> bool:
    """Whether the sender moderates the room, asked of the platform only for a moderated command."""
    if not callable(moderator):
        return moderator
    return name in chats.MODERATED and await moderator()


def new_command_id() -> str:
    """A fresh command id."""
    return secrets.token_hex(8)


class Gateway:
    """Turns what people type into commands on the right stream."""

    def __init__(self, redis: Any, settings: Settings, keys: Keys, *, clock: Callable[[], float] = time.time,
                 bot_username: str | None = None) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = keys
        self.secrets = settings.secrets_bytes()
        self.clock = clock
        self.bot_username = bot_username
        # Each platform's own bot name (`/new@name`), when the platform has one: one gateway serves
        # every adapter of a process (service.ops.runtime), each naming its bot (name_bot).
        self.bot_names: dict[str, str] = {}
        self._reply = redis.register_script(_REPLY)
        self._point_room = redis.register_script(_POINT_ROOM)
        self.ratings = RatingStore(redis, self.keys)
        self.replicas = Replicas.of(redis, settings, self.keys)
        # The commands answered without a table, and the buttons that name no table: each package
        # registers its own (the gateway's own /help, /rules, /lang, /stats; ratings; tournaments).
        self.handlers = Handlers()
        answers.register(self.handlers, redis, self.keys)
        boards.register(self.handlers, self.ratings, self.secrets[0])
        intake.register(self.handlers, redis, self.keys, self.secrets[0])
        self.daily = DailyIntake.registered(self.handlers, redis, self.keys, settings, self._send, self.reply)

    def name_bot(self, platform: str, username: str) -> None:
        """The name of ``platform``'s bot, for the commands addressed to a bot (``/new@name``)."""
        self.bot_names[platform] = username

    def table_for(self, command_id: str | None) -> str:
        """The id of the table a ``/new`` or ``/play`` creates: derived from the adapter's command id
        (so that a retry names the same table; keyed with the token secret, so nobody can guess
        it from the id), else fresh from the CSPRNG."""
        if command_id is None:
            return new_table_id()
        digest = hmac.new(self.secrets[0], b"table\n" + command_id.encode(), hashlib.sha256).digest()
        return base64.b32encode(digest[:10]).decode()[:10].lower()

    async def locale_of(self, user: Player, language_code: str | None = None) -> str:
        """The player's locale: their ``/lang`` choice, else from the platform's language code."""
        chosen = await self.redis.hget(self.keys.player_prefs(user.platform, user.user), "locale")
        if chosen:
            return as_text(chosen)
        return pick_locale(language_code)

    async def table_of(self, room: Room) -> str | None:
        """The table a room currently shows (derived index), if any."""
        t = await self.redis.get(self.keys.room(room.platform, room.chat))
        return as_text_or_none(t)

    def reply_bucket(self, room: Room) -> int:
        """The bucket whose outbox carries a room's replies that concern no table."""
        return self.keys.bucket(f"{room.platform}:{room.chat}")

    async def reply(self, inp: Received, text: str, code: str | None = None, *, locale: str | None = None,
                    actions: list[Action] | None = None, redraw: bool = False) -> str:
        """Answer an input at once, in its room, through the outbox like every other message (``code``:
        a refusal's machine-readable code; ``actions``, ``redraw``: a board's, :mod:`service.ratings.boards`).
        A second reply to a ``marked`` input (the adapter's retry) writes nothing."""
        # Off the worker's hot path: the gateway writes its few replies already in words.
        room = inp.room
        person = inp.user if room.kind == "private" else None
        msg = Message(id=f"{inp.cid}:0", table=None, version=0, to=Recipient(room=room, person=person),
                      locale=locale or inp.locale, kind="reply", text=text, code=code, actions=actions or [],
                      replaces=inp.replaces if redraw else None)
        bucket = self.reply_bucket(room)
        wrote = await self._reply(keys=[self.keys.seen(bucket, inp.cid), self.keys.outbox(bucket)],
                                  args=[SEEN_TTL_S if inp.marked else "", inp.cid, msg.dumps()])
        if wrote:
            pipe = self.redis.pipeline(transaction=False)
            doorbell.ring(pipe, self.keys, [bucket])  # a no-op except on a Redis Cluster
            await pipe.execute()
        return inp.cid

    async def submit(self, said: Input, text: str | None = None, *, token: str | None = None,
                     claims: Claims | None = None, request: Typed | None = None,
                     intercept: Callable[[Command], Awaitable[bool]] | None = None) -> str:
        """Hand one input of a person (``said``: the adapter's translation of what its platform
        delivered) to the service; returns the command id.  It carries chat ``text`` (parsed here,
        once), a button's action ``token`` (with its ``claims`` when the adapter opened it already: it
        is opened once), or a typed table command (``request``, :mod:`service.domain.commands`) for the
        room's table, which an adapter builds when it knows what the person asked (a lobby button, a
        settings keyboard).

        ``said.command_id`` is the adapter's idempotency key: a second submission with the same id is
        answered as a duplicate and not acted on.  ``said.moderator`` is asked (when a callable) only
        for the commands that need it (``chats.MODERATED``).  ``intercept``: the adapter's own handling
        of a parsed text command (a group's ``/lang``), True when it answered it and the service does
        nothing more.

        Returns once every write is on the replicas a failover could promote (raises
        :class:`~service.store.replicas.NotReplicated` when they do not confirm in time).
        """
        inp = Received(user=said.user, room=said.room, cid=said.command_id or new_command_id(),
                       locale=await self.locale_of(said.user, said.language), at=self.clock(),
                       marked=said.command_id is not None, replaces=said.replaces, room_title=said.room_title)
        await self._submit(inp, said.moderator, text, token, claims, request, intercept)
        await self.replicas.confirm()
        return inp.cid

    async def _submit(self, inp: Received, moderator: Moderator, text: str | None, token: str | None,
                      claims: Claims | None, request: Typed | None,
                      intercept: Callable[[Command], Awaitable[bool]] | None) -> str:
        if token is not None:
            inp = replace(inp, moderator=await _ask(moderator, "action"))
            return await self._press(inp, token, claims, partial(self.reply, inp))
        if request is not None:
            inp = replace(inp, moderator=await _ask(moderator, request.name))
            args = request.model_dump(exclude={"name"}, exclude_none=True)
            return await self._table_command(inp, request.name, args, partial(self.reply, inp))
        try:
            parsed = parse_command(text or "", bot=self.bot_names.get(inp.room.platform, self.bot_username),
                                   chat=inp.room.kind)
        except ProtocolError as e:
            # Plain chat in a group is not for us; a command for another bot is not either.
            if e.code == "other_bot" or (e.code == "not_a_command" and inp.room.kind == "group"):
                return inp.cid
            return await self.reply(inp, error_text(inp.locale, e), e.code)
        if intercept is not None and await intercept(parsed):
            return inp.cid
        name, args = parsed.name, dict(parsed.args)
        inp = replace(inp, moderator=await _ask(moderator, name))
        reply = partial(self.reply, inp)
        await self.daily.note(inp, name)  # a group where the person's daily result may be shared
        handler = self.handlers.commands.get(name)
        if handler is not None:  # answered without a table (service.domain.inputs.Handlers)
            return await handler(inp, name, args, reply)
        return await self._table_command(inp, name, args, reply)

    async def _table_command(self, inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str:
        """A command for a table: the new one (``/new``, ``/play``), the named one, or the room's."""
        user, room = inp.user, inp.room
        if name in CREATING:
            table = self.table_for(inp.command_id)
            # If the worker refuses the /new, it puts back the table the room showed before.
            was = await self.table_of(room)
            if was is not None and was != table:
                args[ROOM_WAS] = was
        elif name == "replay":
            table = args["table"]
        elif name == "start" and args.get("payload"):
            # A deep link (t.me/<bot>?start=<table>) invites into a table: it is a join (or, for a
            # player already seated, their hand again: see ``decide``).
            name, table = "join", args["payload"]
            args["link"] = True
        else:
            found = await self.table_of(room)
            if name == "hand" and room.kind == "private":
                # In a private chat /hand is for the table the person plays at, not the chat's own.
                found = await playing(self.redis, self.keys, user) or found
            if found is None and room.kind == "private":
                # In a private chat, a person sitting at exactly one table means that table.
                tables = await self.redis.smembers(self.keys.player_tables(user.platform, user.user))
                if len(tables) == 1:
                    found = as_text(next(iter(tables)))
            if found is None:
                return await reply(translate(inp.locale, "refusal.no_table_here"), "no_table_here")
            table = found
        args.pop("payload", None)
        await self._send(TableCommand(id=inp.cid, table=table, name=name, args=args, actor=user, room=room,
                                      locale=inp.locale, at=inp.at, moderator=inp.moderator))
        if name in CREATING:
            # Only now that its command is in the stream: the room shows the new table at once, so
            # that a /join sent right after the /new finds it before any worker has run (the worker
            # writes the same derived index after its append).
            await self._point_room(keys=[self.keys.room(room.platform, room.chat),
                                         self.keys.room_refused(room.platform, room.chat, table)],
                                   args=[table, args.get(ROOM_WAS) or ""])
        return inp.cid

    async def _press(self, inp: Received, token: str, claims: Claims | None, reply: Reply) -> str:
        """A button: its token opened once (here, unless the adapter did), then handed to what it names
        (a board, a tournament: :class:`Handlers`) or sent to its table as the move it claims."""
        if claims is None:
            try:
                claims = open_token(self.secrets, token)
            except TokenError as e:
                return await reply(translate(inp.locale, f"refusal.token_{e.code}"), f"token_{e.code}")
        handler = self.handlers.press_handler(claims.table)
        if handler is not None:
            return await handler(inp, claims, token, reply)
        move = {"seat": claims.seat, "version": claims.version, "move": claims.move}  # decide checks them
        await self._send(TableCommand(id=inp.cid, table=claims.table, name="action", args=move,
                                      actor=inp.user, room=inp.room, locale=inp.locale, at=inp.at))
        return inp.cid

    async def _send(self, cmd: TableCommand) -> None:
        await self.redis.xadd(self.keys.commands_for(cmd.table), {"c": cmd.dumps()})

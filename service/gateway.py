"""The single entry point of every adapter: chat text (or an action token) in, a command id out.

``submit`` parses the text once (bad syntax is answered at once, in the player's language, and goes
no further), answers the commands that need no table (help, rules, language, stats), resolves the
table a command is for (``/new`` and ``/play`` make a new id; the others use the room's current
table) and appends the command to that table's command stream for a worker.
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable
from typing import Any

import orjson

from service import doorbell
from service.commands import TableCommand
from service.i18n import pick_locale, translate
from service.i18n.reasons import error_text
from service.identities import Player, Room
from service.keys import Keys
from service.outbox import Message, Recipient
from service.protocol import ProtocolError, parse_command
from service.settings import Settings
from service.tokens import TokenError, open_token

# The argument of /new and /play with the table the room showed before (see ``submit``).
ROOM_WAS = "room_was"
# The events after which a table's match runs (also PlayerKicked with a level: an AI took the seat).
_RUNNING_AFTER = frozenset({"MatchStarted", "MovePlayed", "SeatTakenByBot"})
# How long an adapter's command id is remembered, to answer a duplicate delivery without acting.
SEEN_TTL_S = 24 * 3600


def new_table_id() -> str:
    """A new table id: 10 characters of base32 from the CSPRNG (short enough for action tokens)."""
    return base64.b32encode(secrets.token_bytes(10)).decode()[:10].lower()


def new_command_id() -> str:
    """A fresh command id."""
    return secrets.token_hex(8)


class Gateway:
    """Turns what people type into commands on the right stream."""

    def __init__(self, redis: Any, settings: Settings, *, clock: Callable[[], float] = time.time,
                 bot_username: str | None = None) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = Keys(settings.buckets, settings.command_shards, settings.key_prefix)
        self.secrets = settings.secrets_bytes()
        self.clock = clock
        self.bot_username = bot_username

    async def locale_of(self, user: Player, language_code: str | None = None) -> str:
        """The player's locale: their ``/lang`` choice, else from the platform's language code."""
        chosen = await self.redis.hget(self.keys.player_prefs(user.platform, user.user), "locale")
        if chosen:
            return chosen.decode() if isinstance(chosen, bytes) else chosen
        return pick_locale(language_code)

    async def table_of(self, room: Room) -> str | None:
        """The table a room currently shows (derived index), if any."""
        t = await self.redis.get(self.keys.room(room.platform, room.chat))
        return t.decode() if isinstance(t, bytes) else t

    def reply_bucket(self, room: Room) -> int:
        """The bucket whose outbox carries a room's replies that concern no table."""
        return self.keys.bucket(f"{room.platform}:{room.chat}")

    async def reply(self, cid: str, room: Room, locale: str, text: str, table: str | None = None,
                    code: str | None = None) -> None:
        """Answer in the room at once, through the outbox like every other message (``code``: a
        refusal's machine-readable code)."""
        # Off the worker's hot path: the gateway writes its few replies already in words.
        msg = Message(id=f"{cid}:0", table=table, version=0, to=Recipient(room=room), locale=locale,
                      kind="reply", text=text, code=code)
        bucket = self.reply_bucket(room)
        pipe = self.redis.pipeline(transaction=False)
        pipe.xadd(self.keys.outbox(bucket), {"c": cid, "m": msg.dumps()})
        doorbell.ring(pipe, self.keys, [bucket])  # a no-op except on a Redis Cluster
        await pipe.execute()

    async def submit(self, text: str | None = None, *, user: Player, room: Room, token: str | None = None,
                     language_code: str | None = None, command_id: str | None = None,
                     moderator: bool = False) -> str:
        """Hand one input of a person to the service; returns the command id.

        ``command_id`` is the adapter's idempotency key (a platform update id, a webhook id): a second
        submission with the same id is answered as a duplicate and not acted on.  ``moderator``: the
        platform says this person moderates the room (a group admin), so they may start, add AI
        players, change the options, kick and cancel like the table's creator.
        """
        cid = command_id or new_command_id()
        locale = await self.locale_of(user, language_code)
        if command_id is not None:
            first = await self.redis.set(self.keys.seen(cid), 1, nx=True, ex=SEEN_TTL_S)
            if not first:
                await self.reply(f"{cid}:dup", room, locale, translate(locale, "refusal.duplicate"),
                                 code="duplicate")
                return cid
        if token is not None:
            return await self._action(cid, token, user, room, locale)
        try:
            parsed = parse_command(text or "", bot=self.bot_username)
        except ProtocolError as e:
            # Plain chat in a group is not for us; a command for another bot is not either.
            if e.code == "other_bot" or (e.code == "not_a_command" and room.kind == "group"):
                return cid
            await self.reply(cid, room, locale, error_text(locale, e), code=e.code)
            return cid
        name, args = parsed.name, dict(parsed.args)
        if name == "help":
            await self.reply(cid, room, locale, translate(locale, "help.text"))
            return cid
        if name == "rules":
            games = [args["game"]] if args.get("game") else ["cinquillo", "535"]
            await self.reply(cid, room, locale, "\n\n".join(translate(locale, f"rules.{g}") for g in games))
            return cid
        if name == "lang":
            new = args["locale"]
            await self.redis.hset(self.keys.player_prefs(user.platform, user.user), "locale", new)
            await self.reply(cid, room, new, translate(new, "lang.changed"))
            return cid
        if name == "stats":
            raw = await self.redis.hgetall(self.keys.player_stats(user.platform, user.user))
            stats = {(k.decode() if isinstance(k, bytes) else k): int(v) for k, v in raw.items()}
            text = translate(locale, "table.stats", played=stats.get("played", 0), won=stats.get("won", 0))
            await self.reply(cid, room, locale, text)
            return cid
        if name in ("new", "play"):
            table = new_table_id()
            # The room shows the new table at once, so that a /join sent right after the /new finds
            # it before any worker has run (the worker writes the same derived index after the
            # append).  If the worker refuses the /new, it puts back the table the room showed.
            was = await self.redis.set(self.keys.room(room.platform, room.chat), table, get=True)
            if was is not None:
                args[ROOM_WAS] = was.decode() if isinstance(was, bytes) else was
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
                found = await self._playing(user) or found
            if found is None and room.kind == "private":
                # In a private chat, a person sitting at exactly one table means that table.
                tables = await self.redis.smembers(self.keys.player_tables(user.platform, user.user))
                if len(tables) == 1:
                    only = next(iter(tables))
                    found = only.decode() if isinstance(only, bytes) else only
            if found is None:
                await self.reply(cid, room, locale, translate(locale, "refusal.no_table_here"),
                                 code="no_table_here")
                return cid
            table = found
        args.pop("payload", None)
        await self._send(TableCommand(id=cid, table=table, name=name, args=args, actor=user, room=room,
                                      locale=locale, at=self.clock(), moderator=moderator))
        return cid

    async def _playing(self, user: Player) -> str | None:
        """The table a person plays at: of their tables (derived index) the running one, the most
        recently active if several (the last event of each stream tells both); None if none runs."""
        raw = await self.redis.smembers(self.keys.player_tables(user.platform, user.user))
        tables = sorted(t.decode() if isinstance(t, bytes) else t for t in raw)
        if not tables:
            return None
        pipe = self.redis.pipeline(transaction=False)
        for t in tables:
            pipe.xrevrange(self.keys.events(t), count=1)
        best: tuple[float, str] | None = None
        for t, last in zip(tables, await pipe.execute(), strict=True):
            if not last:
                continue
            fields = last[0][1]
            env = orjson.loads(fields.get(b"e") or fields.get("e") or b"{}")
            running = env.get("type") in _RUNNING_AFTER or (
                env.get("type") == "PlayerKicked" and (env.get("data") or {}).get("level"))
            if running and (best is None or env.get("at", 0.0) >= best[0]):
                best = (float(env.get("at", 0.0)), t)
        return best[1] if best else None

    async def _action(self, cid: str, token: str, user: Player, room: Room, locale: str) -> str:
        try:
            claims = open_token(self.secrets, token)
        except TokenError as e:
            await self.reply(cid, room, locale, translate(locale, f"refusal.token_{e.code}"),
                             code=f"token_{e.code}")
            return cid
        await self._send(TableCommand(id=cid, table=claims.table, name="action", actor=user, room=room,
                                      locale=locale, token=token, at=self.clock()))
        return cid

    async def _send(self, cmd: TableCommand) -> None:
        await self.redis.xadd(self.keys.commands_for(cmd.table), {"c": cmd.dumps()})

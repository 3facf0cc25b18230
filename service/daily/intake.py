"""The gateway's side of the daily deal: ``/daily``, its buttons, and the web table's "Daily deal".

``/daily [game]`` in a private chat starts the person's attempt at today's deal (a ``daily_table``
command to the attempt's table, whose id the person, game and day decide: a retry, a second
``/daily`` or the web's button name the same table, and the worker answers with the hand again),
or, once played, answers with their standing: result, rank and percentile among today's players,
streaks, the share text and its buttons.  ``/daily week``: the last seven days; ``/daily board``:
today's best.  In a group, ``/daily`` shows the day's board among the group's members who played it,
and ``/daily share`` posts the sender's share text there.

Buttons are action tokens whose "table" is :data:`BUTTON`: a share button names the group by a
short hash of its chat id (a token holds 64 bytes), found again among the groups where the presser
used the bot; the presser's own result is what gets posted, whoever's message held the button.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from service.daily import texts
from service.daily.store import DailyStore, member, note_group
from service.domain import daily
from service.domain.commands import TableCommand
from service.domain.identities import Player, Room
from service.domain.inputs import Handlers, Received, Reply
from service.domain.messages import Action
from service.domain.tables.base import commitment
from service.domain.tokens import Claims, issue
from service.foundation import logs
from service.foundation.settings import Settings
from service.protocol.i18n import translate
from service.store.decoding import as_text
from service.store.keys import Keys

BUTTON = "D"
"""The "table" of a daily button's token (tables are lowercase base32, tournaments start with T)."""
GAME_CODE = {"cinquillo": "c", "535": "5"}
_CODE_GAME = {v: k for k, v in GAME_CODE.items()}
SHARE_GROUPS = 3
"""At most this many groups get a share button (the most recently used first is not known: by title)."""
BOARD_SIZE = 10
BUSY_MS = 2000
"""Within this long of a person's last ``/daily`` for a game, another sends no command: the first one's
answer (the attempt, or its hand) is on its way.  A flood costs one command and one answer."""
NOTED = frozenset({"new", "join", "tournament", "top", "rating", "stats"})
"""The group commands after which a person counts as using the bot in that group (beside ``/daily``):
the groups their share buttons offer (the gateway notes them, with the group's title)."""

Send = Callable[[TableCommand], Awaitable[None]]
Post = Callable[[Received, str], Awaitable[str]]


def group_code(chat: str) -> str:
    """A group's short name in a share button: 8 hex digits of its chat id's CRC-32."""
    return f"{zlib.crc32(chat.encode()):08x}"


class DailyIntake:
    """``/daily`` and its buttons, for the gateway (see the module docstring)."""

    def __init__(self, redis: Any, keys: Keys, token_secret: bytes, daily_secret: bytes, send: Send,
                 post: Post, grace_s: float = daily.GRACE_S) -> None:
        self.redis = redis
        self.keys = keys
        self.store = DailyStore(redis, keys)
        self.token_secret, self.daily_secret = token_secret, daily_secret
        self.send, self.post, self.grace_s = send, post, grace_s
        self.log = logs.get("daily")

    async def note(self, inp: Received, name: str) -> None:
        """A command sent in a group: after one of :data:`NOTED`, the person counts as using the bot
        there (with the group's title, when the platform gave it)."""
        if inp.room.kind == "group" and name in NOTED:
            pipe = self.redis.pipeline(transaction=False)
            note_group(pipe, self.keys, inp.user, inp.room.chat, inp.room_title)
            await pipe.execute()

    @classmethod
    def registered(cls, handlers: Handlers, redis: Any, keys: Keys, settings: Settings, send: Send,
                   post: Post) -> DailyIntake:
        """The gateway's daily intake (its secrets and grace from ``settings``), registered."""
        intake = cls(redis, keys, settings.secrets_bytes()[0], settings.daily_secret_bytes(), send, post,
                     settings.daily_grace_s)
        intake.register(handlers)
        return intake

    def register(self, handlers: Handlers) -> None:
        """Answer ``/daily`` and the daily buttons (tokens naming :data:`BUTTON`) for the gateway."""
        handlers.command("daily", self.command)
        handlers.press(lambda table: table == BUTTON, self.pressed)

    async def start(self, cid: str, user: Player, room: Room, game: str, locale: str,
                    now: float) -> tuple[str | None, str | None]:
        """Start (or find again) the person's attempt at today's ``game``: ``(table, None)``, or
        ``(None, refusal code)`` (``daily_played``: done already; ``daily_unavailable``: this role's
        daily secret deals another deal than the day's first ``/daily`` did)."""
        day = daily.day_of(now)
        if await self.store.mine(user, game, day) is not None:
            return None, "daily_played"
        seed = daily.seed(self.daily_secret, game, day)
        if not await self.store.commit(game, day, commitment(seed), now):
            self.log.error("daily_secret_mismatch", game=game, day=daily.day_name(day))
            return None, "daily_unavailable"
        table = daily.table_id(self.token_secret, user, game, day)
        busy = self.keys.daily_busy(user.platform, user.user, game, daily.day_name(day))
        if not await self.redis.set(busy, 1, nx=True, px=BUSY_MS):
            return table, None  # asked for a moment ago (a flood, a double tap): that command answers
        until = daily.day_end(day) + self.grace_s
        await self.send(TableCommand(id=cid, table=table, name="daily_table",
                                     args={"game": game, "day": day, "seed": seed, "until": until},
                                     actor=user, room=room, locale=locale, at=now))
        return table, None

    async def command(self, inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str:
        """``/daily [game] [week|board|share]`` (see the module docstring)."""
        game, what = args.get("game") or "cinquillo", args.get("what")
        user, room, locale, now = inp.user, inp.room, inp.locale, inp.at
        if room.kind == "group":
            pipe = self.redis.pipeline(transaction=False)
            note_group(pipe, self.keys, user, room.chat, inp.room_title, people=True)
            await pipe.execute()
            if what == "share":
                return await self._share_here(inp, game, reply)
            games = [args["game"]] if args.get("game") else list(daily.GAMES)
            parts = [await self._group_board(room, g, daily.day_of(now), locale) for g in games]
            return await reply("\n\n".join(parts))
        if what == "week":
            return await reply(await self.week(user, game, locale, now))
        if what == "board":
            return await reply(await self.board(game, daily.day_of(now), locale))
        table, refused = await self.start(inp.cid, user, room, game, locale, now)
        if table is not None:
            return inp.cid
        if refused == "daily_played":
            text, actions = await self.standing(user, game, locale, now)
            played = translate(locale, "refusal.daily_played", game=texts.GAME_NAMES[game])
            return await reply(f"{played}\n\n{text}", "daily_played", actions=actions)
        return await reply(translate(locale, f"refusal.{refused}"), refused)

    async def standing(self, user: Player, game: str, locale: str, now: float) -> tuple[str, list[Action]]:
        """The person's standing in today's ``game`` (they played it), with its buttons."""
        day = daily.day_of(now)
        att = await self.store.mine(user, game, day)
        assert att is not None
        st = await self.store.standing(game, day, att.score)
        s = await self.store.streaks(user, game, day)
        text = texts.standing_text(locale, game, day, att, st, s, daily.day_end(day) + self.grace_s)
        return text, await self.buttons(user, game, locale)

    async def buttons(self, user: Player, game: str, locale: str) -> list[Action]:
        """Share in each group (up to :data:`SHARE_GROUPS`), today's board, the week."""
        def button(label: str, move: str) -> Action:
            token = issue(self.token_secret, table=BUTTON, seat=0, version=0, move=move)
            return Action(move=move, token=token, label=label)

        g = GAME_CODE[game]
        groups = sorted((await self.store.groups(user)).items(), key=lambda kv: (kv[1] == "", kv[1], kv[0]))
        out = [button(translate(locale, "daily.btn.share", group=title or f"…{chat[-4:]}"),
                      f"s {g} {group_code(chat)}") for chat, title in groups[:SHARE_GROUPS]]
        return [*out, button(translate(locale, "daily.btn.board"), f"b {g}"),
                button(translate(locale, "daily.btn.week"), f"w {g}")]

    async def share_text(self, user: Player, game: str, locale: str, now: float) -> str | None:
        """The person's share text for today's ``game`` (None: not played yet)."""
        day = daily.day_of(now)
        att = await self.store.mine(user, game, day)
        if att is None:
            return None
        st = await self.store.standing(game, day, att.score)
        return texts.share_text(locale, game, day, att, st, await self.store.streaks(user, game, day))

    async def board(self, game: str, day: int, locale: str) -> str:
        """The day's global board: the best :data:`BOARD_SIZE` attempts."""
        rows = await self.store.top(game, day, BOARD_SIZE)
        of = await self.redis.zcard(self.keys.daily_board(game, daily.day_name(day)))
        return texts.board_text(locale, game, day, rows, int(of), "global")

    async def _group_board(self, room: Room, game: str, day: int, locale: str) -> str:
        group = f"{room.platform}:{room.chat}"
        # its members: who played a match there (the ratings' group sets), who used /daily there
        keys = [self.keys.rating_group(group, g) for g in daily.GAMES]
        keys.append(self.keys.daily_people(room.platform, room.chat))
        people = {as_text(m) for k in keys for m in await self.redis.smembers(k)}
        rows = await self.store.among(game, day, people)
        return texts.board_text(locale, game, day, rows[:BOARD_SIZE], len(rows), "group")

    async def week(self, user: Player, game: str, locale: str, now: float) -> str:
        """The person's last seven days at the daily ``game``."""
        today = daily.day_of(now)
        rows = []
        for day, att in await self.store.week(user, game, today):
            st = await self.store.standing(game, day, att.score) if att is not None else None
            rows.append((day, att, st))
        return texts.week_text(locale, game, rows, await self.store.streaks(user, game, today))

    async def _share_here(self, inp: Received, game: str, reply: Reply) -> str:
        text = await self.share_text(inp.user, game, inp.locale, inp.at)
        if text is None:
            return await reply(translate(inp.locale, "refusal.daily_nothing_to_share",
                                         game=texts.GAME_NAMES[game]), "daily_nothing_to_share")
        return await reply(text)

    async def pressed(self, inp: Received, claims: Claims, token: str, reply: Reply) -> str:
        """A daily button, for whoever pressed it: post their share text in a group of theirs, or
        show today's board or their week."""
        user, locale, now = inp.user, inp.locale, inp.at
        words = claims.move.split(" ")
        game = _CODE_GAME.get(words[1]) if len(words) > 1 else None
        if game is None or words[0] not in ("s", "b", "w") or (words[0] == "s") != (len(words) == 3):
            return await reply(translate(locale, "refusal.token_forged"), "token_forged")
        if words[0] == "b":
            return await reply(await self.board(game, daily.day_of(now), locale))
        if words[0] == "w":
            return await reply(await self.week(user, game, locale, now))
        groups = await self.store.groups(user)
        chat = next((c for c in groups if group_code(c) == words[2]), None)
        if chat is None:
            return await reply(translate(locale, "refusal.daily_unknown_group"), "daily_unknown_group")
        text = await self.share_text(user, game, locale, now)
        if text is None:
            return await reply(translate(locale, "refusal.daily_nothing_to_share",
                                         game=texts.GAME_NAMES[game]), "daily_nothing_to_share")
        # One post per person, game, day and group, however often the button is pressed: its own id,
        # marked as an adapter's (a second post with it writes nothing).
        who = hashlib.sha256(member(user).encode()).hexdigest()[:16]
        post_id = f"dsh:{who}:{game}:{daily.day_name(daily.day_of(now))}:{words[2]}"
        group = Room(platform=user.platform, chat=chat, kind="group")
        await self.post(replace(inp, room=group, cid=post_id, marked=True, replaces=None), text)
        return await reply(translate(locale, "daily.shared", group=groups[chat] or f"…{chat[-4:]}"))

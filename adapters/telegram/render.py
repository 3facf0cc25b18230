"""Outbox messages to Telegram messages: pure functions, no IO.

:func:`route` turns one outbox message into what the sender must do: *show* content in a slot (a
message edited in place: the table in a group, the hand of a player, the one message of a private
match) or *post* a new message (replies, summaries).  Nothing here decides what anyone may see: the
service addressed each message and filtered its view; a hand is only ever addressed to its player,
whose private chat with the bot has the player's user id as its chat id.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo

from adapters.telegram.callbacks import Lobby
from adapters.telegram.texts import announcements, hand_text, lobby_text, table_text
from service.platform.outbox import Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import move_text, render_view
from service.protocol.text import render as render_item

PLATFORM = "telegram"
MAX_TEXT = 4096
ROW = 3
# Slots: the one message of a table in a chat.
MAIN = "main"
# Ranks break ties between contents of one version: a hand beats the room's view of the same version.
ROOM_RANK, HAND_RANK, FINAL_RANK = 0, 1, 2
# The command id prefix of a typed /hand: the hand it causes is sent anew, at the bottom of the chat.
HAND_PREFIX = "tg:h:"
# The time left a group's table shows: "under N s" for these N (largest first).
MILESTONES = (60, 30, 10)


Rows = tuple[tuple[tuple[str, str, str], ...], ...]


@dataclass(frozen=True)
class Content:
    """A message's text and inline keyboard (rows of ``(text, "data"|"url"|"web_app", value)``).
    ``pages``: other keyboards the message can switch to (a two-step pick of a move,
    :mod:`adapters.telegram.keyboards`), by name; kept with the content in Redis."""

    text: str
    rows: Rows = ()
    pages: tuple[tuple[str, Rows], ...] = ()

    def markup(self) -> InlineKeyboardMarkup | None:
        """The aiogram keyboard (None: no keyboard)."""
        if not self.rows:
            return None
        keyboard = [[_button(t, k, v) for t, k, v in row] for row in self.rows]
        return InlineKeyboardMarkup(inline_keyboard=keyboard)

    def digest(self) -> str:
        """A digest of text and keyboard: an edit to identical content is never sent."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:32]

    def to_json(self) -> dict[str, Any]:
        """A JSON form (kept in Redis, to send again later)."""
        out: dict[str, Any] = {"text": self.text, "rows": [[list(b) for b in row] for row in self.rows]}
        if self.pages:
            out["pages"] = [[name, [[list(b) for b in row] for row in rows]] for name, rows in self.pages]
        return out

    @classmethod
    def of_message(cls, text: str | None, markup: InlineKeyboardMarkup | None) -> Content:
        """What a message received from Telegram shows (to compare with what it should show)."""
        def one(b: InlineKeyboardButton) -> tuple[str, str, str]:
            if b.url:
                return b.text, "url", b.url
            if b.web_app:
                return b.text, "web_app", b.web_app.url
            return b.text, "data", b.callback_data or ""
        rows = tuple(tuple(one(b) for b in row) for row in (markup.inline_keyboard if markup else []))
        return cls(text or "", rows)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Content:
        """Read :meth:`to_json` back."""
        def rows(raw: Any) -> Rows:
            return tuple(tuple((b[0], b[1], b[2]) for b in row) for row in raw)

        pages = tuple((str(name), rows(r)) for name, r in data.get("pages") or [])
        return cls(data["text"], rows(data.get("rows", [])), pages)


def _button(text: str, kind: str, value: str) -> InlineKeyboardButton:
    if kind == "url":
        return InlineKeyboardButton(text=text, url=value)
    if kind == "web_app":
        return InlineKeyboardButton(text=text, web_app=WebAppInfo(url=value))
    return InlineKeyboardButton(text=text, callback_data=value)


@dataclass(frozen=True)
class Show:
    """Show ``content`` in the slot ``(chat, table, slot)``: edit its message, or send one."""

    chat: str
    table: str
    slot: str
    rank: tuple[int, int]
    content: Content
    ids: tuple[str, ...] = ()
    fresh: bool = False  # send a new message even if the slot has one (the hand, brought to the bottom)
    who: str = ""  # the player's name, for a hand (to tell them in the group how to start the bot)
    linger: bool = False  # a group's running table: waits longer, so that several moves merge
    locale: str = "en"


@dataclass(frozen=True)
class Post:
    """Send a new message; ``key`` (the outbox message id) makes a redelivery send nothing twice."""

    chat: str
    content: Content
    key: str


@dataclass(frozen=True)
class Edit:
    """Edit one given message (a settings keyboard): no slot, nothing kept in Redis."""

    chat: str
    message_id: int
    content: Content


@dataclass
class Routed:
    """What one outbox message asks of the adapter."""

    ops: list[Show | Post | Edit] = field(default_factory=list)
    group_table: tuple[str, str] | None = None  # (chat, table): a group shows this table
    # (chat, table, the winners' user ids, the name of each person seated by user id): a group's end
    group_result: tuple[str, str, list[str], dict[str, str]] | None = None


def seat_names(msg: Message) -> list[str] | None:
    """The seat names a message draws its view with (its deferred ``{"view": [names]}`` line), if any."""
    for item in getattr(msg, "lines", None) or []:
        if isinstance(item, dict) and isinstance(item.get("view"), list):
            return [render_item(n, msg.locale) for n in item["view"]]
    return None


def since_line(msg: Message, names: list[str] | None, most: int = 6) -> str | None:
    """The moves the others made since the reader's last one, from the reader's own view (its
    history is public): AI players answer in milliseconds, and their moves would otherwise go by
    unseen between two edits.  None when there is at most one (the view's "last move" says it)."""
    view = msg.view or {}
    seat, history = view.get("seat"), view.get("history") or []
    since: list[dict[str, Any]] = []
    for entry in reversed(history):
        if not isinstance(entry, dict) or entry.get("seat") == seat:
            break
        since.append(entry)
    if len(since) < 2:
        return None
    game = view.get("game")

    def who(s: int) -> str:
        return names[s] if names and 0 <= s < len(names) else translate(msg.locale, "view.player", n=s + 1)

    moves = [f"{who(e['seat'])}: {move_text(game, e['move'], msg.locale)}" for e in reversed(since[:most])]
    return translate(msg.locale, "tg.since", moves=" · ".join(moves))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def lobby_rows(locale: str, table: str) -> tuple[tuple[tuple[str, str, str], ...], ...]:
    """The lobby's buttons: Join, Leave / Add AI, Settings / Start, Cancel."""
    def b(op: str) -> tuple[str, str, str]:
        return translate(locale, f"tg.btn.{op}"), "data", Lobby(op=op, table=table).pack()

    return ((b("join"), b("leave")), (b("bots"), b("settings")), (b("start"), b("cancel")))


def hand_link(locale: str, bot_username: str, table: str) -> tuple[str, str, str]:
    """The "My hand" button: a deep link that opens the private chat with the bot on this table."""
    return translate(locale, "tg.btn.hand"), "url", f"https://t.me/{bot_username}?start={table}"


def web_button(msg: Message, *, group: bool, bot_username: str) -> tuple[str, str, str] | None:
    """The web table's button, when the message carries a link (the web table is configured).

    In a private chat, a Mini App (``web_app``) on the message's own link.  In a group, where Telegram
    allows no ``web_app`` button, a ``startapp`` deep link: the Mini App opens for whoever taps it,
    on this table, and shows that person's own hand if they play (they are known by Telegram's
    ``initData``, not by the link, which everyone in the group can tap).  A replay is public: its page
    is linked as it is."""
    if not msg.link or not msg.table:
        return None
    label = translate(msg.locale, "tg.btn.replay_web" if msg.kind == "replay" else "tg.btn.web")
    if not group:
        return label, "web_app", msg.link
    if msg.kind == "replay":
        return label, "url", msg.link
    return label, "url", f"https://t.me/{bot_username}?startapp={msg.table}"


def _web_rows(msg: Message, group: bool, bot_username: str) -> tuple[tuple[tuple[str, str, str], ...], ...]:
    button = web_button(msg, group=group, bot_username=bot_username)
    return ((button,),) if button else ()


def _time_left(msg: Message, now: float, written_at: float, turn_seconds: float) -> str | None:
    """The time the person to move has left: the service's deadline in the message (None: no turn
    timer, or an AI player's turn); estimated from ``turn_seconds`` only for a message written
    before the service sent deadlines (it has no ``deadline`` field at all)."""
    view = msg.view or {}
    if view.get("to_move") is None:
        return None
    if "deadline" in msg.model_fields_set:
        deadline = msg.deadline
    else:
        deadline = written_at + turn_seconds if turn_seconds > 0 else None
    if deadline is None:
        return None
    left = deadline - now
    if left <= 0:
        return translate(msg.locale, "tg.time_up")
    # "under N s", N the next milestone up: true until the next edit, made when a milestone is
    # crossed (adapters.telegram.consumer.OutboxHandler's countdown), down to the last 10 s.
    bound = next((m for m in reversed(MILESTONES) if left <= m), None)
    if bound is None:
        return translate(msg.locale, "tg.time_left", seconds=round(left))
    return translate(msg.locale, "tg.time_under", seconds=bound)


def milestones(msg: Message, now: float) -> list[float]:
    """When a group's table must be edited again for its time left to stay true (unix seconds)."""
    view = msg.view or {}
    if view.get("to_move") is None or msg.deadline is None:
        return []
    return [msg.deadline - m for m in MILESTONES if msg.deadline - m > now]


def _winners(view: dict[str, Any]) -> list[int]:
    return list(view.get("winners") or (view.get("result") or {}).get("winners") or [])


def group_people(msg: Message, seat_names: list[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """Who won a match in a group and who played it, by Telegram user id (the service's ``seats``):
    the winners' ids and each person's name.  An AI player's seat is nobody's: its wins count for no
    one.  A message without ``seats`` (written before the service sent them) names no one."""
    seats = msg.seats or []
    people = {p.user: p.name or (seat_names[i] if seat_names and i < len(seat_names) else p.user)
              for i, p in enumerate(seats) if p is not None and p.platform == PLATFORM}
    won = (seats[w] for w in _winners(msg.view or {}) if 0 <= w < len(seats))
    return sorted({p.user for p in won if p is not None and p.user in people}), people


def route(msg: Message, *, bot_username: str, now: float = 0.0, written_at: float = 0.0,
          turn_seconds: float = 0.0, seat_names: list[str] | None = None, auto_pass: bool = False) -> Routed:
    """What to do on Telegram for one outbox message (nothing when it is for another platform).
    ``auto_pass``: the bot passes for the player in a moment (the hand says so)."""
    out = Routed()
    to, table, loc = msg.to, msg.table or "", msg.locale
    if to.player is not None:
        if to.player.platform != PLATFORM:
            return out
        chat = to.player.user
        web = _web_rows(msg, False, bot_username)
        if msg.kind == "hand" and table:
            since = since_line(msg, seat_names) if msg.actions else None
            drawn = hand_text(msg, seat_names)
            if auto_pass:
                drawn = f"{drawn}\n{translate(loc, 'tg.auto_pass')}"
            text = f"{since}\n\n{drawn}" if since else drawn
            from adapters.telegram.keyboards import move_keyboard  # it builds on Content, defined here

            keys = move_keyboard(msg)
            content = Content(_clip(text), keys.rows + web, keys.pages)
            out.ops.append(Show(chat, table, MAIN, (msg.version, HAND_RANK), content, (msg.id,),
                                who=to.player.name or to.player.user, locale=loc,
                                fresh=msg.id.startswith(HAND_PREFIX)))
        else:
            from adapters.telegram.replies import reply_ops  # it builds on Content, defined here

            out.ops += reply_ops(msg, chat, web, bot_username)
        return out
    room = to.room
    if room is None or room.platform != PLATFORM:
        return out
    chat, group = room.chat, room.kind == "group"
    view = msg.view or {}
    web = _web_rows(msg, group, bot_username)
    if msg.kind == "table" and table:
        rows: tuple[tuple[tuple[str, str, str], ...], ...] = () if group else web
        text = msg.text
        if group:
            out.group_table = (chat, table)
            if view.get("status") == "lobby":
                rows = lobby_rows(loc, table)
                text = lobby_text(msg)
            elif "status" not in view:  # an engine view: the match runs
                rows = ((hand_link(loc, bot_username, table), *(web[0] if web else ())),)
                text = table_text(msg, seat_names)
                left = _time_left(msg, now, written_at, turn_seconds)
                text = f"{text}\n{left}" if left else text
                # What matters on its own is posted apart: a later edit of the table cannot lose it.
                out.ops += [Post(chat, Content(_clip(line)), f"{msg.id}:a{i}")
                            for i, line in enumerate(announcements(msg))]
        content = Content(_clip(text), rows)
        linger = group and "status" not in view
        out.ops.append(Show(chat, table, MAIN, (msg.version, ROOM_RANK), content, (msg.id,), linger=linger))
        return out
    if msg.kind == "match_over" and table:
        final = render_view(view, loc, names=seat_names) if view else msg.text
        out.ops.append(Show(chat, table, MAIN, (msg.version, FINAL_RANK), Content(_clip(final), web),
                            (msg.id,)))
        summary = "\n\n".join([translate(loc, "tg.summary", text=msg.text),
                               translate(loc, "tg.replay", table=table)])
        out.ops.append(Post(chat, Content(_clip(summary)), msg.id))
        if group:
            out.group_result = (chat, table, *group_people(msg, seat_names))
        return out
    from adapters.telegram.replies import reply_ops

    out.ops += reply_ops(msg, chat, web, bot_username)
    return out

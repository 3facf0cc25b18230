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

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from adapters.telegram.callbacks import FLAGS, GAMES, Cfg, Lobby
from service.platform.outbox import Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import move_text, render_view
from service.protocol.text import render as render_item

PLATFORM = "telegram"
MAX_TEXT = 4096
MAX_BUTTONS = 99
ROW = 3
# Slots: the one message of a table in a chat.
MAIN = "main"
# Ranks break ties between contents of one version: a hand beats the room's view of the same version.
ROOM_RANK, HAND_RANK, FINAL_RANK = 0, 1, 2


@dataclass(frozen=True)
class Content:
    """A message's text and inline keyboard (rows of ``{"text", "data"|"url"}``)."""

    text: str
    rows: tuple[tuple[tuple[str, str, str], ...], ...] = ()

    def markup(self) -> InlineKeyboardMarkup | None:
        """The aiogram keyboard (None: no keyboard)."""
        if not self.rows:
            return None
        return InlineKeyboardMarkup(inline_keyboard=[
            [InlineKeyboardButton(text=t, url=v) if k == "url"
             else InlineKeyboardButton(text=t, callback_data=v) for t, k, v in row] for row in self.rows])

    def digest(self) -> str:
        """A digest of text and keyboard: an edit to identical content is never sent."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:32]

    def to_json(self) -> dict[str, Any]:
        """A JSON form (kept in Redis, to send again later)."""
        return {"text": self.text, "rows": [[list(b) for b in row] for row in self.rows]}

    @classmethod
    def of_message(cls, text: str | None, markup: InlineKeyboardMarkup | None) -> Content:
        """What a message received from Telegram shows (to compare with what it should show)."""
        rows = tuple(tuple((b.text, "url", b.url) if b.url else (b.text, "data", b.callback_data or "")
                           for b in row) for row in (markup.inline_keyboard if markup else []))
        return cls(text or "", rows)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Content:
        """Read :meth:`to_json` back."""
        rows = data.get("rows", [])
        return cls(data["text"], tuple(tuple((b[0], b[1], b[2]) for b in row) for row in rows))


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

    ops: list[Show | Post] = field(default_factory=list)
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


def action_rows(msg: Message) -> tuple[tuple[tuple[str, str, str], ...], ...]:
    """The legal moves as buttons (the service offers no illegal one); "pass" gets a row of its own."""
    plays = [(a.label, "data", a.token) for a in msg.actions[:MAX_BUTTONS] if a.move != "pass"]
    passes = [(a.label, "data", a.token) for a in msg.actions if a.move == "pass"]
    rows = [tuple(plays[i:i + ROW]) for i in range(0, len(plays), ROW)]
    if passes:
        rows.append(tuple(passes))
    return tuple(rows)


def settings_content(locale: str, cfg: Cfg) -> Content:
    """The settings keyboard of ``/play`` (private) or ``/new`` (group)."""
    game = GAMES[cfg.game]
    rows: list[tuple[tuple[str, str, str], ...]] = []
    rows.append(((translate(locale, "tg.btn.players", n=cfg.players), "data",
                  cfg.model_copy(update={"op": "n"}).pack()),))
    for i, (label, _) in enumerate(FLAGS[cfg.game]):
        on = bool(cfg.flags >> i & 1)
        text = translate(locale, "tg.btn.on" if on else "tg.btn.off", option=translate(locale, label))
        rows.append(((text, "data", cfg.model_copy(update={"op": f"t{i}"}).pack()),))
    go = "tg.btn.play" if cfg.where == "p" else "tg.btn.open"
    rows.append(((translate(locale, go), "data", cfg.model_copy(update={"op": "go"}).pack()),))
    text = translate(locale, "tg.settings", game=translate(locale, f"game.{game}"), players=cfg.players)
    return Content(text, tuple(rows))


def games_content(locale: str, where: str, text: str) -> Content:
    """A text with one button per game, each opening the settings keyboard."""
    row = tuple((translate(locale, f"game.{g}"), "data",
                 Cfg(where=where, game=k, players=4 if k == "c" else 3, flags=0, op="show").pack())
                for k, g in GAMES.items())
    return Content(text, (row,))


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
    return translate(msg.locale, "tg.time_left", seconds=max(0, round(deadline - now)))


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
          turn_seconds: float = 0.0, seat_names: list[str] | None = None) -> Routed:
    """What to do on Telegram for one outbox message (nothing when it is for another platform)."""
    out = Routed()
    to, table, loc = msg.to, msg.table or "", msg.locale
    if to.player is not None:
        if to.player.platform != PLATFORM:
            return out
        chat = to.player.user
        if msg.kind == "hand" and table:
            since = since_line(msg, seat_names) if msg.actions else None
            text = f"{since}\n\n{msg.text}" if since else msg.text
            content = Content(_clip(text), action_rows(msg))
            out.ops.append(Show(chat, table, MAIN, (msg.version, HAND_RANK), content, (msg.id,),
                                who=to.player.name or to.player.user, locale=loc))
        else:
            out.ops.append(Post(chat, Content(_clip(msg.text)), msg.id))
        return out
    room = to.room
    if room is None or room.platform != PLATFORM:
        return out
    chat, group = room.chat, room.kind == "group"
    view = msg.view or {}
    if msg.kind == "table" and table:
        rows: tuple[tuple[tuple[str, str, str], ...], ...] = ()
        text = msg.text
        if group:
            out.group_table = (chat, table)
            if view.get("status") == "lobby":
                rows = lobby_rows(loc, table)
            elif "status" not in view:  # an engine view: the match runs
                rows = ((hand_link(loc, bot_username, table),),)
                left = _time_left(msg, now, written_at, turn_seconds)
                text = f"{text}\n{left}" if left else text
        content = Content(_clip(text), rows)
        linger = group and "status" not in view
        out.ops.append(Show(chat, table, MAIN, (msg.version, ROOM_RANK), content, (msg.id,), linger=linger))
        return out
    if msg.kind == "match_over" and table:
        final = render_view(view, loc, names=seat_names) if view else msg.text
        out.ops.append(Show(chat, table, MAIN, (msg.version, FINAL_RANK), Content(_clip(final)), (msg.id,)))
        summary = "\n\n".join([translate(loc, "tg.summary", text=msg.text),
                               translate(loc, "tg.replay", table=table)])
        out.ops.append(Post(chat, Content(_clip(summary)), msg.id))
        if group:
            out.group_result = (chat, table, *group_people(msg, seat_names))
        return out
    out.ops.append(Post(chat, Content(_clip(msg.text)), msg.id))
    return out

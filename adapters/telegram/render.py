"""Outbox messages to Telegram messages: pure functions, no IO.

:func:`route` turns one outbox message into what the sender must do: *show* content in a slot (a
message edited in place: the table in a group, the hand of a player, the one message of a private
match) or *post* a new message (replies, summaries).  Nothing here decides what anyone may see: the
service addressed each message and filtered its view; a hand is only ever addressed to its player,
whose private chat with the bot has the player's user id as its chat id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapters.telegram.content import (
    FINAL_RANK,
    HAND_PREFIX,
    HAND_RANK,
    MAIN,
    PLATFORM,
    ROOM_RANK,
    Content,
    Edit,
    Post,
    Rows,
    Show,
    clip,
)
from adapters.telegram.keyboards import hand_link, lobby_rows, move_keyboard, web_rows
from adapters.telegram.replies import reply_ops
from adapters.telegram.texts import announcements, hand_text, lobby_text, table_text
from service.platform.outbox import Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import move_text, render_view
from service.protocol.text import render as render_item

# The time left a group's table shows: "under N s" for these N (largest first).
MILESTONES = (60, 30, 10)


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
          turn_seconds: float = 0.0, seat_names: list[str] | None = None) -> Routed:
    """What to do on Telegram for one outbox message (nothing when it is for another platform)."""
    out = Routed()
    to, table, loc = msg.to, msg.table or "", msg.locale
    if to.player is not None:
        if to.player.platform != PLATFORM:
            return out
        chat = to.player.user
        web = web_rows(msg, False, bot_username)
        if msg.kind == "hand" and table:
            since = since_line(msg, seat_names) if msg.actions else None
            drawn = hand_text(msg, seat_names)
            text = f"{since}\n\n{drawn}" if since else drawn
            keys = move_keyboard(msg)
            content = Content(clip(text), keys.rows + web, keys.pages)
            out.ops.append(Show(chat, table, MAIN, (msg.version, HAND_RANK), content, (msg.id,),
                                who=to.player.name or to.player.user, locale=loc,
                                fresh=msg.id.startswith(HAND_PREFIX), turn=bool(msg.actions)))
        else:
            out.ops += reply_ops(msg, chat, web, bot_username)
        return out
    room = to.room
    if room is None or room.platform != PLATFORM:
        return out
    chat, group = room.chat, room.kind == "group"
    view = msg.view or {}
    web = web_rows(msg, group, bot_username)
    if msg.kind == "table" and table:
        rows: Rows = () if group else web
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
                out.ops += [Post(chat, Content(clip(line)), f"{msg.id}:a{i}")
                            for i, line in enumerate(announcements(msg))]
        content = Content(clip(text), rows)
        linger = group and "status" not in view
        out.ops.append(Show(chat, table, MAIN, (msg.version, ROOM_RANK), content, (msg.id,), linger=linger))
        return out
    if msg.kind == "match_over" and table:
        final = render_view(view, loc, names=seat_names) if view else msg.text
        out.ops.append(Show(chat, table, MAIN, (msg.version, FINAL_RANK), Content(clip(final), web),
                            (msg.id,)))
        summary = "\n\n".join([translate(loc, "tg.summary", text=msg.text),
                               translate(loc, "tg.replay", table=table)])
        out.ops.append(Post(chat, Content(clip(summary)), msg.id))
        if group:
            out.group_result = (chat, table, *group_people(msg, seat_names))
        return out
    out.ops += reply_ops(msg, chat, web, bot_username)
    return out

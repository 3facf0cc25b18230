"""The words of the bot's messages, drawn from an outbox message's view and deferred lines.  Pure.

The service's plain text (``Message.text``) is written for any chat; a Telegram message has buttons
beside it, so some of it would be said twice: the hand's legal moves (they are the buttons), "your
turn" twice, and in a group the last move (the view says it) or the deal's commitment (64 hex
digits; ``/replay`` verifies the deal).  Here the text is drawn again from the view and the lines:

- :func:`hand_text`: the view without the list of legal moves;
- :func:`table_text`: a group's running table: the view, and the lines that are not moves;
- :func:`lobby_text`: the roster (seats, AI players, free seats), the options, the latest event
  and what to do next, every time (a join never replaces the roster with its one line);
- :func:`announcements`: the lines that matter on their own (an AI player took a seat, a player
  was removed): posted as messages of their own, so that no later edit merges them away;
- :func:`round_line`: how the last round ended (535, a Cinquillo match of several rounds), the first
  line of the table and of every hand until the next round ends, so no edit merges it away either.
"""

from __future__ import annotations

from typing import Any

from service.platform.outbox import Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import join, player_name, render_view
from service.protocol.text import render as render_item

# Lines posted on their own in a group (never merged into the next edit of the table).
ANNOUNCED = frozenset({"table.bot_took_seat_left", "table.bot_took_seat_timeouts", "table.kicked",
                       "table.kicked_bot"})
# Lines a Telegram message leaves out: its buttons or its view say them already.
_SAID = frozenset({"table.your_turn"})


def _key(item: Any) -> str | None:
    return item.get("t") if isinstance(item, dict) else None


def _is_view(item: Any) -> bool:
    return isinstance(item, dict) and "view" in item


def _lines(msg: Message, skip: frozenset[str] = frozenset(), moves: bool = True) -> list[str]:
    out = []
    for item in msg.lines or []:
        key = _key(item)
        if _is_view(item) or key in _SAID or key in skip:
            continue
        if not moves and key is not None and key.startswith("table.moved_"):
            continue
        if key == "table.started":  # without the commitment: 64 hex digits nobody reads here
            item = {"t": "tg.started", "p": {"players": item.get("p", {}).get("players", "")}}
        text = render_item(item, msg.locale, msg.view)
        if text:
            out.append(text)
    return out


def round_line(view: dict[str, Any], locale: str, names: list[str] | None) -> str | None:
    """How the last round ended, while the match goes on (None: no round ended yet, or it is over).
    Public facts only: who went out or won, the points of the round, how many cards were left."""
    rounds = view.get("rounds") or []
    if not rounds or view.get("over") or not isinstance(rounds[-1], dict):
        return None
    last = rounds[-1]

    def who(seat: int) -> str:
        return player_name(seat, locale, names, view.get("seat"))

    def per_seat(values: list[Any]) -> str:
        return " · ".join(f"{who(i)} {v}" for i, v in enumerate(values))

    n = last.get("round", len(rounds))
    if view.get("game") == "535" and last.get("went_out") is not None:
        return translate(locale, "tg.round_over_535", round=n, player=who(last["went_out"]),
                         points=per_seat([f"+{p}" for p in last.get("points") or []]))
    winners = last.get("winners") or []
    return translate(locale, "tg.round_over", round=n, players=join([who(w) for w in winners], locale),
                     cards=per_seat(list(last.get("cards_left") or [])))


def _with_round(view: dict[str, Any], locale: str, names: list[str] | None, lines: list[str]) -> str:
    line = round_line(view, locale, names)
    return "\n".join([line, *lines] if line else lines)


def hand_text(msg: Message, names: list[str] | None) -> str:
    """A private hand: how the last round ended, the view (its legal moves are the buttons, not a
    line) and the other lines."""
    view = msg.view or {}
    if not msg.lines or not view.get("game"):
        return msg.text
    drawn = render_view({**view, "legal_moves": []}, msg.locale, names=names)
    return _with_round(view, msg.locale, names, [*_lines(msg), drawn])


def table_text(msg: Message, names: list[str] | None) -> str:
    """A group's running table: how the last round ended, what happened that is not a move, then
    the view (its last move)."""
    view = msg.view or {}
    if not msg.lines or not view.get("game"):
        return msg.text
    lines = _lines(msg, skip=ANNOUNCED, moves=False)
    return _with_round(view, msg.locale, names, [*lines, render_view(view, msg.locale, names=names)])


def announcements(msg: Message) -> list[str]:
    """The lines of ``msg`` that a group gets as messages of their own."""
    return [render_item(i, msg.locale, msg.view) for i in msg.lines or [] if _key(i) in ANNOUNCED]


def _option_words(view: dict[str, Any], locale: str) -> str:
    words = []
    for k, v in sorted((view.get("options") or {}).items()):
        if v is True:
            words.append(k)
        elif v not in (False, None):
            words.append(f"{k}={v}")
    turn = view.get("turn_seconds")
    if turn:
        words.append(translate(locale, "tg.lobby.turn", seconds=int(turn)))
    return " · ".join(words) or translate(locale, "tg.lobby.no_options")


def lobby_text(msg: Message) -> str:
    """An open table: who sits where, the options, the latest event and what to do next."""
    view, loc = msg.view or {}, msg.locale
    seats = list(view.get("seats") or [])
    most = int(view.get("max_seats") or len(seats))
    game = translate(loc, f"game.{view.get('game')}")
    lines = [translate(loc, "tg.lobby.title", game=game, seated=len(seats), seats=most)]
    for i in range(most):
        if i >= len(seats):
            who = translate(loc, "tg.lobby.free")
        elif seats[i] is None:
            who = translate(loc, "tg.lobby.ai", name=translate(loc, "table.bot_name", n=i + 1))
        else:
            who = seats[i]
        lines.append(f"{i + 1}. {who}")
    lines.append(translate(loc, "tg.lobby.options", options=_option_words(view, loc)))
    latest = _lines(msg)
    if latest:
        lines += ["", *latest]
    lines += ["", translate(loc, "tg.lobby.next")]
    return "\n".join(lines)

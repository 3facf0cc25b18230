"""The outbox messages a decision causes: who is told what.  Pure.

Rooms get the public view (``engine.view(state, None)``); a seated person gets their private view
(``engine.view(state, seat)``) and, when it is their turn, one signed action per legal move.  Nothing
else about the engine state reaches a message (G-1): the texts are drawn from those views.  The seed
appears only in the message that announces the end of the match.

Texts are written as deferred items (:mod:`service.protocol.text`) and put into words in the recipient's
language when the message is read, which keeps formatting off the worker's hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import engine
from service.domain.commands import TableCommand
from service.domain.embargo import deal_shown, embargo_of, withheld
from service.domain.identities import Player, Room
from service.domain.messages import Wire, action_wire, recipient_wire, wire, wire_json, wire_of
from service.domain.tables import daily_table, rematch
from service.domain.tables.announce import event_line, names, person, seat_name
from service.domain.tables.decide import Decision, Refused
from service.domain.tables.effects import effects
from service.domain.tables.outcome import outcome, round_ended
from service.domain.tables.secrecy import is_private
from service.domain.tables.state import FINISHED, RUNNING, Table
from service.domain.tokens import issue_many
from service.protocol import chats, text

__all__ = ["Wire", "lobby_view", "messages_for", "names", "refusal_line", "refusal_messages",
           "replay_messages", "reply_to", "seat_name", "seat_people", "turn_deadline",
           "wire_json"]


def lobby_view(t: Table) -> dict[str, Any]:
    """The public view of a table with no match running (no cards in it)."""
    view = {"table": t.id, "game": t.game, "status": t.status, "max_seats": t.max_seats,
            "seats": [s.player.name or s.player.user if s.human and s.player else None for s in t.seats],
            "options": dict(t.options), "turn_seconds": t.turn_seconds}
    if t.rematch_of is not None:  # a rematch: whose answer it waits for (names are public)
        view["rematch_of"] = t.rematch_of
        view["waiting"] = t.waiting_for()
    return view


def turn_deadline(t: Table) -> float | None:
    """When the person to move runs out of time (unix seconds), or None (no timer, an AI's turn)."""
    return _deadline(t, t.to_move())


def _deadline(t: Table, mover: int | None) -> float | None:
    if t.status != RUNNING or t.turn_seconds <= 0 or mover is None or not t.seats[mover].human:
        return None
    return t.turn_since + t.turn_seconds


def _to(room: Room | None = None, player: Player | None = None) -> Wire:
    return recipient_wire(room=wire_of(room) if room else None, player=wire_of(player) if player else None)


class _Out:
    """Collects messages with ids derived from the command id (so a retry writes the same ids)."""

    def __init__(self, cmd: TableCommand, table: str | None, version: int, game: str | None) -> None:
        self.cmd, self.table, self.version, self.game = cmd, table, version, game
        self.messages: list[Wire] = []
        self.deadline: float | None = None  # the turn's deadline, for every message (see Message)
        self.code: str | None = None  # a refusal's code, for its reply
        self.auto_pass = False  # the service passes for a person whose only move is a pass

    def add(self, to: Wire, locale: str, kind: str, lines: list[text.Item],
            view: dict[str, Any] | None = None, actions: list[Wire] | None = None,
            seats: list[Wire | None] | None = None, result: dict[str, Any] | None = None) -> None:
        message = wire(id=f"{self.cmd.id}:{len(self.messages)}", table=self.table, version=self.version,
                       to=to, locale=locale, kind=kind, lines=lines, game=self.game, view=view,
                       actions=actions or (), deadline=self.deadline, code=self.code)
        if seats is not None:  # only the end of a match carries them (Message.seats)
            message["seats"] = seats
        if result is not None:  # only the end of a round or of the match (Message.outcome)
            message["outcome"] = result
        self.messages.append(message)


def seat_people(t: Table) -> list[Wire | None]:
    """Who sits in each seat, for the end of a match: the person (platform, user id, name), or None
    for a seat an AI player plays (one that took a person's seat over too, as the winners' names
    say "AI n" for it).  Identities and names are public, unlike cards (G-1)."""
    return [wire_of(s.player) if s.human and s.player is not None else None for s in t.seats]


def _hand_message(out: _Out, t: Table, seat: int, secret: bytes, locale: str,
                  view: dict[str, Any] | None = None, seat_names: list[text.Item] | None = None,
                  mover: int | None = -1, result: dict[str, Any] | None = None) -> None:
    """The private message of one seat: its view and, on its turn, its legal moves as actions.

    ``view`` (the seat's own), ``seat_names`` and ``mover`` may be given when the caller has them;
    ``result``: the outcome of a round or match that just ended (shown first, and at the end of the
    match a headline for this seat: won, lost)."""
    player = t.seats[seat].player
    assert player is not None
    if view is None:
        view = engine.view(t.engine, seat)
    if mover == -1:
        mover = t.to_move()
    actions: list[Wire] = []
    seat_names = names(t) if seat_names is None else seat_names
    lines: list[text.Item] = []
    if result is not None:
        winners = (result.get("standings") or {}).get("winners")
        if t.status == FINISHED and winners is not None:
            lines.append(text.t("table.you_won" if seat in winners else "table.you_lost"))
        lines.append(text.outcome(seat_names))
    lines.append(text.view(seat_names))
    if t.status == RUNNING and mover == seat and t.seats[seat].human:
        moves = view.get("legal_moves") or engine.legal_moves(t.engine)
        tokens = issue_many(secret, table=t.id, seat=seat, version=t.version, moves=moves)
        actions = [action_wire(move=m, token=tok) for m, tok in zip(moves, tokens, strict=True)]
        lines.append(text.t("table.your_turn"))
        if out.auto_pass and moves == ["pass"]:
            lines.append(text.t("table.auto_pass"))  # decide's tick makes it in a moment
    elif t.status == FINISHED and rematch.offered(t):
        # The end: "Play again" with the same people, options and seats (service.domain.tables.rematch).
        [token] = issue_many(secret, table=t.id, seat=seat, version=t.version, moves=[rematch.REMATCH])
        actions = [action_wire(move=rematch.REMATCH, token=token)]
    out.add(_to(player=player), locale, "hand", lines, view, actions, result=result)


def _locale_of(t: Table, seat: int, cmd: TableCommand) -> str:
    s = t.seats[seat]
    return cmd.locale if cmd.actor is not None and cmd.actor.same(s.player) else s.locale


def messages_for(d: Decision, cmd: TableCommand, secret: bytes, *, auto_pass: bool = False) -> list[Wire]:
    """The messages an accepted command causes (possibly none: a stale tick).  ``auto_pass``: the
    service passes for a person whose only move is a pass (their hand says so)."""
    t = d.after
    if t is None:
        return []
    running = t.status == RUNNING
    mover = t.to_move()  # None unless running
    out = _Out(cmd, t.id, t.version, t.game)
    out.deadline = _deadline(t, mover)
    out.auto_pass = auto_pass
    # Who gets their hand: everyone seated when the match starts, whoever asked for it (/hand, or a
    # deep link (/start <table>: a join) of a seated player), the person to move after a change, and
    # a person who just moved (their hand without the card played, and no actions left to press).
    fx = effects(t, d.events, lambda seat: _locale_of(t, seat, cmd))
    hands: list[int] = []
    if running:
        asking = cmd.actor if cmd.name in ("hand", "join", "daily_table") else None
        for seat_no, seat in enumerate(t.seats):
            if not seat.human:
                continue
            # A table that posts in no room (a tournament's, a daily deal's): each person sees every
            # change in their hand.
            changed = seat_no == mover or seat_no in fx.moved or not t.rooms
            if fx.started or (d.events and changed) or (asking is not None and asking.same(seat.player)):
                hands.append(seat_no)
    # Every person's private message tells the truth to the end: the final result when the match
    # ends, and no moves any more for a person whose seat an AI player took (its view, no actions).
    if fx.finished or fx.replaced:
        for seat_no, seat in enumerate(t.seats):
            if seat.player is not None and seat_no not in hands and (fx.finished or seat_no in fx.replaced):
                hands.append(seat_no)
    # The room's view and the hands' views in one go: what they share is computed once.
    public = bool(d.events) and t.engine is not None and t.status in (RUNNING, FINISHED)
    views = engine.views(t.engine, [None, *hands] if public else hands) if public or hands else []
    seat_names = names(t) if running or fx.finished else None
    # A round just ended (the next deal is on the table, untouched) or the match did: its result and
    # the standings, from the public view, on the room's message and every hand (G-1).
    new_deal = public and fx.moved and not fx.finished and round_ended(views[0])
    result = outcome(views[0]) if public and (fx.finished or new_deal) else None
    # The room's end shows the seed, as its line does (none for a shared deal); a hand never does.
    room_result = {**result, "seed": t.seed} if result is not None and fx.finished and deal_shown(
        t, lifted=False) else result
    if new_deal:
        # Every person holds a new hand: each is sent theirs (and the round's result) now, not at
        # their first turn of the new round.
        more = [i for i, seat in enumerate(t.seats)
                if seat.human and seat.player is not None and i not in hands]
        if more:
            hands += more
            views += engine.views(t.engine, more)
    if embargo_of(t) is not None:
        views = [withheld(v) for v in views]  # a shared deal's seed waits for the embargo (535's end view)
    if d.events:
        over = fx.finished
        lines = [line for e in d.events if (line := event_line(t, e)) is not None]
        if public:
            view = views[0]
            if result is not None and seat_names is not None:
                lines.append(text.outcome(seat_names))
            if running and seat_names is not None:
                lines.append(text.view(seat_names))
        else:
            view = lobby_view(t)
        seats = seat_people(t) if over else None
        for i, room in enumerate(t.rooms):
            to = _to(room=room)
            if room.kind == "private" and (owner := t.person_of(i)) is not None:
                # The person in that chat: the room's views keep their order with the person's hand
                # (service.platform.delivery_model.recipient_key), as their own chat shows both.
                to["person"] = wire_of(owner)
            out.add(to, t.locale, "match_over" if over else "table", lines, view, seats=seats,
                    result=room_result)
    for seat_no, seat_view in zip(hands, views[1:] if public else views, strict=True):
        _hand_message(out, t, seat_no, secret, _locale_of(t, seat_no, cmd), seat_view, seat_names, mover,
                      result=result)
    if not d.events and cmd.name == "join" and t.status != RUNNING and t.seat_of(cmd.actor) is not None:
        # A seated player opened the table's link before the match began: tell them so.
        out.add(reply_to(cmd), cmd.locale, "reply", [text.t("table.seated_waiting", table=t.id)])
    if t.tournament is not None and fx.finished:
        # No seed here: other tables of the round may still play this deal; the round's end shows it.
        winners = text.joined([seat_name(t, w) for w in (t.result or {}).get("winners", [])])
        for seat in t.seats:
            if seat.human and seat.player is not None:
                out.add(_to(player=seat.player), seat.locale, "reply",
                        [text.t("tournament.table_over", winners=winners)])
    if daily_table.day_of_table(t) is not None and t.seats and t.seats[0].player is not None:
        # A daily deal's table posts in no room: its start (the commitment) and end go to its person.
        for line in daily_table.reply_lines(t, cmd, fx.started, fx.finished):
            out.add(_to(player=t.seats[0].player), _locale_of(t, 0, cmd), "reply", [line])
    for seat_no in fx.invited:  # a rematch: each person whose seat it keeps is asked
        seat = t.seats[seat_no]
        if seat.player is None:
            continue
        moves = [rematch.ACCEPT, rematch.DECLINE]
        tokens = issue_many(secret, table=t.id, seat=seat_no, version=t.version, moves=moves)
        out.add(_to(player=seat.player), seat.locale, "reply",
                [text.t("table.rematch_invite", name=person(t.creator), game=text.t(f"game.{t.game}"))],
                actions=[action_wire(move=m, token=tok) for m, tok in zip(moves, tokens, strict=True)])
    for player, locale, line in fx.notices:  # a timed-out turn, a seat lost for it
        out.add(_to(player=player), locale, "reply", [line])
    return out.messages


def reply_to(cmd: TableCommand) -> Wire:
    """Where a reply to a command goes: the chat it came from, else the person who sent it."""
    if cmd.room is not None:
        to = _to(room=cmd.room)
        if cmd.room.kind == "private" and cmd.actor is not None:
            # The person in that chat: their replies keep their order with their hand (Recipient).
            to["person"] = wire_of(cmd.actor)
        return to
    return _to(player=cmd.actor)


def refusal_line(refused: Refused, game: str | None = None) -> text.Item:
    """The text of a refusal; an illegal move is explained with the engine's reason (G-2)."""
    if refused.code == "illegal":
        return text.illegal(game, refused.illegal or "illegal", refused.params)
    if refused.code == "wrong_chat" and refused.params.get("command") in chats.restricted():
        return text.t(f"wrong_chat.{refused.params['command']}")  # says where it belongs
    return text.t(f"refusal.{refused.code}", **refused.params)


def refusal_messages(cmd: TableCommand, refused: Refused, table: Table | None) -> list[Wire]:
    """The reply a refused command gets (its stream stays untouched).  A refusal that may say
    something about the sender's hand (:func:`secrecy.is_private`) sent in a group goes to the sender
    alone, where their hand goes, and the group is told only that the move was refused (G-1)."""
    game = table.game if table else None
    out = _Out(cmd, table.id if table else cmd.table, table.version if table else 0, game)
    out.code = refused.code
    line = refusal_line(refused, game)
    if cmd.room is not None and cmd.room.kind == "group" and cmd.actor is not None and is_private(refused):
        out.add(_to(player=cmd.actor), cmd.locale, "reply", [line])
        out.add(_to(room=cmd.room), cmd.locale, "reply",
                [text.t("refusal.move_refused_private", name=person(cmd.actor))])
    else:
        out.add(reply_to(cmd), cmd.locale, "reply", [line])
    return out.messages


def replay_messages(cmd: TableCommand, t: Table, lines: Sequence[text.Item]) -> list[Wire]:
    """The replay of a finished table, sent to whoever asked."""
    out = _Out(cmd, t.id, t.version, t.game)
    out.add(reply_to(cmd), cmd.locale, "replay", list(lines), engine.view(t.engine, None))
    return out.messages

"""The events that open, seat and start a tournament's table at once (the ``tournament_table``
command, which only the tournament director sends: no chat command or button produces it)."""

from __future__ import annotations

import hashlib

from service.domain.commands import TableCommand
from service.domain.events import BotsAdded, Event, MatchStarted, PlayerJoined, TableCreated
from service.domain.identities import Player


def tournament_table_events(cmd: TableCommand) -> list[Event]:
    """A table of a tournament round, created in its group (``cmd.room``), every seat taken as the
    draw says (a person, or an AI player), and started on the round's seed: every table of the round
    deals the same cards (duplicate deals), and all show the same commitment."""
    a = cmd.args
    assert cmd.actor is not None and cmd.room is not None
    seats = list(a["seats"])
    seed = str(a["seed"])
    events: list[Event] = [TableCreated(game=str(a["game"]), options=dict(a.get("options") or {}),
                                        max_seats=len(seats), creator=cmd.actor, room=cmd.room,
                                        locale=cmd.locale, turn_seconds=float(a["turn_seconds"]),
                                        tournament=str(a["tournament"]))]
    for i, s in enumerate(seats):
        if "bot" in s:
            events.append(BotsAdded(seats=[i], level=str(s["bot"])))
        else:
            events.append(PlayerJoined(seat=i, player=Player.model_validate(s["player"]),
                                       locale=str(s.get("locale", cmd.locale))))
    events.append(MatchStarted(seed=seed, commitment=hashlib.sha256(seed.encode()).hexdigest(),
                               players=len(seats)))
    return events

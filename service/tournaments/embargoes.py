"""Whether the embargo on a table's shared deal has lifted: the IO half of
:mod:`service.domain.embargo` (which holds the rule the surfaces apply).  It sits with the
tournaments because the one rule built in reads them (the service's layers put it above them); the
surfaces above (the worker, the web table's watch, the operator's tools) ask it.

An embargo with ``until`` lifts at that time.  Otherwise its kind's rule decides, registered here
with :func:`register`; the ``tournament`` kind is built in: a round's deal is shown once the round has
finished (the tournament's ``RoundFinished``), or, for a tournament cancelled mid-round (whose round
never finishes), once every table of the round has stopped running.  A kind nobody registered never
lifts (fail closed), so a new feature that shares a deal withholds it until it says when to show it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from service.domain.embargo import Embargo, deal_shown, embargo_of, may_open
from service.domain.identities import Player
from service.domain.tables.state import LOBBY, RUNNING, Table
from service.store import repository
from service.store.event_store import TOURNAMENTS, EventStore
from service.store.keys import Keys
from service.tournaments.director import load_tournament

Rule = Callable[["Embargoes", Embargo, Table], Awaitable[bool]]
"""A kind's rule: whether the embargo on ``table``'s deal has lifted now."""

_RULES: dict[str, Rule] = {}


def register(kind: str, rule: Rule) -> None:
    """Say when an embargo of ``kind`` lifts (an embargo with ``until`` needs no rule)."""
    _RULES[kind] = rule


class Embargoes:
    """Asks the store (and the clock) whether tables' deals may be shown now."""

    def __init__(self, redis: Any, keys: Keys, *, store: EventStore | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.redis = redis
        self.keys = keys
        self.store = store or EventStore(redis, keys)
        self.tournaments = EventStore(redis, keys, TOURNAMENTS)
        self.clock = clock

    async def lifted(self, t: Table) -> bool:
        """Whether nothing withholds the table's deal any more (True for a table without embargo)."""
        e = embargo_of(t)
        if e is None:
            return True
        if e.until is not None:
            return self.clock() >= e.until
        rule = _RULES.get(e.kind)
        return rule is not None and await rule(self, e, t)

    async def deal_shown(self, t: Table) -> bool:
        """:func:`service.domain.embargo.deal_shown` with the lift asked here (only for a finished table)."""
        return t.status == "finished" and deal_shown(t, await self.lifted(t))

    async def may_open(self, t: Table, person: Player | None) -> bool:
        """:func:`service.domain.embargo.may_open`, the lift asked only when it matters."""
        return may_open(t, person, False) or await self.lifted(t)


async def _tournament_round_over(emb: Embargoes, e: Embargo, t: Table) -> bool:
    tour = await load_tournament(emb.tournaments, e.key)
    if tour is None:
        return False
    round_no = next((r for r, draws in tour.draws.items() if any(d.table == t.id for d in draws)), None)
    if round_no is None:
        return False
    if round_no in tour.seeds:  # the round finished: the director showed its seed in the group
        return True
    # Not finished (yet: the director counts the last table soon; or never: a cancelled tournament):
    # shown once no table of the round can still play the deal.  A table not created yet will.
    for draw in tour.draws[round_no]:
        other = t if draw.table == t.id else await repository.load(emb.store, draw.table)
        if other is None or other.status in (LOBBY, RUNNING):
            return False
    return True


register("tournament", _tournament_round_over)

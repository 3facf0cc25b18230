"""Deals shared between tables, and when they may be shown (rule G-1).  Pure.

Some tables are dealt cards that other tables also play: every table of a tournament round plays the
round's seed (duplicate deals, :mod:`service.tournaments.swiss`), and a deal of the day is the same
for everyone that day.  Such a table carries an **embargo** on its deal.  Until the embargo lifts,
nothing that shows the deal to someone who did not play it at this table leaves the service:

- no replay (the chat's ``/replay``, the web table's ``/api/replay``, ``cinq replay``/``verify``
  without ``--reveal``) and no seed (the end-of-match line, the web table's end screen);
- the table itself opens only for the people seated at it (``/api/state``, ``/api/events``): a
  spectator's link, or the link of someone not seated there, is refused, since even the public moves
  of a table ahead show the hands at a table behind.

The rule lives here, in one place every surface asks: :func:`embargo_of` (the embargo a table
carries, if any), :func:`deal_shown` (whether its replay and seed may be shown) and :func:`may_open`
(whether a viewer may open the table at all).  Whether an embargo has *lifted* is a question for the
store and the clock (:mod:`service.tournaments.embargoes`), asked before these pure functions are.

An embargo lifts at ``until`` (unix seconds) when it has one (a deal of the day: after its UTC
day), else by its kind's rule, registered with :func:`service.tournaments.embargoes.register`
(``tournament``: once every table of the round has finished).  A kind with no rule never lifts:
fail closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from service.domain.identities import Player

__all__ = ["Embargo", "deal_shown", "embargo_of", "may_open", "seated", "withheld"]


class Embargo(BaseModel):
    """The embargo on a table's deal: which shared deal (``kind`` and ``key``: ``tournament`` and
    the tournament's id, ``daily`` and the day) and, for one that lifts at a time, ``until``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    key: str
    until: float | None = None


class Table(Protocol):
    """What the rule reads of a table (:class:`service.domain.tables.state.Table`, which imports
    this module's :class:`Embargo` through its events: named here by shape, not imported)."""

    @property
    def embargo(self) -> Embargo | None: ...
    @property
    def tournament(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def seats(self) -> Sequence[Any]: ...


def embargo_of(t: Table) -> Embargo | None:
    """The embargo on the table's deal, or None (its deal is its own).  A tournament's table carries
    one without saying so in its events (they predate embargoes): its round's tables share its deal."""
    if t.embargo is not None:
        return t.embargo
    if t.tournament is not None:
        return Embargo(kind="tournament", key=t.tournament)
    return None


def deal_shown(t: Table, lifted: bool) -> bool:
    """Whether what reveals the table's deal (its replay, its seed) may be shown to anyone who asks:
    the match is over, and no other table still plays its deal (no embargo, or ``lifted``)."""
    return t.status == "finished" and (lifted or embargo_of(t) is None)


def seated(t: Table, person: Player | None) -> bool:
    """Whether ``person`` holds (or held, before an AI player took it over) a seat at the table."""
    return person is not None and any(s.player is not None and person.same(s.player) for s in t.seats)


def withheld(view: dict[str, Any]) -> dict[str, Any]:
    """A view without what would show the deal: the seed (535's view carries it once the match is
    over), for a table whose deal is not shown yet."""
    if "seed" not in view:
        return view
    return {k: v for k, v in view.items() if k != "seed"}


def may_open(t: Table, person: Player | None, lifted: bool) -> bool:
    """Whether a viewer (``person`` None: a spectator) may open the table: any table without an
    embargo, an embargoed one once it has ``lifted``, and before that only the people seated at it."""
    return lifted or embargo_of(t) is None or seated(t, person)

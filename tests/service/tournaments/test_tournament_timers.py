"""The turn timer and the AI takeover at a tournament's table (issue 15), on the harness's fake clock:
a person who lets the timer run out has a move played for them, after ``timeouts_to_bot`` of those an
AI player takes the seat, the table still finishes and reports, the leaver is ranked last (in the
tournament and in the ratings), and the tournament advances once."""

from __future__ import annotations

from typing import Any

from service.domain.events import MovePlayed, SeatTakenByBot
from service.ratings.projector import Projector
from service.ratings.store import RatingStore
from service.store.keys import Keys
from service.store.repository import history
from service.tournaments.director import Director
from service.tournaments.events import RoundFinished, TableScored, TournamentFinished, decode
from service.tournaments.state import FINISHED
from service.write.timers import fire_due
from tests.service.support import ANA, BEA, Harness, seeds
from tests.service.tournaments.test_tournaments import World, reply_of


class TimedWorld(World):
    """The tournament world with a 5 s turn timer."""

    def __init__(self, redis: Any) -> None:
        self.h = Harness(redis, turn_seconds=5)
        self.director = Director(redis, self.h.settings, self.h.keys, clock=self.h.clock,
                                 seeds=seeds("round"))
        self.projector = Projector(redis, Keys())


async def test_the_turn_timer_and_the_ai_takeover_run_at_a_tournament_table(any_redis):
    w = TimedWorld(any_redis)
    h = w.h
    signup = reply_of(await w.send(ANA, "/tournament 535 rounds=1"))
    await w.send(BEA, "/tournament join")
    await w.send(ANA, "/tournament start")
    tid = signup.table
    t = await w.director.load(tid)
    assert t is not None and t.turn_seconds == 5
    (draw,) = t.tables(1)
    table = draw.table
    # A person's turn at the table has a deadline: the turn timer runs there as anywhere.
    hands = [m for m in h.messages if m.table == table and m.kind == "hand" and m.actions]
    assert hands and all(m.deadline is not None for m in hands)
    # Nobody presses anything; the clock runs and the due turns fire, as the worker's timer loop does.
    for _ in range(400):
        t = await w.director.load(tid)
        assert t is not None
        if t.status == FINISHED:
            break
        h.clock.now += 6
        await fire_due(any_redis, h.keys, h.clock.now * 1000)
        await w.settle()
    assert t.status == FINISHED
    stored = [s.event for s in await history(h.worker.store, table)]
    timed_out = [e for e in stored if isinstance(e, MovePlayed) and e.cause == "timeout"]
    taken = [e for e in stored if isinstance(e, SeatTakenByBot)]
    people = [i for i, who in enumerate(draw.seats) if who is not None]
    assert len(timed_out) == len(people) * h.settings.timeouts_to_bot
    assert sorted(e.seat for e in taken) == sorted(people) and all(e.reason == "timeouts" for e in taken)
    # The table reported once; the people (replaced) rank last, behind both AI players.
    raw = await _tournament_events(w, tid)
    assert [type(e).__name__ for e in raw].count("TableScored") == 1
    assert [type(e).__name__ for e in raw].count("RoundFinished") == 1
    assert [type(e).__name__ for e in raw].count("TournamentFinished") == 1
    (ts,) = [e for e in raw if isinstance(e, TableScored)]
    last = max(ts.ranks)
    assert all(ts.ranks[i] == last for i in people)
    assert all(ts.ranks[i] < last for i in range(len(draw.seats)) if i not in people)
    # Rated once, as last: no win for either.
    store = RatingStore(any_redis, Keys())
    assert await store.is_rated(table)
    ratings = await store.get("535", [f"{p.platform}:{p.user}" for p in (ANA, BEA)])
    assert [(r.matches, r.wins) for r in ratings.values()] == [(1, 0), (1, 0)]
    assert isinstance(raw[-1], TournamentFinished) and any(isinstance(e, RoundFinished) for e in raw)


async def _tournament_events(w: World, tid: str) -> list[Any]:
    """A tournament's events as stored (its stream: ``tn:{b}:<id>:events``)."""
    key = f"tn:{{{w.h.keys.bucket(tid)}}}:{tid}:events"
    return [decode(f.get(b"e") or f.get("e")).event for _, f in await w.h.redis.xrange(key)]

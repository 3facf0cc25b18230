"""What the end of a match sets off, beyond its own table: its rating, (a tournament's table) the
report to its tournament, and (a daily deal's) the attempt's result on the day's board.  Queued by
the worker with the acknowledgements of the command that finished the match (the same pipeline,
before them), and queued again from the stored table when a worker that took over finds that
command applied already (the one that applied it may have died before queueing); every consumer
counts a match once whatever the copies (the daily result's writes are the same values again)."""

from __future__ import annotations

from typing import Any

import engine
from service.daily import store as dstore
from service.domain import daily
from service.domain.events import MatchFinished, decode
from service.domain.tables.state import FINISHED, Table
from service.ratings import projector
from service.ratings.model import record_of
from service.store.keys import Keys
from service.tournaments import director


def queue(pipe: Any, keys: Keys, t: Table, result: dict[str, Any], at: float) -> None:
    """Queue the rating of a match that just finished, its tournament's report, its daily result."""
    rec = record_of(t, result, at)
    projector.queue_record(pipe, keys, rec)
    if t.tournament is not None:
        director.report(pipe, keys, t.tournament, rec)
    found = daily.daily_of(t.embargo)
    person = t.seats[0].player if t.seats else None
    if found is not None and person is not None and t.engine is not None:
        game, day = found
        history = engine.view(t.engine, None).get("history") or []
        dstore.record(pipe, keys, game, day, person,
                      dstore.attempt_of(game, result, history, t.id, person, at))


async def requeue(redis: Any, keys: Keys, t: Table) -> bool:
    """Queue again what a finished table's end sets off (read from its stored ``MatchFinished``)."""
    if t.status != FINISHED:
        return False
    for _, fields in await redis.xrevrange(keys.events(t.id), count=8):
        s = decode(fields.get(b"e") or fields.get("e"))
        if isinstance(s.event, MatchFinished):
            pipe = redis.pipeline(transaction=False)
            queue(pipe, keys, t, s.event.result, s.at)
            await pipe.execute()
            return True
    return False

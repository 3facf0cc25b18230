"""The ratings projection, live: the worker queues each finished match, the projector rates it once.

**Worker side** (:func:`queue_record`, through :mod:`service.write.match_end`): with the acknowledgements of
the command that finished a match (the same pipeline, queued before them), the match's record goes to
``rt:{ratings}:queue``.  A worker that dies between its append and that pipeline leaves the command
pending; whoever takes it over finds it applied already (the append script says ``DUPLICATE``) and
queues the record again from the stored table.  So every finished match reaches the queue at least
once.

**Projector side** (:class:`Projector`): reads the queue through the consumer group ``raters``, reads
the people's ratings, rates (:func:`service.ratings.model.rate`) and writes with the compare-and-set
of :class:`~service.ratings.store.RatingStore`, which also marks the table done: a second copy is
acknowledged without effect, so a match counts once.  Then the entry is acknowledged and deleted.
One projector rates at a time (a lease), so matches are rated in the order they were queued; the
compare-and-set keeps an overlap (a lease moving) from losing an update.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import orjson

from service.foundation import logs
from service.ratings.model import MatchRecord, from_json, rate, to_json
from service.ratings.store import RatingStore
from service.store.decoding import as_text
from service.store.keys import Keys
from service.store.leased_stream import LeasedReader, LeasedStream

GROUP = "raters"
LEASE_MS = 10_000
CLAIM_IDLE_MS = 30_000


def queue_record(pipe: Any, keys: Keys, rec: MatchRecord) -> None:
    """Queue the record of a match that just finished (see :mod:`service.write.match_end`)."""
    if rec.rated:
        pipe.xadd(keys.rating_queue(), {"r": orjson.dumps(to_json(rec))})


class Projector(LeasedReader):
    """Rates the queued matches (see the module docstring)."""

    def __init__(self, redis: Any, keys: Keys, *, name: str | None = None) -> None:
        self.redis = redis
        self.keys = keys
        self.store = RatingStore(redis, keys)
        self.name = name or f"r-{secrets.token_hex(4)}"
        self.log = logs.get("ratings").bind(projector=self.name)
        self.stream = LeasedStream(redis, keys.rating_queue(), GROUP, keys.rating_lease(), self.name,
                                   self._redis_error, count=100, lease_ms=LEASE_MS,
                                   claim_idle_ms=CLAIM_IDLE_MS)
        self.rated = 0
        self.seconds: list[float] = []  # each rating update's time (the bench reads it)

    def _redis_error(self, e: BaseException) -> None:
        self.log.warning("redis_error", error=logs.error_text(e))

    async def rate_one(self, rec: MatchRecord) -> str:
        """Rate one match: ``rated``, ``duplicate`` (rated before) or ``unrated`` (no person sat)."""
        if not rec.rated:
            return "unrated"
        start = time.perf_counter()
        try:
            while True:
                before = await self.store.get(rec.game, rec.people())
                res = await self.store.apply(rec, before, rate(rec, before))
                if res >= 0:
                    self.rated += res
                    return "rated" if res else "duplicate"
        finally:
            self.seconds.append(time.perf_counter() - start)

    async def _handle(self, entries: list[tuple[Any, dict[Any, Any]]]) -> int:
        for mid, fields in entries:
            raw = fields.get(b"r") or fields.get("r") or b""
            try:
                rec = from_json(orjson.loads(raw))
            except (orjson.JSONDecodeError, KeyError, TypeError) as e:
                self.log.error("bad_record", entry=as_text(mid), error=logs.error_text(e))
            else:
                outcome = await self.rate_one(rec)
                self.log.info("rated", table=rec.table, outcome=outcome)
            await self.stream.ack(mid)
        return len(entries)

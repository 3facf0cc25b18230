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

import asyncio
import contextlib
import secrets
import time
from typing import Any

import orjson
from redis.exceptions import RedisError, ResponseError

from service.ops import logs
from service.ratings.model import MatchRecord, from_json, rate, to_json
from service.ratings.store import RatingKeys, RatingStore
from service.store import leases
from service.store.decoding import as_text

GROUP = "raters"
LEASE_MS = 10_000
CLAIM_IDLE_MS = 30_000


def queue_record(pipe: Any, rkeys: RatingKeys, rec: MatchRecord) -> None:
    """Queue the record of a match that just finished (see :mod:`service.write.match_end`)."""
    if rec.rated:
        pipe.xadd(rkeys.queue(), {"r": orjson.dumps(to_json(rec))})


class Projector:
    """Rates the queued matches (see the module docstring)."""

    def __init__(self, redis: Any, prefix: str = "", *, name: str | None = None) -> None:
        self.redis = redis
        self.store = RatingStore(redis, prefix)
        self.keys = self.store.keys
        self.name = name or f"r-{secrets.token_hex(4)}"
        self.log = logs.get("ratings").bind(projector=self.name)
        self.rated = 0
        self.seconds: list[float] = []  # each rating update's time (the bench reads it)

    async def setup(self) -> None:
        """Create the consumer group (idempotent)."""
        with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists
            await self.redis.xgroup_create(self.keys.queue(), GROUP, id="0", mkstream=True)

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
            pipe = self.redis.pipeline(transaction=False)
            pipe.xack(self.keys.queue(), GROUP, mid)
            pipe.xdel(self.keys.queue(), mid)
            await pipe.execute()
        return len(entries)

    async def _read(self, start: str, block: int | None) -> list[tuple[Any, dict[Any, Any]]]:
        got = await self.redis.xreadgroup(GROUP, self.name, {self.keys.queue(): start}, count=100,
                                          block=block)
        return [e for _, entries in (got or []) for e in entries if e[1]]

    async def drain(self) -> int:
        """Rate everything queued (this projector's pending entries first); returns how many."""
        await self.setup()
        n = await self._handle(await self._read("0", None))
        while True:
            got = await self._read(">", None)
            if not got:
                return n
            n += await self._handle(got)

    async def run(self, stop: asyncio.Event, block_ms: int = 1000) -> None:
        """Rate until ``stop`` while holding the lease; take over what a dead projector held."""
        await self.setup()
        last_claim = 0.0
        while not stop.is_set():
            try:
                if not await leases.hold(self.redis, self.keys.lease(), self.name, LEASE_MS):
                    await asyncio.sleep(LEASE_MS / 3000)
                    continue
                if time.monotonic() - last_claim > CLAIM_IDLE_MS / 4000:
                    last_claim = time.monotonic()
                    claimed = await self.redis.xautoclaim(self.keys.queue(), GROUP, self.name,
                                                          CLAIM_IDLE_MS, "0-0", count=100)
                    await self._handle([e for e in claimed[1] if e[1]])
                    await self._handle(await self._read("0", None))
                await self._handle(await self._read(">", block_ms))
            except (RedisError, OSError) as e:
                self.log.warning("redis_error", error=logs.error_text(e))
                await asyncio.sleep(1.0)

"""Following one table as one person (or a spectator) sees it: for the web table (``adapters/web``).

The chat adapters consume the outbox through their platform's consumer group; a web page instead
*follows* a table: it starts from what the person would be shown now
(:func:`service.domain.tables.current.current_messages`) and then receives every outbox message of that
table addressed to them or to a room showing it, each with its outbox entry id, so that a page that
reconnects with the last id it saw (SSE's ``Last-Event-ID``) misses nothing.

One :class:`Watch` per process reads the outbox streams of the tables being watched (one ``XREAD``
for all of them, :class:`service.store.streams.StreamReader`) and hands each message to the subscribers of
its table; which of them may see it is :func:`visible`'s decision, here in the service, so that an
adapter only forwards what it is given (G-1).

With replicas (``CINQ_REDIS_MIN_REPLICAS``) nothing read is shown before they have it
(:mod:`service.store.replicas`): a page never draws a state that a failover would take back.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from redis.exceptions import RedisError

from service.domain.embargo import embargo_of, may_open, seated
from service.domain.identities import Player
from service.domain.tables.current import current_messages
from service.domain.tables.replay import replay_views
from service.domain.tables.state import CANCELLED, FINISHED
from service.foundation.settings import Settings
from service.platform.outbox import Message
from service.store import repository
from service.store.decoding import as_text
from service.store.event_store import EventStore
from service.store.groups import Pause
from service.store.keys import Keys
from service.store.replicas import Replicas
from service.store.streams import StreamReader
from service.tournaments.embargoes import Embargoes

Entry = tuple[str, Message]
"""An outbox entry id (empty for a message built on demand) and its message."""

_PUBLIC_KINDS = frozenset({"table", "match_over"})


class Ended(Exception):
    """The table's match ended before the moment the caller gave: a link to it no longer opens it."""


class Embargoed(Exception):
    """The table deals cards that other tables still play, and this viewer is not seated at it: it
    stays closed to them until the embargo lifts (:mod:`service.domain.embargo`, G-1)."""


def visible(msg: Message, table: str, person: Player | None) -> bool:
    """Whether ``person`` (None: a spectator) may be shown ``msg`` of ``table``: a room's table or
    end-of-match message (rooms get the public view only), and the messages addressed to that person
    themselves (their hand, the replies to them).  Never another person's (G-1)."""
    if msg.table != table:
        return False
    to = msg.to
    if to.room is not None and msg.kind in _PUBLIC_KINDS:
        return True
    if person is None:
        return False
    return person.same(to.player) or (to.room is not None and person.same(to.person))


def _after(a: str, b: str) -> bool:
    """Whether stream id ``a`` comes after ``b``."""
    def key(i: str) -> tuple[int, int]:
        ms, _, seq = i.partition("-")
        return int(ms or 0), int(seq or 0)
    return key(a) > key(b)


QUEUE_MAX = 256
"""Messages a feed may have waiting: a page that reads slower than its table writes is ended past it
(its reconnect resumes from its ``Last-Event-ID``), not buffered without end."""
CATCH_UP_PAGE = 256
"""Entries one read of a reconnect's catch-up asks for (``XRANGE ... COUNT``)."""
CATCH_UP_MAX = 4096
"""Entries a reconnect's catch-up reads at most: the outbox is a bucket's, shared by many tables, and
a page resuming from far back (``Last-Event-ID: 0-0``) was sent the table's state first anyway."""
_BEHIND: Entry = ("", None)  # type: ignore[assignment]  # the queue's last item when it overflowed


class Lagging(Exception):
    """A page fell :data:`QUEUE_MAX` messages behind: its feed ends (the page reconnects and resumes)."""


@dataclass(eq=False)  # compared (and hashed) by identity: one per page
class _Sub:
    table: str
    person: Player | None
    limit: int = QUEUE_MAX
    queue: asyncio.Queue[Entry] = field(default_factory=asyncio.Queue)
    behind: bool = False

    def put(self, entry: Entry) -> None:
        """Queue a message; past ``limit`` waiting, mark the page behind instead (once)."""
        if self.behind:
            return
        if self.queue.qsize() >= self.limit:
            self.behind = True
            entry = _BEHIND
        self.queue.put_nowait(entry)


class Watch:
    """Follows the outbox for the tables someone watches (see the module docstring)."""

    def __init__(self, redis: Any, settings: Settings, keys: Keys, store: EventStore, *, block_ms: int = 200,
                 queue_max: int = QUEUE_MAX, catch_up_page: int = CATCH_UP_PAGE,
                 catch_up_max: int = CATCH_UP_MAX) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = keys  # the process's key layout and event store (service.ops.runtime.Runtime.watch)
        self.store = store
        self.embargoes = Embargoes(redis, self.keys, store=self.store)
        self.secret = settings.secrets_bytes()[0]
        self.block_ms = block_ms
        self.queue_max, self.catch_up_page, self.catch_up_max = queue_max, catch_up_page, catch_up_max
        self.reader = StreamReader(redis)
        self.replicas = Replicas.of(redis, settings, self.keys)
        self.positions: dict[str, str] = {}
        self.subs: dict[str, set[_Sub]] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    async def last_id(self, table: str) -> str:
        """The id of the last entry of the table's outbox now (``0-0``: empty)."""
        last = await self.redis.xrevrange(self.keys.outbox_for(table), count=1)
        return as_text(last[0][0]) if last else "0-0"

    async def now(self, table: str, person: Player | None, locale: str,
                  ended_before: float | None = None) -> list[Message] | None:
        """What ``person`` (None: a spectator) is shown of the table now (None: no such table).
        Raises :class:`Embargoed` if the table's deal is shared and they may not open it yet, and
        :class:`Ended` if its match ended (its last move) before ``ended_before`` (unix seconds)."""
        t = await repository.load(self.store, table)
        await self.replicas.confirm()
        if t is None:
            return None
        if ended_before is not None and t.status in (FINISHED, CANCELLED) and t.turn_since < ended_before:
            raise Ended(table)
        if embargo_of(t) is None or (t.status != FINISHED and seated(t, person)):
            lifted = True  # (a seated person's running match shows no seed: no need to ask)
        else:
            lifted = await self.embargoes.lifted(t)
        if not may_open(t, person, lifted):
            raise Embargoed(table)
        return [Message.model_validate(m).rendered(locale)
                for m in current_messages(t, person, self.secret, locale, lifted=lifted,
                                                 auto_pass=self.settings.auto_pass_s > 0)]

    async def rematch_of(self, table: str) -> str | None:
        """The rematch of a finished table, once someone asked for it (None: none, or no such table)."""
        t = await repository.load(self.store, table)
        return t.rematch if t is not None else None

    async def seat_of(self, table: str, person: Player) -> int | None:
        """The seat ``person`` plays at the table now (None: not seated, or no such table)."""
        t = await repository.load(self.store, table)
        return t.seat_of(person) if t is not None else None

    async def replay(self, table: str) -> dict[str, Any] | None:
        """A finished table's public replay (:func:`service.domain.tables.replay.replay_views`), or
        None (no such table, or not finished).  Raises :class:`Embargoed` while other tables may
        still be playing its deal."""
        t = await repository.load(self.store, table)
        if t is None or t.status != FINISHED:
            return None
        if not await self.embargoes.deal_shown(t):
            raise Embargoed(table)
        stored = await repository.history(self.store, table)
        return replay_views(stored) if stored else None

    async def follow(self, table: str, person: Player | None, after: str) -> AsyncIterator[Entry]:
        """Every message of ``table`` that ``person`` may see, written after outbox entry ``after``,
        as it comes (until the caller stops iterating)."""
        sub = _Sub(table, person, self.queue_max)
        stream = self.keys.outbox_for(table)
        self.subs.setdefault(table, set()).add(sub)
        try:
            # What was written between ``after`` and now (a reconnect), then the live messages;
            # an entry both reads saw is given once.  Redis away meanwhile (a restart): back off and
            # go on from the last entry given, the page's feed kept open.
            sent = after
            pause = Pause(0.05, 1.0)
            while True:
                try:
                    if stream not in self.positions:
                        self.positions[stream] = await self.last_id(table)
                        self._wake.set()
                    self._ensure_running()
                    async for mid, msg in self._missed(stream, sent):
                        sent = mid
                        if msg is not None and visible(msg, table, person):
                            yield mid, msg
                    break
                except (OSError, RedisError):
                    await asyncio.sleep(pause.failed())
            while True:
                mid, msg = await sub.queue.get()
                if msg is None:
                    raise Lagging(table)
                if _after(mid, sent):
                    sent = mid
                    yield mid, msg
        finally:
            self.subs[table].discard(sub)
            if not self.subs[table]:
                del self.subs[table]
                if not any(self.keys.outbox_for(t) == stream for t in self.subs):
                    self.positions.pop(stream, None)

    async def _missed(self, stream: str, after: str) -> AsyncIterator[tuple[str, Message | None]]:
        """The entries of ``stream`` after ``after`` up to now, a page (:data:`CATCH_UP_PAGE`) at a
        time and :data:`CATCH_UP_MAX` at most, each confirmed by the replicas before it is given."""
        start = f"({after}" if after != "0-0" else "-"
        read = 0
        while read < self.catch_up_max:
            page = await self.redis.xrange(stream, min=start, count=self.catch_up_page)
            if not page:
                return
            await self.replicas.confirm()
            for mid, raw in page:
                yield as_text(mid), _message(raw)
            read += len(page)
            start = f"({as_text(page[-1][0])}"
            if len(page) < self.catch_up_page:
                return

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    async def problem(self) -> str | None:
        """Why the watch cannot follow tables now (None: it can): its reader stopped on an error.
        Readiness asks it (``/readyz`` of the web adapter)."""
        task = self._task
        if task is None or not task.done() or task.cancelled():
            return None
        error = task.exception()
        return f"the outbox reader stopped: {type(error).__name__}: {error}" if error else None

    async def close(self) -> None:
        """Stop reading."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def _run(self) -> None:
        pause = Pause(0.05, 1.0)
        while True:
            if not self.positions:
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                entries = await self.reader.read(dict(self.positions), 500, self.block_ms)
                if entries:  # shown only once the replicas have it; else read again
                    await self.replicas.confirm()
            except (OSError, RedisError):
                # Redis away (redis-py's ConnectionError and TimeoutError are RedisErrors): back off
                # and read again from the last id handed out, which ``positions`` kept, so no page
                # misses what was written meanwhile (issue 32, 7).
                await asyncio.sleep(pause.failed())
                continue
            pause.ok()
            for name, mid, fields in entries:
                if name in self.positions:
                    self.positions[name] = mid
                msg = _message(fields)
                if msg is None:
                    continue
                for sub in list(self.subs.get(msg.table or "", ())):
                    if visible(msg, sub.table, sub.person):
                        sub.put((mid, msg))


def _message(fields: Any) -> Message | None:
    raw = fields.get(b"m") or fields.get("m")
    if raw is None:
        return None
    try:
        return Message.model_validate(orjson.loads(raw))
    except ValueError:
        return None

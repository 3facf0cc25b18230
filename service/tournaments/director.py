"""The tournament director: the IO around :mod:`service.tournaments.decide`.

Keys (after ``CINQ_KEY_PREFIX``; also in the key table of ``docs/service.md``):

- ``tn:{tournaments}:cmd`` — the tournaments' command stream (group ``directors``): the gateway's
  ``/tournament`` commands and buttons, and the worker's ``table_finished`` reports.
- ``tn:{tournaments}:lease`` — the director deciding now (one at a time: commands in stream order).
- ``tn:{b}:<id>:events`` — a tournament's events (the truth), entry ids ``0-<version>``;
  ``tn:{b}:<id>:done`` — its processed command ids.  ``b`` is the id's bucket, so its messages go
  to ``out:{b}`` in the same call: the event store appends a tournament as it does a table
  (:class:`~service.store.event_store.EventStore` over ``tn:``, the same ``lua/append.lua``), with
  ``tn:{b}:<id>:snap`` (never written) and ``due:{b}`` (untouched) as the script's other keys.
- ``tn:{<p>:<chat>}:current`` — the tournament a group shows (derived, written after the append).

A command is decided against the tournament as stored and appended with its messages only if the
version is still the one read (else read and decided again) and its id is new (else it was applied
already: acknowledged without acting).  After the append the tables of a new round are created by
sending each its ``tournament_table`` command, whose id is derived from the table: if the director
dies in between, the redelivered command is a duplicate, and the tables of the running round are
sent again (those that exist recognise the copy).  A table that finishes reports back through
:func:`report` (from :mod:`service.write.match_end`), with the id ``fin:<table>``: counted once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from typing import Any

from service.domain.commands import TableCommand
from service.domain.events import encode
from service.domain.tables.decide import Refused
from service.domain.tables.notify import wire_json
from service.foundation import logs
from service.foundation.settings import Settings
from service.ratings.model import MatchRecord, to_json
from service.store import doorbell
from service.store.decoding import as_text, as_text_or_none
from service.store.event_store import DUPLICATE, TOURNAMENTS, Append, EventStore
from service.store.keys import Keys
from service.store.leased_stream import LeasedReader, LeasedStream
from service.store.replicas import Replicas
from service.tournaments.commands import FINISHED_NAME, Open, request_of
from service.tournaments.decide import Context, Decision, decide, refusal_message, table_command
from service.tournaments.events import TournamentOpened, decode
from service.tournaments.state import RUNNING, SIGNUP, Tournament, evolve

GROUP = "directors"
LEASE_MS = 10_000
CLAIM_IDLE_MS = 30_000
MAX_CONFLICTS = 50


def is_tournament(ident: str) -> bool:
    """Whether an id (a token's "table") names a tournament: they start with ``T``, tables never do."""
    return ident.startswith("T")


def tournament_id(secret: bytes, command_id: str | None) -> str:
    """A new tournament's id: ``T`` and 9 base32 characters, derived from the adapter's command id
    (a retry names the same tournament), else random."""
    raw = secrets.token_bytes(10) if command_id is None else \
        hmac.new(secret, b"tournament\n" + command_id.encode(), hashlib.sha256).digest()[:10]
    return "T" + base64.b32encode(raw).decode()[:9].lower()


async def load_tournament(store: EventStore, tid: str | None) -> Tournament | None:
    """A tournament as stored (None: no such tournament); ``store`` holds tournaments."""
    if not tid:
        return None
    t = None
    for raw in (await store.load(tid)).events:
        t = evolve(t, decode(raw).event, tid=tid)
    return t


def report(pipe: Any, keys: Keys, tournament: str, rec: MatchRecord) -> None:
    """Queue a finished table's report to its tournament (the worker, after its append)."""
    cmd = TableCommand(id=f"fin:{rec.table}", table=tournament, name=FINISHED_NAME,
                       args={"table": rec.table, "record": to_json(rec)}, at=rec.at)
    pipe.xadd(keys.tournament_commands(), {"c": cmd.dumps()})


class Director(LeasedReader):
    """Decides tournament commands (see the module docstring)."""

    def __init__(self, redis: Any, settings: Settings, keys: Keys, *, clock: Callable[[], float] = time.time,
                 seeds: Callable[[], str] | None = None, name: str | None = None) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = keys
        # A tournament is stored as a table is: the event store's compare-and-append, over ``tn:``.
        self.store = EventStore(redis, keys, TOURNAMENTS)
        self.clock = clock
        self.seeds = seeds or (lambda: secrets.token_hex(16))
        self.secret = settings.secrets_bytes()[0]
        self.name = name or f"d-{secrets.token_hex(4)}"
        self.log = logs.get("tournaments").bind(director=self.name)
        self.stream = LeasedStream(redis, keys.tournament_commands(), GROUP, keys.tournament_lease(),
                                   self.name, self._redis_error, count=50, lease_ms=LEASE_MS,
                                   claim_idle_ms=CLAIM_IDLE_MS,
                                   replicas=Replicas.of(redis, settings, self.keys))

    async def load(self, tid: str | None) -> Tournament | None:
        """A tournament as stored (None: no such tournament)."""
        return await load_tournament(self.store, tid)

    def _redis_error(self, e: BaseException) -> None:
        self.log.warning("redis_error", error=logs.error_text(e))

    async def handle(self, cmd: TableCommand) -> str:
        """Decide and append one command: ``ok``, ``refused:<code>``, ``noop`` or ``duplicate``."""
        for _ in range(MAX_CONFLICTS):
            t = await self.load(cmd.table)
            current = None
            if isinstance(request_of(cmd), Open) and cmd.room is not None:
                shown = await self.redis.get(self.keys.tournament_current(cmd.room.platform, cmd.room.chat))
                current = await self.load(as_text_or_none(shown))
            ctx = Context(now=self.clock(), new_seed=self.seeds, secret=self.secret,
                          turn_seconds=self.settings.turn_seconds, bot_level=self.settings.bot_level,
                          current=current)
            outcome = "ok"
            try:
                d = decide(t, cmd, ctx)
            except Refused as r:
                d = Decision(after=t, messages=[refusal_message(cmd, r, t.version if t else 0)])
                outcome = f"refused:{r.code}"
            if not d.events and not d.messages:
                # Nothing to do now, but maybe because this very command was applied and the director
                # died before what follows (a report that ended a round: its next round's tables):
                # a copy of an applied command must redo that part, as a duplicate does below.
                if t is not None and await self.store.applied(cmd.table, cmd.id):
                    await self._ensure(cmd, t, ctx)
                    return "duplicate"
                return "noop"
            res = await self.store.append(Append(
                table=cmd.table, expected=t.version if t else 0, command_ids=[cmd.id],
                events=[encode(e, at=ctx.now, cmd=cmd.id) for e in d.events],
                outbox=[(cmd.id, wire_json(m)) for m in d.messages]))
            if res.ok:
                await self._after(cmd, d)
                return outcome
            if res.status == DUPLICATE:
                await self._ensure(cmd, t, ctx)  # applied before: redo what may not have followed
                return "duplicate"
        raise RuntimeError(f"tournament {cmd.table}: too many conflicts")

    async def _after(self, cmd: TableCommand, d: Decision) -> None:
        pipe = self.redis.pipeline(transaction=False)
        t = d.after
        if t is not None and any(isinstance(e, TournamentOpened) for e in d.events):
            pipe.set(self.keys.tournament_current(t.room.platform, t.room.chat), t.id)
        for tc in d.tables:
            pipe.xadd(self.keys.commands_for(tc.table), {"c": tc.dumps()})
        if d.messages:
            doorbell.ring(pipe, self.keys, [self.keys.bucket(cmd.table)])
        await pipe.execute()

    async def _ensure(self, cmd: TableCommand, t: Tournament | None, ctx: Context) -> None:
        if t is None:
            return
        pipe = self.redis.pipeline(transaction=False)
        if t.status in (SIGNUP, RUNNING):
            pipe.set(self.keys.tournament_current(t.room.platform, t.room.chat), t.id, nx=True)
        if t.status == RUNNING:
            for draw in t.tables():
                tc = table_command(t, draw, cmd, ctx)
                pipe.xadd(self.keys.commands_for(tc.table), {"c": tc.dumps()})
        await pipe.execute()

    async def _handle(self, entries: list[tuple[Any, dict[Any, Any]]]) -> int:
        for mid, fields in entries:
            try:
                cmd = TableCommand.loads(fields.get(b"c") or fields.get("c") or b"")
            except (ValueError, TypeError) as e:
                self.log.error("bad_command", entry=as_text(mid), error=logs.error_text(e))
            else:
                outcome = await self.handle(cmd)
                self.log.info("command", tournament=cmd.table, command=cmd.name, id=cmd.id, outcome=outcome)
            await self.stream.ack(mid)
        return len(entries)

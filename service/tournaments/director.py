"""The tournament director: the IO around :mod:`service.tournaments.decide`.

Keys (after ``CINQ_KEY_PREFIX``; also in the key table of ``docs/service.md``):

- ``tn:{tournaments}:cmd`` — the tournaments' command stream (group ``directors``): the gateway's
  ``/tournament`` commands and buttons, and the worker's ``table_finished`` reports.
- ``tn:{tournaments}:lease`` — the director deciding now (one at a time: commands in stream order).
- ``tn:{b}:<id>:events`` — a tournament's events (the truth), entry ids ``0-<version>``;
  ``tn:{b}:<id>:done`` — its processed command ids.  ``b`` is the id's bucket, so its messages go
  to ``out:{b}`` in the same call: the tables' own compare-and-append script (``lua/append.lua``)
  writes both, with ``tn:{b}:<id>:snap`` (never written) and ``due:{b}`` (untouched) as its other keys.
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
from importlib import resources
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
from service.store.keys import Keys
from service.store.leased_stream import LeasedReader, LeasedStream
from service.store.replicas import Replicas
from service.tournaments.decide import Context, Decision, decide, refusal_message, table_command
from service.tournaments.events import TournamentOpened, decode
from service.tournaments.state import RUNNING, SIGNUP, Tournament, evolve

GROUP = "directors"
LEASE_MS = 10_000
CLAIM_IDLE_MS = 30_000
MAX_CONFLICTS = 50


def commands_key(prefix: str) -> str:
    """The tournaments' command stream."""
    return f"{prefix}tn:{{tournaments}}:cmd"


def lease_key(prefix: str) -> str:
    """The director deciding now (a single-holder lease, :func:`service.store.leases.hold`)."""
    return f"{prefix}tn:{{tournaments}}:lease"


def current_key(prefix: str, platform: str, chat: str) -> str:
    """The tournament a group shows."""
    return f"{prefix}tn:{{{platform}:{chat}}}:current"


def is_tournament(ident: str) -> bool:
    """Whether an id (a token's "table") names a tournament: they start with ``T``, tables never do."""
    return ident.startswith("T")


def tournament_id(secret: bytes, command_id: str | None) -> str:
    """A new tournament's id: ``T`` and 9 base32 characters, derived from the adapter's command id
    (a retry names the same tournament), else random."""
    raw = secrets.token_bytes(10) if command_id is None else \
        hmac.new(secret, b"tournament\n" + command_id.encode(), hashlib.sha256).digest()[:10]
    return "T" + base64.b32encode(raw).decode()[:9].lower()


def events_key(keys: Keys, tid: str) -> str:
    """A tournament's events (the truth)."""
    return f"{keys.prefix}tn:{{{keys.bucket(tid)}}}:{tid}:events"


async def load_tournament(redis: Any, keys: Keys, tid: str | None) -> Tournament | None:
    """A tournament as stored (None: no such tournament)."""
    if not tid:
        return None
    t = None
    for _, fields in await redis.xrange(events_key(keys, tid)):
        t = evolve(t, decode(fields.get(b"e") or fields.get("e")).event, tid=tid)
    return t


def report(pipe: Any, keys: Keys, tournament: str, rec: MatchRecord) -> None:
    """Queue a finished table's report to its tournament (the worker, after its append)."""
    cmd = TableCommand(id=f"fin:{rec.table}", table=tournament, name="table_finished",
                       args={"table": rec.table, "record": to_json(rec)}, at=rec.at)
    pipe.xadd(commands_key(keys.prefix), {"c": cmd.dumps()})


class Director(LeasedReader):
    """Decides tournament commands (see the module docstring)."""

    def __init__(self, redis: Any, settings: Settings, *, clock: Callable[[], float] = time.time,
                 seeds: Callable[[], str] | None = None, name: str | None = None,
                 keys: Keys | None = None) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = keys or Keys.of(settings)  # the bootstrap's one layout, under `cinq serve`
        self.clock = clock
        self.seeds = seeds or (lambda: secrets.token_hex(16))
        self.secret = settings.secrets_bytes()[0]
        self.name = name or f"d-{secrets.token_hex(4)}"
        self.log = logs.get("tournaments").bind(director=self.name)
        self.stream = LeasedStream(redis, commands_key(self.keys.prefix), GROUP, lease_key(self.keys.prefix),
                                   self.name, self._redis_error, count=50, lease_ms=LEASE_MS,
                                   claim_idle_ms=CLAIM_IDLE_MS,
                                   replicas=Replicas.of(redis, settings, self.keys))
        # The tables' own compare-and-append (one definition of appending an aggregate's events).
        self._append = redis.register_script(
            resources.files("service.store.lua").joinpath("append.lua").read_text())

    def _keys(self, tid: str) -> list[str]:
        b = self.keys.bucket(tid)
        base = f"{self.keys.prefix}tn:{{{b}}}:{tid}"
        return [events_key(self.keys, tid), f"{base}:snap", f"{base}:done", self.keys.outbox(b),
                self.keys.due(b)]

    async def load(self, tid: str | None) -> Tournament | None:
        """A tournament as stored (None: no such tournament)."""
        return await load_tournament(self.redis, self.keys, tid)

    def _redis_error(self, e: BaseException) -> None:
        self.log.warning("redis_error", error=logs.error_text(e))

    async def handle(self, cmd: TableCommand) -> str:
        """Decide and append one command: ``ok``, ``refused:<code>``, ``noop`` or ``duplicate``."""
        for _ in range(MAX_CONFLICTS):
            t = await self.load(cmd.table)
            current = None
            if cmd.name == "tournament" and cmd.args.get("action") == "open" and cmd.room is not None:
                shown = await self.redis.get(current_key(self.keys.prefix, cmd.room.platform, cmd.room.chat))
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
                if t is not None and await self.redis.sismember(self._keys(cmd.table)[2], cmd.id):
                    await self._ensure(cmd, t, ctx)
                    return "duplicate"
                return "noop"
            args: list[Any] = [t.version if t else 0, cmd.table, "", "", "", 0, 1, cmd.id, len(d.events),
                               *(encode(e, at=ctx.now, cmd=cmd.id) for e in d.events), len(d.messages)]
            for m in d.messages:
                args += [cmd.id, wire_json(m)]
            raw = await self._append(keys=self._keys(cmd.table), args=args)
            status = int(raw[0])
            if status == 1:
                await self._after(cmd, d)
                return outcome
            if status == 2:
                await self._ensure(cmd, t, ctx)  # applied before: redo what may not have followed
                return "duplicate"
        raise RuntimeError(f"tournament {cmd.table}: too many conflicts")

    async def _after(self, cmd: TableCommand, d: Decision) -> None:
        pipe = self.redis.pipeline(transaction=False)
        t = d.after
        if t is not None and any(isinstance(e, TournamentOpened) for e in d.events):
            pipe.set(current_key(self.keys.prefix, t.room.platform, t.room.chat), t.id)
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
            pipe.set(current_key(self.keys.prefix, t.room.platform, t.room.chat), t.id, nx=True)
        if t.status == RUNNING:
            for draw in t.tables():
                tc = table_command(t, draw, cmd, ctx)
                pipe.xadd(self.keys.commands_for(tc.table), {"c": tc.dumps()})
        await pipe.execute()

    async def _handle(self, entries: list[tuple[Any, dict[Any, Any]]]) -> int:
        for mid, fields in entries:
            try:
                cmd = TableCommand.model_validate_json(fields.get(b"c") or fields.get("c") or b"")
            except ValueError as e:
                self.log.error("bad_command", entry=as_text(mid), error=logs.error_text(e))
            else:
                outcome = await self.handle(cmd)
                self.log.info("command", tournament=cmd.table, command=cmd.name, id=cmd.id, outcome=outcome)
            await self.stream.ack(mid)
        return len(entries)

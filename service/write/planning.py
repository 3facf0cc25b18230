"""A batch of commands, planned: grouped by table, decided in order, turned into one append per table.

Pure but for the clock and the seeds it is given: the worker (:mod:`service.write.worker`) reads the
batch, loads the tables and the histories that ``/replay`` shows, calls :meth:`Planner.plan` for each
table, and sends the appends.  Keeping the deciding here, away from the IO, is what lets the worker
be read as a loop.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from service.domain.commands import TableCommand
from service.domain.events import Stored, encode
from service.domain.messages import Wire, wire_json
from service.domain.tables import daily_table, notify, rematch
from service.domain.tables.decide import Context, Decision, Refused, decide, only_pass
from service.domain.tables.lobby import idle_deadline
from service.domain.tables.replay import replay_lines
from service.domain.tables.state import CANCELLED, FINISHED, LOBBY, RUNNING, Table
from service.foundation.settings import Settings
from service.store.event_store import Append
from service.store.repository import snapshot_json
from service.write import bots

# An AI seat's tick is sent at once by the worker; the deadline is the safety net if that is lost.
BOT_GRACE_MS = 2_000
# A command for a table not created yet waits at most this long (and this many cycles) for it.
WAIT_FOR_TABLE_S = 2.0
MAX_WAITS = 50
_NONE_LIFTED: frozenset[str] = frozenset()


def new_seed() -> str:
    """A fresh match seed from the operating system's CSPRNG (never from the engine)."""
    return secrets.token_hex(16)


@dataclass
class Entry:
    """One command stream entry as delivered to this worker."""

    stream: str
    id: str
    raw: bytes | str
    cmd: TableCommand | None = None


@dataclass
class Outcome:
    """What deciding one command gave: ``ok``, ``reply``, ``noop``, ``refused:<code>`` or
    ``duplicate``; its events; the table's version after it; when its events happened (their ``at``)."""

    entry: Entry
    outcome: str
    events: list[Any]
    version: int
    at: float = 0.0


@dataclass
class TableBatch:
    """The commands of one table in a batch, and what deciding them produced."""

    table: str
    entries: list[Entry]
    before: Table | None = None
    after: Table | None = None
    append: Append | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    # commands for a table that does not exist yet, put back to wait for its creation (see may_wait)
    waiting: list[Entry] = field(default_factory=list)
    failed: list[tuple[Entry, BaseException]] = field(default_factory=list)
    # For a /replay: whether the embargo on its shared deal has lifted (service.tournaments.embargoes).
    lifted: bool = False


@dataclass
class Grouped:
    """A batch split by table; entries that were the same command twice; entries that are no
    command at all (to dead-letter)."""

    tables: list[TableBatch]
    twice: list[Entry]
    malformed: list[tuple[Entry, Exception]]


def group_by_table(entries: Sequence[Entry]) -> Grouped:
    """Parse and group a batch.  The same entry can come back by two paths (a retry and a claim), and
    the same command in two entries (a redelivery): within one batch each command is decided once."""
    tables: dict[str, TableBatch] = {}
    twice: list[Entry] = []
    malformed: list[tuple[Entry, Exception]] = []
    seen_entries: set[tuple[str, str]] = set()
    seen_ids: set[str] = set()
    for e in entries:
        if (e.stream, e.id) in seen_entries:
            continue
        seen_entries.add((e.stream, e.id))
        if e.cmd is None:
            try:
                e.cmd = TableCommand.loads(e.raw)
            except Exception as exc:  # not a command at all: retrying cannot help
                malformed.append((e, exc))
                continue
        if e.cmd.id in seen_ids:
            twice.append(e)
            continue
        seen_ids.add(e.cmd.id)
        tables.setdefault(e.cmd.table, TableBatch(e.cmd.table, [])).entries.append(e)
    return Grouped(list(tables.values()), twice, malformed)


class Planner:
    """Decides tables' commands and builds their appends (see the module docstring)."""

    def __init__(self, settings: Settings, clock: Callable[[], float], seeds: Callable[[], str],
                 choose_move: Callable[[dict[str, Any], str, int], str]) -> None:
        self.settings, self.clock, self.seeds, self.choose_move = settings, clock, seeds, choose_move
        self.secrets = settings.secrets_bytes()
        # How many cycles each command for a table not created yet has waited (see may_wait).
        self.waits: dict[str, int] = {}
        # A command waits for an AI move being thought elsewhere (service.write.bots.Thinker): the worker
        # gives the thinker a moment before its next cycle instead of spinning.
        self.parked = False

    def context(self, lifted: frozenset[str] = frozenset()) -> Context:
        """What deciding one command needs from outside: the time, seeds, the AI, the secrets (and
        the tables whose shared deal may be shown now)."""
        s = self.settings
        # One per command: filled in directly, as a frozen dataclass's __init__ would (field by
        # field through object.__setattr__, three times slower).
        ctx = object.__new__(Context)
        ctx.__dict__.update(now=self.clock(), new_seed=self.seeds, choose_move=self.choose_move,
                            token_secrets=self.secrets, turn_seconds=s.turn_seconds,
                            timeouts_to_bot=s.timeouts_to_bot, bot_level=s.bot_level,
                            lobby_idle_s=s.lobby_idle_s, auto_pass_s=s.auto_pass_s,
                            rematch_wait_s=s.rematch_wait_s, lifted=lifted)
        return ctx

    def plan(self, b: TableBatch, history: list[Stored] | None = None) -> None:
        """Decide the batch's commands in order and build its one compare-and-append (``b.append``;
        None when nothing is to be written).  ``history``: the table's events, for a ``/replay``."""
        t = b.before
        events: list[str] = []
        outbox: list[tuple[str, str | bytes]] = []
        ids: list[str] = []
        parked = False
        for e in b.entries:
            cmd = e.cmd
            assert cmd is not None
            if parked:  # behind a command that waits for an AI move: keep the table's order
                b.waiting.append(e)
                continue
            if t is None and not cmd.creates_table and self.may_wait(cmd):
                b.waiting.append(e)
                continue
            ctx = self.context(frozenset((b.table,)) if b.lifted else _NONE_LIFTED)
            try:
                d, msgs, outcome = self._decide(t, cmd, ctx, history)
            except bots.Thinking:  # decided again in a later cycle, once the move is ready
                b.waiting.append(e)
                parked = self.parked = True
                continue
            except Exception as exc:  # a bug or a bad command: retried, then dead-lettered
                b.failed.append((e, exc))
                continue
            events += [encode(ev, at=ctx.now, cmd=cmd.id) for ev in d.events]
            outbox += [(cmd.id, wire_json(m)) for m in msgs]
            # A no-op (a tick that found nothing to do) changed nothing and told no one: it is not
            # marked as done, so that a later tick of the same version can still act.
            if outcome != "noop":
                ids.append(cmd.id)
            t = d.after
            b.outcomes.append(Outcome(e, outcome, d.events, t.version if t else 0, ctx.now))
        b.after = t
        if not b.outcomes:
            b.append = None
            return
        version = b.before.version if b.before else 0
        snap = None
        every = self.settings.snapshot_every
        if t is not None and events and t.version // every > version // every:
            snap = (t.version, snapshot_json(t))
        # An append to a table that has ended (finished, cancelled: the one that ends it, and any later
        # one, a rematch's ask) drops its snapshot and lets its command ids expire a while after it
        # (service.store.event_store.DONE_AFTER_END_S).
        final = t is not None and t.status in (FINISHED, CANCELLED)
        b.append = Append(table=b.table, expected=version, command_ids=ids, events=events, outbox=outbox,
                          deadline=self.deadline(t), snapshot=snap, final=final)

    def _decide(self, t: Table | None, cmd: TableCommand, ctx: Context,
                history: list[Stored] | None) -> tuple[Decision, list[Wire], str]:
        try:
            d = decide(t, cmd, ctx)
        except Refused as r:
            return Decision(t, t), notify.refusal_messages(cmd, r, t), f"refused:{r.code}"
        if cmd.name == "replay" and d.after is not None:
            msgs = notify.replay_messages(cmd, d.after, replay_lines(history or [], d.after.id))
        else:
            msgs = notify.messages_for(d, cmd, self.secrets[0], auto_pass=self.settings.auto_pass_s > 0)
        return d, msgs, "ok" if d.events else ("reply" if msgs else "noop")

    def may_wait(self, cmd: TableCommand) -> bool:
        """Whether a command for a table that does not exist yet should wait rather than be refused.

        Commands of one table can reach different workers: a ``/join`` sent right after ``/new`` may
        be read before the worker holding the ``/new`` has appended it.  A young command waits a few
        cycles for its table to appear; an old one, or one that waited enough, is refused.
        """
        n = self.waits.get(cmd.id, 0)
        if n >= MAX_WAITS or self.clock() - cmd.at > WAIT_FOR_TABLE_S:
            self.waits.pop(cmd.id, None)
            return False
        self.waits[cmd.id] = n + 1
        return True

    def deadline(self, t: Table | None) -> float | None:
        """When the table next needs a tick (ms), or None."""
        if t is None:
            return None
        if t.status == LOBBY:
            # decide's tick closes a forgotten lobby then, or seats AI players where a rematch waits
            closes = rematch.deadline(t, self.settings.rematch_wait_s) or idle_deadline(
                t, self.settings.lobby_idle_s)
            return None if closes is None else closes * 1000
        if t.status != RUNNING:
            return None
        mover = t.to_move()
        if mover is None:
            return None
        if not t.seats[mover].human:
            return self.clock() * 1000 + BOT_GRACE_MS
        turn_ends = t.turn_since + t.turn_seconds if t.turn_seconds > 0 else None
        if only_pass(t, self.settings.auto_pass_s):
            # decide's tick passes for them then (Context.auto_pass_s), whichever platform they play on
            passes = t.turn_since + self.settings.auto_pass_s
            turn_ends = passes if turn_ends is None else min(turn_ends, passes)
        if turn_ends is None:
            turn_ends = daily_table.deadline(t)  # a daily attempt closes when its day's deal may be shown
        return None if turn_ends is None else turn_ends * 1000

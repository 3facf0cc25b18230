"""The worker: reads command streams through a consumer group, decides, compare-and-appends.

Workers are stateless (a cache of tables by version is only a shortcut) and any number can run.
A batch from XREADGROUP is grouped by table; each table's commands are decided one after the other
in memory and written in ONE compare-and-append, and the appends of all tables go in one pipeline.
A version conflict (another worker wrote first, or the cache was stale) reloads that table and
decides again; a redelivered command is recognised by its id in the script and acknowledged
without acting twice.  Commands of a worker that died are taken over with XAUTOCLAIM; a command that
keeps failing is moved to a dead-letter stream with its error.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import NoScriptError, RedisError, ResponseError

from service import bots, doorbell, logs
from service.commands import TableCommand
from service.events import (
    MatchFinished,
    MovePlayed,
    PlayerJoined,
    PlayerKicked,
    PlayerLeft,
    RoomAttached,
    TableCancelled,
    TableCreated,
    encode,
)
from service.gateway import ROOM_WAS
from service.keys import Keys
from service.leases import Leases
from service.metrics import Metrics
from service.packing import use_hiredis_packing
from service.settings import Settings
from service.store import Append, EventStore
from service.streams import StreamReader, parse
from service.tables import notify
from service.tables.decide import Context, Decision, Refused, decide
from service.tables.replay import replay_lines
from service.tables.repository import from_loaded, history, snapshot_json
from service.tables.state import RUNNING, Table
from service.timers import fire_due

# Compare-and-set of a room's index: KEYS room, ARGV the refused new table, the table it showed before.
_RESTORE_ROOM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
end
return 0
"""
# An AI seat's tick is sent at once by the worker; the deadline is the safety net if that is lost.
BOT_GRACE_MS = 2_000
#: how long the loop waits for an AI move being thought before it reads commands again (s)
PARK_WAIT_S = 0.005
MAX_CONFLICT_ROUNDS = 50
# A command for a table not created yet waits at most this long (and this many cycles) for it.
WAIT_FOR_TABLE_S = 2.0
MAX_WAITS = 50
CACHE_SIZE = 20_000


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
class _Group:
    """The commands of one table in a batch, and what deciding them produced."""

    table: str
    entries: list[Entry]
    # commands for a table that does not exist yet, put back to wait for its creation (see _may_wait)
    waiting: list[Entry] = field(default_factory=list)
    before: Table | None = None
    after: Table | None = None
    append: Append | None = None
    # (entry, outcome, events, the table's version after it)
    outcomes: list[tuple[Entry, str, list[Any], int]] = field(default_factory=list)
    failed: list[tuple[Entry, BaseException]] = field(default_factory=list)


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else v


class Worker:
    """One worker process's loop (or several in one process, for tests)."""

    def __init__(self, redis: Any, settings: Settings, *, name: str | None = None,
                 clock: Callable[[], float] = time.time, seeds: Callable[[], str] = new_seed,
                 choose_move: Callable[[dict[str, Any], str, int], str] | None = None,
                 metrics: Metrics | None = None, timers: bool = True) -> None:
        self.redis = redis
        use_hiredis_packing(redis)  # the pipelines of appends are packed in C (see service.packing)
        self.settings = settings
        self.keys = Keys(settings.buckets, settings.command_shards, settings.key_prefix)
        self.store = EventStore(redis, self.keys)
        self.name = name or f"w-{secrets.token_hex(4)}"
        self.clock, self.seeds = clock, seeds
        # By default hard AI moves are thought in another process (service.bots.Thinker), so that
        # the other tables of this worker do not wait for them.
        self.thinker = bots.Thinker() if choose_move is None else None
        self.choose_move = choose_move or (self.thinker.choose_move if self.thinker else bots.choose_move)
        self._parked = False
        self.metrics = metrics or Metrics()
        self.secrets = settings.secrets_bytes()
        self.cache: OrderedDict[str, Table] = OrderedDict()
        self.attempts: dict[str, int] = {}
        self.retry: list[Entry] = []
        self.waits: dict[str, int] = {}
        self.log = logs.get("worker").bind(worker=self.name)
        self.stop = asyncio.Event()
        self.processed = 0
        self.timers = timers
        self._counters: dict[tuple[str, str], Any] = {}
        # Acknowledgements and index writes of the last batch, sent with the next read (one round trip).
        self._later: Any = None
        self.reader = StreamReader(redis, settings.group, self.name)
        # Command shards are leased to one live worker each (see service.leases), so all the commands
        # of a table reach one worker and its cache: no conflicts, no reloads.  Until run() takes
        # leases (and in drain(), for tests and tools) a worker reads every shard.
        self.leases: Leases | None = None
        if settings.worker_leases:
            self.leases = Leases(redis, self.name, settings.command_shards, self.keys.worker_members(),
                                 self.keys.shard_lease, settings.lease_ms)
        self._leasing = False

    def shards(self) -> list[str]:
        """The command streams this worker reads now: its leased shards while it runs, else all."""
        if self._leasing and self.leases is not None:
            return [self.keys.commands(s) for s in self.leases.active]
        return self.keys.all_commands()

    def due_buckets(self) -> list[int] | None:
        """The buckets whose deadlines this worker fires (None: all): those of its leased shards,
        whose ticks it would read itself, so that workers share the timer work rather than repeat it."""
        if not (self._leasing and self.leases is not None):
            return None
        owned = set(self.leases.owned)
        return [b for b in range(self.keys.buckets) if b % self.keys.shards in owned]

    def _streams(self) -> dict[str, str]:
        return {k: ">" for k in self.shards()}

    async def rebalance(self, in_hand: list[Entry]) -> None:
        """Heartbeat and share the command shards with the other live workers (service.leases).

        A shard beyond this worker's share is released only once nothing read from it is in hand
        and its acknowledgements are sent; a shard gained first takes over what its previous owner
        left pending (a dead worker's commands), before anything new is read.
        """
        if self.leases is None:
            return
        await self.flush()
        busy = {e.stream for e in in_hand}
        # Wall-clock time, not self.clock (the game's clock, which tests fix): leases expire in Redis.
        gained, lost = await self.leases.rebalance(
            int(time.time() * 1000), busy=lambda s: self.keys.commands(s) in busy)
        self.metrics.shards.set(len(self.leases.owned))
        if gained or lost:
            self.log.info("shards", gained=gained, lost=lost, owned=sorted(self.leases.owned))
        for s in gained:
            self.retry += await self._claim_shard(self.keys.commands(s), idle_ms=0)

    # -- the loop ---------------------------------------------------------------------------------

    async def setup(self) -> None:
        """Create the consumer group on every command shard (idempotent)."""
        # What exists by now (modules, schemas, catalogues: most of the heap) lives as long as the
        # process: the cyclic GC need not scan it again and again.  Its full collections otherwise
        # cost ~15% of the worker's time and pauses of tens of ms (the p99).
        gc.freeze()
        for key in self.keys.all_commands():
            try:
                await self.redis.xgroup_create(key, self.settings.group, id="0", mkstream=True)
            except ResponseError as e:
                if "BUSYGROUP" not in str(e):
                    raise

    async def run(self) -> None:
        """Process commands until :attr:`stop` is set; the batch in hand is always finished.

        A Redis error (a restart, a failover, a deleted stream) is logged and retried after a short
        pause: the commands in flight stay pending and are redelivered or claimed, never lost.
        """
        await self.setup()
        last_claim = last_timer = last_lease = 0.0
        pause = 0.05
        entries: list[Entry] = []
        self._leasing = self.leases is not None
        while not self.stop.is_set():
            try:
                if self.leases is not None and time.monotonic() - last_lease > self.settings.lease_ms / 3000:
                    last_lease = time.monotonic()
                    await self.rebalance(entries + self.retry)
                if self.timers and time.monotonic() - last_timer > self.settings.timer_interval:
                    last_timer = time.monotonic()
                    await fire_due(self.redis, self.keys, self.clock() * 1000, buckets=self.due_buckets())
                if time.monotonic() - last_claim > max(self.settings.claim_idle_ms / 4000, 0.05):
                    last_claim = time.monotonic()
                    self.retry += await self.claim()
                entries, self.retry = entries + self.retry, []
                if not entries:
                    entries = await self.read(block=True)
                    continue
                # Decide, append, acknowledge the previous batch and read the next: one round trip.
                redo, new = await self.cycle(entries, read=True)
                entries = redo + new
                pause = 0.05
                if self._parked and self.thinker is not None:
                    self._parked = False  # a table waits for an AI move: do not spin on it
                    await self.thinker.settle(PARK_WAIT_S)
            except (RedisError, OSError) as e:
                # The batch in hand stays pending in Redis: it is read again or claimed, not lost.
                entries = []
                self.log.warning("redis_error", error=repr(e)[:200], retry_in=pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)
                with contextlib.suppress(RedisError, OSError):
                    await self.setup()  # the streams or the group may have gone (NOGROUP)
        # Stopping: what was already read is finished (no new read), then everything acknowledged,
        # then the shards are handed back at once (not after their leases expire).
        await self.process(entries + self.retry)
        if self.leases is not None:
            with contextlib.suppress(RedisError, OSError):
                await self.leases.leave()
        self._leasing = False
        if self.thinker is not None:
            self.thinker.close()  # its processes end with the loop (started again if run again)

    async def drain(self, max_batches: int = 100_000) -> int:
        """Process commands until none is waiting (tests and tools); returns how many were handled."""
        await self.setup()
        before = self.processed
        entries, self.retry = self.retry, []
        entries += await self.read(block=False)
        for _ in range(max_batches):
            if not entries:
                break
            redo, new = await self.cycle(entries, read=True)
            entries, self.retry = redo + new + self.retry, []
            if self._parked and self.thinker is not None:
                self._parked = False
                await self.thinker.settle(PARK_WAIT_S)
        self.retry = entries + self.retry  # cut short by max_batches: kept for the next call
        await self.flush()
        return self.processed - before

    async def flush(self) -> None:
        """Send the acknowledgements and index writes still held back (see :meth:`read`)."""
        pipe, self._later = self._later, None
        if pipe is not None:
            await pipe.execute()

    async def read(self, block: bool = True) -> list[Entry]:
        """The next batch of new commands for this consumer.

        The previous batch's acknowledgements, index writes and AI ticks go in the same pipeline,
        before the read: one round trip instead of two.  Until then those commands stay pending, so a
        crash in between only means a redelivery, which the append script recognises.
        """
        pipe, self._later = self._later, None
        if pipe is None:
            pipe = self.redis.pipeline(transaction=False)
        return self._entries(await self.reader.read(self._streams(), self.settings.batch,
                                                    self.settings.block_ms if block else None, pipe=pipe))

    async def claim(self) -> list[Entry]:
        """Take over commands another consumer has held for too long (it probably died)."""
        out: list[Entry] = []
        pending = 0
        for key in self.shards():
            out += await self._claim_shard(key, self.settings.claim_idle_ms)
            summary = await self.redis.xpending(key, self.settings.group)
            pending += int(summary.get("pending", 0) if isinstance(summary, dict) else summary[0])
        self.metrics.pending.set(pending)
        return out

    async def _claim_shard(self, key: str, idle_ms: int) -> list[Entry]:
        """The commands of one shard pending for at least ``idle_ms`` with any consumer, now ours."""
        out: list[Entry] = []
        start = "0-0"
        while True:
            resp = await self.redis.xautoclaim(key, self.settings.group, self.name, idle_ms, start,
                                               count=self.settings.batch)
            for mid, fields in resp[1]:
                if not fields:  # deleted from the stream meanwhile
                    await self.redis.xack(key, self.settings.group, mid)
                    continue
                out.append(Entry(key, _s(mid), fields.get(b"c") or fields.get("c")))
            start = _s(resp[0])
            if start == "0-0" or len(out) >= 10 * self.settings.batch:
                break
        if out:
            self.metrics.claimed.inc(len(out))
            self.log.warning("claimed", commands=len(out), shard=key)
            out = [e for e in out if not await self._too_often(e)]
        return out

    async def _too_often(self, e: Entry) -> bool:
        """Dead-letter a command that has been delivered too many times (it may crash workers)."""
        info = await self.redis.xpending_range(e.stream, self.settings.group, min=e.id, max=e.id, count=1)
        times = int(info[0]["times_delivered"]) if info else 0
        if times > self.settings.max_attempts:
            await self.dead_letter(e, f"delivered {times} times without completing")
            return True
        return False

    async def dead_letter(self, e: Entry, error: str) -> None:
        """Move a command to its shard's dead-letter stream, with the error, and acknowledge it."""
        shard = self.keys.all_commands().index(e.stream)
        pipe = self.redis.pipeline(transaction=False)
        pipe.xadd(self.keys.dead(shard), {"c": e.raw or b"", "entry": e.id, "error": error[:2000],
                                          "worker": self.name})
        pipe.xack(e.stream, self.settings.group, e.id)
        await pipe.execute()
        self.attempts.pop(e.id, None)
        self.metrics.dead.inc()
        self.log.error("dead_letter", entry=e.id, error=error[:200])

    # -- one batch --------------------------------------------------------------------------------

    async def process(self, entries: list[Entry], flush: bool = True) -> None:
        """Decide and append a batch of commands (retrying conflicts), then acknowledge them (with
        the next read when ``flush`` is false)."""
        for _ in range(MAX_CONFLICT_ROUNDS):
            if not entries:
                break
            entries, _ = await self.cycle(entries, read=False)
        else:
            self.retry += entries  # pathological contention: left pending, to be retried
        if flush:
            await self.flush()

    async def cycle(self, entries: list[Entry], *, read: bool) -> tuple[list[Entry], list[Entry]]:
        """One step of the loop: decide ``entries`` per table and send, in ONE pipeline, the previous
        batch's acknowledgements, this batch's compare-and-appends and (``read``) a non-blocking read
        of the next batch.  Returns the entries to decide again (version conflicts, in their order)
        and the new entries read."""
        groups: dict[str, _Group] = {}
        seen_entries: set[tuple[str, str]] = set()
        seen_ids: set[str] = set()
        twice: list[Entry] = []
        for e in entries:
            # The same entry can come back by two paths (a retry and a claim), and the same command
            # in two entries (a redelivery): within one batch each command is decided once.
            if (e.stream, e.id) in seen_entries:
                continue
            seen_entries.add((e.stream, e.id))
            if e.cmd is None:
                try:
                    e.cmd = TableCommand.model_validate_json(e.raw)
                except Exception as exc:  # not a command at all: retrying cannot help
                    await self.dead_letter(e, f"malformed command: {exc}")
                    continue
            if e.cmd.id in seen_ids:
                twice.append(e)
                continue
            seen_ids.add(e.cmd.id)
            groups.setdefault(e.cmd.table, _Group(e.cmd.table, [])).entries.append(e)
        todo = list(groups.values())
        await self._load([g for g in todo if g.table not in self.cache])
        for g in todo:
            if g.table in self.cache:
                g.before = self.cache[g.table]
            await self._plan(g)
        planned = [g for g in todo if g.append is not None]
        if planned and "append" not in self.store._sha:
            await self.store.ensure_scripts()
        pipe, self._later = self._later, None
        if pipe is None:
            pipe = self.redis.pipeline(transaction=False)
        for g in planned:
            assert g.append is not None  # planned holds the groups that have one
            self.store.queue_append(pipe, g.append)
        n_reads = self.reader.queue(pipe, self._streams(), self.settings.batch) if read else 0
        try:
            raws = await pipe.execute()
        except NoScriptError:
            # The server lost its scripts (restart, failover): nothing of this batch was appended.
            await self.store.ensure_scripts()
            return [e for g in todo for e in g.entries], []
        new = self._entries(parse(raws[len(raws) - n_reads:])) if n_reads else []
        results = [self.store.result(r) for r in raws[len(raws) - len(planned) - n_reads:][:len(planned)]]
        done: list[_Group] = [g for g in todo if g.append is None and (g.failed or g.waiting)]
        if twice:
            done.append(_Group("", [], outcomes=[(e, "duplicate", [], 0) for e in twice]))
        redo: list[Entry] = []
        for g, res in zip(planned, results, strict=True):
            if res.ok:
                done.append(g)
                continue
            if res.duplicates:
                # Already applied (a redelivery after a crash): acknowledge, do not act again.
                dups = set(res.duplicates)
                seen = [e for e in g.entries if e.cmd is not None and e.cmd.id in dups]
                done.append(_Group(g.table, [], outcomes=[(e, "duplicate", [], res.version) for e in seen]))
                redo += [e for e in g.entries if e not in seen]
            else:
                self.metrics.conflicts.inc()
                redo += g.entries
            self.cache.pop(g.table, None)
        await self._finish(done)
        return redo, new

    @staticmethod
    def _entries(read: list[tuple[str, str, Any]]) -> list[Entry]:
        return [Entry(stream, mid, fields.get(b"c") or fields.get("c")) for stream, mid, fields in read]

    async def _load(self, groups: list[_Group]) -> None:
        if not groups:
            return
        loaded = await self.store.load_many([(g.table, None) for g in groups])
        for g, ld in zip(groups, loaded, strict=True):
            g.before = from_loaded(g.table, ld)

    def _context(self) -> Context:
        s = self.settings
        # One per command: filled in directly, as a frozen dataclass's __init__ would (field by
        # field through object.__setattr__, three times slower).
        ctx = object.__new__(Context)
        ctx.__dict__.update(now=self.clock(), new_seed=self.seeds, choose_move=self.choose_move,
                            token_secrets=self.secrets, turn_seconds=s.turn_seconds,
                            timeouts_to_bot=s.timeouts_to_bot, bot_level=s.bot_level)
        return ctx

    async def _plan(self, g: _Group) -> None:
        """Decide the group's commands in order and build its one compare-and-append."""
        t = g.before
        events: list[str] = []
        outbox: list[tuple[str, str | bytes]] = []
        ids: list[str] = []
        parked = False
        for e in g.entries:
            cmd = e.cmd
            assert cmd is not None
            if parked:  # behind a command that waits for an AI move: keep the table's order
                g.waiting.append(e)
                continue
            if t is None and cmd.name not in ("new", "play") and self._may_wait(cmd):
                g.waiting.append(e)
                continue
            ctx = self._context()
            try:
                msgs: list[dict[str, Any]]
                try:
                    d = decide(t, cmd, ctx)
                    if cmd.name == "replay" and d.after is not None:
                        lines = replay_lines(await history(self.store, g.table), g.table)
                        msgs = notify.replay_messages(cmd, d.after, lines)
                    else:
                        msgs = notify.messages_for(d, cmd, self.secrets[0])
                    outcome = "ok" if d.events else ("reply" if msgs else "noop")
                except Refused as r:
                    d, msgs, outcome = Decision(t, t), notify.refusal_messages(cmd, r, t), f"refused:{r.code}"
            except bots.Thinking:  # decided again in a later cycle, once the move is ready
                g.waiting.append(e)
                parked = self._parked = True
                continue
            except Exception as exc:  # a bug or a bad command: retried, then dead-lettered
                g.failed.append((e, exc))
                continue
            events += [encode(ev, at=ctx.now, cmd=cmd.id) for ev in d.events]
            outbox += [(cmd.id, notify.wire_json(m)) for m in msgs]
            # A no-op (a tick that found nothing to do) changed nothing and told no one: it is not
            # marked as done, so that a later tick of the same version can still act.
            if outcome != "noop":
                ids.append(cmd.id)
            t = d.after
            g.outcomes.append((e, outcome, d.events, t.version if t else 0))
        g.after = t
        if not g.outcomes:
            g.append = None
            return
        version = g.before.version if g.before else 0
        snap = None
        every = self.settings.snapshot_every
        if t is not None and events and t.version // every > version // every:
            snap = (t.version, snapshot_json(t))
        g.append = Append(table=g.table, expected=version, command_ids=ids, events=events, outbox=outbox,
                          deadline=self._deadline(t), snapshot=snap)

    def _may_wait(self, cmd: TableCommand) -> bool:
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

    def _deadline(self, t: Table | None) -> float | None:
        """When the table next needs a tick (ms), or None."""
        if t is None or t.status != RUNNING:
            return None
        mover = t.to_move()
        if mover is None:
            return None
        if not t.seats[mover].human:
            return self.clock() * 1000 + BOT_GRACE_MS
        if t.turn_seconds > 0:
            return (t.turn_since + t.turn_seconds) * 1000
        return None

    async def _finish(self, groups: list[_Group]) -> None:
        """After the appends: cache, derived indexes, AI ticks, acknowledgements, logs and metrics.

        The Redis writes are queued on the pipeline that the next :meth:`read` (or :meth:`flush`) sends.
        """
        if self._later is None:
            self._later = self.redis.pipeline(transaction=False)
        pipe = self._later
        acks: dict[str, list[str]] = {}
        now = self.clock()
        for g in groups:
            if g.after is not None and g.append is not None:
                self.cache[g.table] = g.after
                self.cache.move_to_end(g.table)
            for e, outcome, events, version in g.outcomes:
                acks.setdefault(e.stream, []).append(e.id)
                self.attempts.pop(e.id, None)
                if e.cmd is not None:
                    self.waits.pop(e.cmd.id, None)
                self._index(pipe, e.cmd, g.after, events)
                if outcome.startswith("refused") and e.cmd is not None and e.cmd.name in ("new", "play"):
                    self._unindex_room(pipe, e.cmd)
                self._log(e.cmd, version, outcome, now)
            t = g.after
            if g.append is not None and t is not None and t.status == RUNNING:
                mover = t.to_move()
                if mover is not None and not t.seats[mover].human:
                    tick = TableCommand(id=f"tick:{t.id}:{t.version}", table=t.id, name="tick",
                                        args={"version": t.version}, locale=t.locale, at=now)
                    pipe.xadd(self.keys.commands_for(t.id), {"c": tick.dumps()})
            self.retry += g.waiting  # not acknowledged: decided again in the next cycle
            for e, exc in g.failed:
                n = self.attempts.get(e.id, 0) + 1
                self.attempts[e.id] = n
                if n >= self.settings.max_attempts:
                    await self.dead_letter(e, f"{type(exc).__name__}: {exc}")
                else:
                    self.log.warning("command_failed", entry=e.id, attempt=n, error=repr(exc)[:200])
                    self.retry.append(e)
        for stream, ids in acks.items():
            pipe.xack(stream, self.settings.group, *ids)
        # On a cluster, delivery processes wait on the doorbell rather than poll every outbox.
        doorbell.ring(pipe, self.keys, (self.keys.bucket(g.table) for g in groups
                                        if g.append is not None and g.append.outbox))
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    def _index(self, pipe: Any, cmd: TableCommand | None, t: Table | None, events: list[Any]) -> None:
        """Derived indexes (rebuildable from the streams): room -> table, player -> tables, stats."""
        if cmd is None or t is None:
            return
        k = self.keys
        for ev in events:
            if type(ev) is MovePlayed:  # most events, and none that an index follows
                continue
            if isinstance(ev, TableCreated | RoomAttached):
                room = ev.room
                pipe.set(k.room(room.platform, room.chat), t.id)
            elif isinstance(ev, PlayerJoined):
                pipe.sadd(k.player_tables(ev.player.platform, ev.player.user), t.id)
            elif isinstance(ev, PlayerLeft | PlayerKicked) and ev.player is not None:
                pipe.srem(k.player_tables(ev.player.platform, ev.player.user), t.id)
            elif isinstance(ev, MatchFinished | TableCancelled):
                winners = set(ev.result.get("winners", [])) if isinstance(ev, MatchFinished) else set()
                for i, seat in enumerate(t.seats):
                    if seat.player is None:
                        continue
                    pipe.srem(k.player_tables(seat.player.platform, seat.player.user), t.id)
                    if isinstance(ev, MatchFinished):
                        stats = k.player_stats(seat.player.platform, seat.player.user)
                        pipe.hincrby(stats, "played", 1)
                        if i in winners:
                            pipe.hincrby(stats, "won", 1)

    def _unindex_room(self, pipe: Any, cmd: TableCommand) -> None:
        """A refused /new or /play: the room shows again the table it showed before the gateway
        pointed it at the new id (unless something else has been pointed at it since)."""
        if cmd.room is None:
            return
        key = self.keys.room(cmd.room.platform, cmd.room.chat)
        pipe.eval(_RESTORE_ROOM, 1, key, cmd.table, str(cmd.args.get(ROOM_WAS) or ""))

    def _log(self, cmd: TableCommand | None, version: int, outcome: str, now: float) -> None:
        if cmd is None:
            return
        self.processed += 1
        key = (cmd.name, outcome.partition(":")[0])
        counter = self._counters.get(key)
        if counter is None:  # labels() is costly (a lock, a lookup): once per label pair
            counter = self._counters[key] = self.metrics.commands.labels(*key)
        counter.inc()
        took = max(now - cmd.at, 0.0) if cmd.at else 0.0
        if cmd.at:
            self.metrics.latency.observe(took)
        self.log.info("command", table=cmd.table, command=cmd.name, id=cmd.id,
                      version=version, outcome=outcome, ms=round(took * 1000, 2))

"""The worker: reads command streams through a consumer group, decides, compare-and-appends.

Workers are stateless (a cache of tables by version is only a shortcut) and any number can run.
A batch from XREADGROUP is grouped by table; each table's commands are decided one after the other
in memory and written in ONE compare-and-append, and the appends of all tables go in one pipeline.
A version conflict (another worker wrote first, or the cache was stale) reloads that table and
decides again; a redelivered command is recognised by its id in the script and acknowledged
without acting twice.  Commands of a worker that died are taken over with XAUTOCLAIM; a command that
keeps failing is moved to a dead-letter stream with its error.  After a Redis error (a restart, a lost
reply) and every :data:`REREAD_S` the worker reads its own pending commands again at once, and every
:data:`TRIM_S` it trims what it has acknowledged from its shards (:mod:`service.store.groups`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from redis.exceptions import NoScriptError, RedisError

from service.domain.commands import TableCommand
from service.domain.events import MatchFinished, Stored
from service.domain.tables.state import CANCELLED, FINISHED, RUNNING, Table
from service.ops import logs
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.platform import doorbell
from service.ratings.store import RatingKeys
from service.store.event_store import AppendResult, EventStore
from service.store.groups import Group, Pause
from service.store.keys import Keys
from service.store.leases import Leases
from service.store.packing import use_hiredis_packing
from service.store.repository import from_loaded, history
from service.store.streams import parse
from service.write import bots, finishing, projection
from service.write.gateway import ROOM_WAS, SEEN_TTL_S
from service.write.planning import Entry, Outcome, Planner, TableBatch, group_by_table, new_seed
from service.write.projection import index_ops
from service.write.timers import fire_due

__all__ = ["Entry", "Worker", "new_seed"]

# A refused /new: mark the table as refused beside the room (the gateway never points the room at a
# marked table) and, if the room shows it already, show the table it showed before.
# KEYS: room, refusal mark.  ARGV: the refused new table, the table the room showed before, mark ttl.
_RESTORE_ROOM = """
redis.call('SET', KEYS[2], 1, 'EX', ARGV[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
end
return 0
"""
# How long the loop waits for an AI move being thought before it reads commands again (s).
PARK_WAIT_S = 0.005
MAX_CONFLICT_ROUNDS = 50
CACHE_SIZE = 20_000
FINISHED_MEMORY = 10_000
# How often a worker reads again its own pending commands (a read whose reply was lost: redis-py
# resent the XREADGROUP, so those commands were delivered to this worker but never reached it).
REREAD_S = 1.0
# How often a worker trims the commands every group has acknowledged from its shards (retention).
TRIM_S = 5.0


class Worker:
    """One worker process's loop (or several in one process, for tests)."""

    def __init__(self, redis: Any, settings: Settings, *, name: str | None = None,
                 clock: Callable[[], float] = time.time, seeds: Callable[[], str] = new_seed,
                 choose_move: Callable[[dict[str, Any], str, int], str] | None = None,
                 metrics: Metrics | None = None, timers: bool = True) -> None:
        self.redis = redis
        use_hiredis_packing(redis)  # the pipelines of appends are packed in C (see service.store.packing)
        self.settings = settings
        self.keys = Keys(settings.buckets, settings.command_shards, settings.key_prefix)
        self.store = EventStore(redis, self.keys)
        self.rating_keys = RatingKeys(settings.key_prefix)
        self.name = name or f"w-{secrets.token_hex(4)}"
        self.clock = clock
        # By default hard AI moves are thought in another process (service.write.bots.Thinker), so that
        # the other tables of this worker do not wait for them.
        self.thinker = bots.Thinker() if choose_move is None else None
        chooser = choose_move or (self.thinker.choose_move if self.thinker else bots.choose_move)
        self.planner = Planner(settings, clock, seeds, chooser)
        self.metrics = metrics or Metrics()
        self.cache: OrderedDict[str, Table] = OrderedDict()
        self._finished: OrderedDict[str, None] = OrderedDict()  # see _remember_finished
        self.attempts: dict[str, int] = {}
        self.retry: list[Entry] = []
        self.log = logs.get("worker").bind(worker=self.name)
        self.stop = asyncio.Event()
        self.processed = 0
        self.timers = timers
        self.reread_s, self.trim_s = REREAD_S, TRIM_S  # (tests shorten them)
        self._counters: dict[tuple[str, str], Any] = {}
        # Acknowledgements and index writes of the last batch, sent with the next read (one round trip).
        self._later: Any = None
        self.group = Group(redis, settings.group, self.name)
        # Command shards are leased to one live worker each (see service.store.leases), so all the commands
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

    async def rebalance(self, in_hand: list[Entry]) -> None:
        """Heartbeat and share the command shards with the other live workers (service.store.leases).

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
        await self.group.create(self.keys.all_commands())

    async def run(self) -> None:
        """Process commands until :attr:`stop` is set; the batch in hand is always finished.

        A Redis error (a restart, a failover, a deleted stream) is logged and retried after a short
        pause: the commands in flight stay pending in Redis, and as soon as Redis answers again the
        worker reads its own pending commands once more (not after ``claim_idle_ms``).
        """
        await self.setup()
        last_claim = last_timer = last_lease = last_trim = 0.0
        last_reread = time.monotonic()
        pause = Pause()
        entries: list[Entry] = []
        self._leasing = self.leases is not None
        while not self.stop.is_set():
            try:
                if time.monotonic() - last_reread > self.reread_s:
                    last_reread = time.monotonic()
                    self.retry += await self.reread()
                if time.monotonic() - last_trim > self.trim_s:
                    last_trim = time.monotonic()
                    await self.group.trim(self.shards())
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
                pause.ok()
                if self.planner.parked and self.thinker is not None:
                    self.planner.parked = False  # a table waits for an AI move: do not spin on it
                    await self.thinker.settle(PARK_WAIT_S)
            except (RedisError, OSError) as e:
                # The batch in hand stays pending in Redis: it is read again at once (below), not lost.
                entries, self.retry = [], []
                wait = pause.failed()
                self.log.warning("redis_error", error=logs.error_text(e), retry_in=wait)
                await asyncio.sleep(wait)
                with contextlib.suppress(RedisError, OSError):
                    await self.setup()  # the streams or the group may have gone (NOGROUP)
                last_reread = 0.0  # what this worker held is read again as soon as Redis answers
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
            if self.planner.parked and self.thinker is not None:
                self.planner.parked = False
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
        return self._entries(await self.group.read(self.shards(), self.settings.batch,
                                                   self.settings.block_ms if block else None, pipe=pipe))

    async def reread(self) -> list[Entry]:
        """This worker's own pending commands, read again (after a lost reply or a Redis restart).

        The acknowledgements held back are sent first, so only commands not finished come back; a
        command also in hand is decided once (``cycle`` drops the second copy)."""
        await self.flush()
        got = await self.group.own_pending(self.shards(), self.settings.batch, limit=10 * self.settings.batch)
        return self._entries(got)

    async def claim(self) -> list[Entry]:
        """Take over commands another consumer has held for too long (it probably died)."""
        out: list[Entry] = []
        for key in self.shards():
            out += await self._claim_shard(key, self.settings.claim_idle_ms)
        self.metrics.pending.set(await self.group.pending(self.shards()))
        return out

    async def _claim_shard(self, key: str, idle_ms: int) -> list[Entry]:
        """The commands of one shard pending for at least ``idle_ms`` with any consumer, now ours."""
        out = self._entries(await self.group.claim(key, idle_ms, self.settings.batch,
                                                   limit=10 * self.settings.batch))
        if out:
            self.metrics.claimed.inc(len(out))
            self.log.warning("claimed", commands=len(out), shard=key)
            out = [e for e in out if not await self._too_often(e)]
        return out

    async def _too_often(self, e: Entry) -> bool:
        """Dead-letter a command that has been delivered too many times (it may crash workers)."""
        times = await self.group.times_delivered(e.stream, e.id)
        if times > self.settings.max_attempts:
            await self.dead_letter(e, f"delivered {times} times without completing")
            return True
        return False

    async def dead_letter(self, e: Entry, error: str) -> None:
        """Move a command to its shard's dead-letter stream, with the error, and acknowledge it."""
        shard = self.keys.all_commands().index(e.stream)
        pipe = self.redis.pipeline(transaction=False)
        self.group.queue_dead_letter(pipe, self.keys.dead(shard), e.stream, e.id, {
            "c": e.raw or b"", "entry": e.id, "error": error[:2000], "worker": self.name})
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
        grouped = group_by_table(entries)
        for e, exc in grouped.malformed:
            await self.dead_letter(e, f"malformed command: {exc}")
        batches = grouped.tables
        await self._load(batches)
        histories = await self._histories(batches)
        for b in batches:
            self.planner.plan(b, histories.get(b.table))
        planned = [b for b in batches if b.append is not None]
        try:
            results, new = await self._send(planned, read)
        except NoScriptError:
            # The server lost its scripts (restart, failover): nothing of this batch was appended.
            await self.store.ensure_scripts()
            return [e for b in batches for e in b.entries], []
        for b in batches:
            if b.before is not None and b.before.status == FINISHED and b.table not in self._finished:
                # A finished table this process did not finish: the worker that appended its end may
                # have died before queueing what follows (its rating, its tournament's report), and a
                # redelivered command (a stale AI tick does nothing) cannot tell.  Queued again;
                # counted once by their consumers.
                self._remember_finished(b.table)
                await finishing.requeue(self.redis, self.keys, self.rating_keys, b.before)
        done = [b for b in batches if b.append is None and (b.failed or b.waiting)]
        duplicates = [Outcome(e, "duplicate", [], 0) for e in grouped.twice]
        redo: list[Entry] = []
        for b, res in zip(planned, results, strict=True):
            if res.ok:
                done.append(b)
                continue
            if res.duplicates:
                # Already applied (a redelivery after a crash): acknowledge, do not act again.
                dups = set(res.duplicates)
                seen = [e for e in b.entries if e.cmd is not None and e.cmd.id in dups]
                duplicates += [Outcome(e, "duplicate", [], res.version) for e in seen]
                redo += [e for e in b.entries if e not in seen]
            else:
                self.metrics.conflicts.inc()
                redo += b.entries
            self.cache.pop(b.table, None)
        await self._finish(done, duplicates)
        return redo, new

    async def _send(self, planned: list[TableBatch], read: bool) -> tuple[list[AppendResult], list[Entry]]:
        """One round trip: what the last batch held back, the appends, and (``read``) the next read."""
        if planned and "append" not in self.store._sha:
            await self.store.ensure_scripts()
        pipe, self._later = self._later, None
        if pipe is None:
            pipe = self.redis.pipeline(transaction=False)
        first = len(pipe)  # the replies before this are the held-back writes'
        for b in planned:
            assert b.append is not None  # planned holds the batches that have one
            self.store.queue_append(pipe, b.append)
        if read:
            self.group.queue_read(pipe, self.shards(), self.settings.batch)
        raws = await pipe.execute()
        results = [self.store.result(r) for r in raws[first:first + len(planned)]]
        return results, self._entries(parse(raws[first + len(planned):]))

    @staticmethod
    def _entries(read: list[tuple[str, str, Any]]) -> list[Entry]:
        return [Entry(stream, mid, fields.get(b"c") or fields.get("c")) for stream, mid, fields in read]

    async def _load(self, batches: list[TableBatch]) -> None:
        """Each batch's table as it is: from the cache, else from the store (one round trip)."""
        missing = []
        for b in batches:
            if b.table in self.cache:
                b.before = self.cache[b.table]
            else:
                missing.append(b)
        if missing:
            loaded = await self.store.load_many([(b.table, None) for b in missing])
            for b, ld in zip(missing, loaded, strict=True):
                b.before = from_loaded(b.table, ld)

    async def _histories(self, batches: list[TableBatch]) -> dict[str, list[Stored]]:
        """The events of the tables a ``/replay`` of this batch shows (read before deciding, so that
        deciding does no IO)."""
        wanted = [b.table for b in batches if b.before is not None
                  and any(e.cmd is not None and e.cmd.name == "replay" for e in b.entries)]
        return {t: await history(self.store, t) for t in wanted}

    async def _finish(self, batches: list[TableBatch], duplicates: list[Outcome]) -> None:
        """After the appends: cache, derived indexes, AI ticks, acknowledgements, logs and metrics.

        The Redis writes are queued on the pipeline that the next :meth:`read` (or :meth:`flush`) sends.
        """
        if self._later is None:
            self._later = self.redis.pipeline(transaction=False)
        pipe = self._later
        acks: dict[str, list[str]] = {}
        now = self.clock()
        for o in duplicates:
            acks.setdefault(o.entry.stream, []).append(o.entry.id)
            self._log(o.entry.cmd, o.version, o.outcome, now)
        for b in batches:
            t = b.after
            if t is not None and b.append is not None:
                if t.status in (FINISHED, CANCELLED):
                    # Over: few commands will come (a /replay loads it again), so the worker's memory
                    # follows the live tables, not every table it ever served.
                    self.cache.pop(b.table, None)
                else:
                    self.cache[b.table] = t
                    self.cache.move_to_end(b.table)
            for o in b.outcomes:
                e, cmd = o.entry, o.entry.cmd
                acks.setdefault(e.stream, []).append(e.id)
                self.attempts.pop(e.id, None)
                if cmd is not None:
                    self.planner.waits.pop(cmd.id, None)
                    if t is not None:
                        projection.queue(pipe, self.keys, [op for ev in o.events for op in index_ops(t, ev)])
                        for ev in o.events:
                            if isinstance(ev, MatchFinished):  # before the ack: see service.write.finishing
                                finishing.queue(pipe, self.keys, self.rating_keys, t, ev.result, o.at)
                                self._remember_finished(t.id)
                    if o.outcome.startswith("refused") and cmd.creates_table:
                        self._unindex_room(pipe, cmd)
                self._log(cmd, o.version, o.outcome, now)
            if b.append is not None and t is not None and t.status == RUNNING:
                mover = t.to_move()
                if mover is not None and not t.seats[mover].human:
                    tick = TableCommand(id=f"tick:{t.id}:{t.version}", table=t.id, name="tick",
                                        args={"version": t.version}, locale=t.locale, at=now)
                    pipe.xadd(self.keys.commands_for(t.id), {"c": tick.dumps()})
            self.retry += b.waiting  # not acknowledged: decided again in the next cycle
            for e, exc in b.failed:
                n = self.attempts.get(e.id, 0) + 1
                self.attempts[e.id] = n
                if n >= self.settings.max_attempts:
                    await self.dead_letter(e, f"{type(exc).__name__}: {exc}")
                else:
                    self.log.warning("command_failed", entry=e.id, attempt=n, error=logs.error_text(exc))
                    self.retry.append(e)
        for stream, ids in acks.items():
            pipe.xack(stream, self.settings.group, *ids)
        # On a cluster, delivery processes wait on the doorbell rather than poll every outbox.
        doorbell.ring(pipe, self.keys, (self.keys.bucket(b.table) for b in batches
                                        if b.append is not None and b.append.outbox))
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    def _remember_finished(self, table: str) -> None:
        """A finished table whose follow-ups this process queued (see :meth:`cycle`)."""
        self._finished[table] = None
        while len(self._finished) > FINISHED_MEMORY:
            self._finished.popitem(last=False)

    def _unindex_room(self, pipe: Any, cmd: TableCommand) -> None:
        """A refused /new or /play: the room shows again the table it showed before the gateway
        pointed it at the new id (unless something else has been pointed at it since), and the
        gateway will not point it there later (see :mod:`service.write.gateway`)."""
        if cmd.room is None:
            return
        room, chat = cmd.room.platform, cmd.room.chat
        pipe.eval(_RESTORE_ROOM, 2, self.keys.room(room, chat), self.keys.room_refused(room, chat, cmd.table),
                  cmd.table, str(cmd.args.get(ROOM_WAS) or ""), SEEN_TTL_S)

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

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

With replicas (``CINQ_REDIS_MIN_REPLICAS``) the pipeline of appends ends with a wait for them
(:mod:`service.store.replicas`, in the same round trip), and a batch is acknowledged only when they
confirmed it: too few in time is a Redis error like any other, and the batch, still pending, is read
again (its appends then answer "duplicate", and are acknowledged once the replicas have them).
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

from service.domain.events import Stored
from service.domain.tables.state import Table
from service.foundation import logs
from service.foundation.metrics import Metrics
from service.foundation.settings import Settings
from service.store.event_store import AppendResult, EventStore
from service.store.groups import Group, Pause
from service.store.keys import Keys
from service.store.leases import Leases
from service.store.packing import use_hiredis_packing
from service.store.replicas import Replicas
from service.store.repository import from_loaded, history
from service.store.streams import parse
from service.tournaments.embargoes import Embargoes
from service.write import bots
from service.write.finishing import Finishing
from service.write.intake import Intake
from service.write.planning import Entry, Outcome, Planner, TableBatch, group_by_table, new_seed
from service.write.timers import fire_due

__all__ = ["Entry", "Worker", "new_seed"]

# How long the loop waits for an AI move being thought before it reads commands again (s).
PARK_WAIT_S = 0.005
MAX_CONFLICT_ROUNDS = 50
# How often a worker reads again its own pending commands (a read whose reply was lost: redis-py
# resent the XREADGROUP, so those commands were delivered to this worker but never reached it).
REREAD_S = 1.0
# How often a worker trims the commands every group has acknowledged from its shards (retention).
TRIM_S = 5.0


class Worker(Intake, Finishing):
    """One worker process's loop (or several in one process, for tests)."""

    def __init__(self, redis: Any, settings: Settings, *, name: str | None = None,
                 clock: Callable[[], float] = time.time, seeds: Callable[[], str] = new_seed,
                 choose_move: Callable[[dict[str, Any], str, int], str] | None = None,
                 metrics: Metrics | None = None, timers: bool = True, keys: Keys | None = None,
                 store: EventStore | None = None) -> None:
        self.redis = redis
        use_hiredis_packing(redis)  # the pipelines of appends are packed in C (see service.store.packing)
        self.settings = settings
        self.keys = keys or Keys.of(settings)
        self.store = store or EventStore(redis, self.keys)
        self.embargoes = Embargoes(redis, self.keys, store=self.store, clock=clock)
        self.replicas = Replicas.of(redis, settings, self.keys)
        self.name = name or f"w-{secrets.token_hex(4)}"
        self.clock = clock
        # By default hard AI moves are thought in another process (service.write.bots.Thinker), so that
        # the other tables of this worker do not wait for them.
        self.thinker = bots.Thinker() if choose_move is None else None
        chooser = choose_move or (self.thinker.choose_move if self.thinker else bots.choose_move)
        self.planner = Planner(settings, clock, seeds, chooser)
        self.metrics = metrics or Metrics()
        self.cache: OrderedDict[str, Table] = OrderedDict()
        self._finished: OrderedDict[str, None] = OrderedDict()  # see Finishing.follow_up_finished
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

    # -- the loop ---------------------------------------------------------------------------------

    async def setup(self) -> None:
        """Create the consumer group on every command shard (idempotent)."""
        await self.group.create(self.keys.all_commands())
        await self.replicas.ready()

    @staticmethod
    def freeze_heap() -> None:
        """Once, as the worker starts: what exists by now (modules, schemas, catalogues: most of the
        heap) lives as long as the process, so the cyclic GC need not scan it again and again (its
        full collections otherwise cost ~15% of the worker's time and pauses of tens of ms).  The
        garbage is collected first: a frozen cycle is never freed (freezing on every setup leaked
        every pending cycle, ~370 KB a table in ``drain``)."""
        gc.collect()
        gc.freeze()

    async def run(self) -> None:
        """Process commands until :attr:`stop` is set; the batch in hand is always finished.

        A Redis error (a restart, a failover, a deleted stream) is logged and retried after a short
        pause: the commands in flight stay pending in Redis, and as soon as Redis answers again the
        worker reads its own pending commands once more (not after ``claim_idle_ms``).
        """
        self.freeze_heap()
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
        await self.follow_up_finished(batches)
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
        if planned and not self.store.ready:
            await self.store.ensure_scripts()
        pipe, self._later = self._later, None
        if pipe is None:
            pipe = self.redis.pipeline(transaction=False)
        first = len(pipe)  # the replies before this are the held-back writes'
        for b in planned:
            assert b.append is not None  # planned holds the batches that have one
            self.store.queue_append(pipe, b.append)
        # The appends are acknowledged (by _finish, with the next round trip) only once the replicas
        # have them: the wait goes after them, in this round trip (nothing when there is no replica).
        mark = self.replicas.queue(pipe) if planned else None
        after = len(pipe)
        if read:
            self.group.queue_read(pipe, self.shards(), self.settings.batch)
        raws = await pipe.execute()
        if mark is not None:
            self.replicas.check(mark, raws)
        results = [self.store.result(r) for r in raws[first:first + len(planned)]]
        return results, self._entries(parse(raws[after:]))

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
        """The events of the tables a ``/replay`` of this batch shows, and whether their deal may be
        shown (read before deciding, so that deciding does no IO)."""
        wanted = [b for b in batches if b.before is not None
                  and any(e.cmd is not None and e.cmd.name == "replay" for e in b.entries)]
        for b in wanted:
            assert b.before is not None
            b.lifted = await self.embargoes.lifted(b.before)
        return {b.table: await history(self.store, b.table) for b in wanted}

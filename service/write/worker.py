"""The worker: reads command streams through a consumer group, decides, compare-and-appends.

It is four stages, composed (by :func:`service.ops.runtime.build`, the one place that wires them):
read (:class:`~service.write.intake.Intake`), plan (:class:`~service.write.loading.Loader` then
:class:`~service.write.planning.Planner`), append (:class:`~service.write.appending.Appender`) and
finish (:class:`~service.write.finishing.Finisher`); this module is only the loop around them.

Workers are stateless (a cache of tables by version is only a shortcut) and any number can run.
A batch from XREADGROUP is grouped by table; each table's commands are decided one after the other
in memory and written in ONE compare-and-append, and the appends go out in pipelines of a few dozen
tables while the rest of the batch is decided (:mod:`service.write.appending`).
A version conflict (another worker wrote first, or the cache was stale) reloads that table and
decides again; a redelivered command is recognised by its id in the script and acknowledged
without acting twice.  Commands of a worker that died are taken over with XAUTOCLAIM; a command that
keeps failing is moved to a dead-letter stream with its error.  After a Redis error (a restart, a lost
reply) and every :data:`REREAD_S` the worker reads its own pending commands again at once, and every
:data:`TRIM_S` it trims what it has acknowledged from each of its shards, one shard a step
(:mod:`service.store.groups`).

With replicas (``CINQ_REDIS_MIN_REPLICAS``) the pipeline of appends ends with a wait for them
(:mod:`service.store.replicas`, in the same round trip), and a batch is acknowledged only when they
confirmed it: too few in time is a Redis error like any other, and the batch, still pending, is read
again (its appends then answer "duplicate", and are acknowledged once the replicas have them).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable
from typing import Any

from redis.exceptions import NoScriptError, RedisError

from service.foundation import logs
from service.foundation.metrics import Metrics
from service.foundation.settings import Settings
from service.store.event_store import EventStore
from service.store.groups import Pause
from service.store.keys import Keys
from service.store.replicas import Replicas
from service.write import bots
from service.write.appending import Appender
from service.write.finishing import Finisher
from service.write.held import HeldBack
from service.write.intake import DeadLetters, Intake
from service.write.loading import Loader
from service.write.planning import Entry, Outcome, Planner, group_by_table, new_seed
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
# The cyclic collector's young-generation threshold in a worker (see Worker.freeze_heap).
GEN0_THRESHOLD = 10_000


class Worker:
    """One worker process's loop (or several in one process, for tests) over its four stages."""

    def __init__(self, *, name: str, redis: Any, settings: Settings, keys: Keys, store: EventStore,
                 intake: Intake, loader: Loader, planner: Planner, appender: Appender, finisher: Finisher,
                 held: HeldBack, dead: DeadLetters, replicas: Replicas, metrics: Metrics,
                 clock: Callable[[], float], thinker: bots.Thinker | None, timers: bool, log: Any) -> None:
        self.name, self.redis, self.settings, self.keys, self.store = name, redis, settings, keys, store
        self.intake, self.loader, self.planner = intake, loader, planner
        self.appender, self.finisher, self.held, self.dead = appender, finisher, held, dead
        self.replicas, self.metrics, self.clock, self.log = replicas, metrics, clock, log
        # Hard AI moves are thought in another process (service.write.bots.Thinker) unless the
        # wiring chose in the loop, so that the other tables of this worker do not wait for them.
        self.thinker = thinker
        self.timers = timers
        self.leases = intake.leases
        self.stop = asyncio.Event()
        self.retry: list[Entry] = []
        self.reread_s, self.trim_s = REREAD_S, TRIM_S  # (tests shorten them)

    @property
    def processed(self) -> int:
        """How many commands this worker has finished (done, refused or recognised as duplicates)."""
        return self.finisher.processed

    # -- the loop ---------------------------------------------------------------------------------

    async def setup(self) -> None:
        """Create the consumer group on every command shard (idempotent)."""
        await self.intake.group.create(self.keys.all_commands())
        await self.replicas.ready()

    @staticmethod
    def freeze_heap() -> None:
        """Once, as the worker starts: what exists by now (modules, schemas, catalogues: most of the
        heap) lives as long as the process, so the cyclic GC need not scan it again and again (its
        full collections otherwise cost ~15% of the worker's time and pauses of tens of ms).  The
        garbage is collected first: a frozen cycle is never freed (freezing on every setup leaked
        every pending cycle, ~370 KB a table in ``drain``).

        The young generation's threshold goes from 700 to :data:`GEN0_THRESHOLD` containers: a
        batch of 256 commands allocates thousands that die with it, and at 700 the collector ran
        ~58 times per 1,000 commands, promoting the batch's live objects so that full collections
        followed (gc 52 us of 213 us CPU per command; at 10,000: see bench/results/pipeline.txt)."""
        gc.collect()
        gc.freeze()
        gc.set_threshold(GEN0_THRESHOLD, *gc.get_threshold()[1:])

    async def run(self) -> None:
        """Process commands until :attr:`stop` is set; the batch in hand is always finished.

        A Redis error (a restart, a failover, a deleted stream) is logged and retried after a short
        pause: the commands in flight stay pending in Redis, and as soon as Redis answers again the
        worker reads its own pending commands once more (not after ``claim_idle_ms``).
        """
        self.freeze_heap()
        await self.setup()
        intake = self.intake
        last_claim = last_timer = last_lease = last_trim = 0.0
        last_reread = time.monotonic()
        pause = Pause()
        entries: list[Entry] = []
        intake.leasing = self.leases is not None
        while not self.stop.is_set():
            try:
                if time.monotonic() - last_reread > self.reread_s:
                    last_reread = time.monotonic()
                    self.retry += await intake.reread()
                # One shard a step, each shard every trim_s: all of them at once held the loop for
                # 4-5 ms (4 shards, the latency run of bench/pipeline.py), one ~1 ms.
                if time.monotonic() - last_trim > self.trim_s / max(len(intake.shards()), 1):
                    last_trim = time.monotonic()
                    await intake.trim_next()
                if self.leases is not None and time.monotonic() - last_lease > self.settings.lease_ms / 3000:
                    last_lease = time.monotonic()
                    self.retry += await intake.rebalance(entries + self.retry)
                if self.timers and time.monotonic() - last_timer > self.settings.timer_interval:
                    last_timer = time.monotonic()
                    await fire_due(self.redis, self.keys, self.clock() * 1000, buckets=intake.due_buckets())
                if time.monotonic() - last_claim > max(self.settings.claim_idle_ms / 4000, 0.05):
                    last_claim = time.monotonic()
                    self.retry += await intake.claim()
                entries, self.retry = entries + self.retry, []
                if not entries:
                    entries = await intake.read(block=True)
                    continue
                # Decide, append, acknowledge the previous batch and read the next (one round trip for
                # a batch of up to 64 tables, overlapped with the deciding for a larger one).
                redo, new = await self.cycle(entries, read=True)
                entries = redo + new
                pause.ok()
                await self._let_the_thinker_think()
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
        intake.leasing = False
        if self.thinker is not None:
            self.thinker.close()  # its processes end with the loop (started again if run again)

    async def drain(self, max_batches: int = 100_000) -> int:
        """Process commands until none is waiting (tests and tools); returns how many were handled."""
        await self.setup()
        before = self.processed
        entries, self.retry = self.retry, []
        entries += await self.intake.read(block=False)
        for _ in range(max_batches):
            if not entries:
                break
            redo, new = await self.cycle(entries, read=True)
            entries, self.retry = redo + new + self.retry, []
            await self._let_the_thinker_think()
        self.retry = entries + self.retry  # cut short by max_batches: kept for the next call
        await self.held.flush()
        return self.processed - before

    async def claim(self) -> list[Entry]:
        """Take over commands another consumer has held for too long (it probably died)."""
        return await self.intake.claim()

    async def _let_the_thinker_think(self) -> None:
        if self.planner.parked and self.thinker is not None:
            self.planner.parked = False  # a table waits for an AI move: do not spin on it
            await self.thinker.settle(PARK_WAIT_S)

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
            await self.held.flush()

    async def cycle(self, entries: list[Entry], *, read: bool) -> tuple[list[Entry], list[Entry]]:
        """One step of the loop, through the four stages: decide ``entries`` per table and send the
        previous batch's acknowledgements, this batch's compare-and-appends (in chunks, as they are
        decided) and (``read``) a non-blocking read of the next batch: one round trip for a batch of
        up to a chunk of tables.  Returns the entries to decide again
        (version conflicts, in their order) and the new entries read."""
        grouped = group_by_table(entries)
        for e, exc in grouped.malformed:
            await self.dead.move(e, f"malformed command: {exc}")
        batches = grouped.tables
        await self.loader.load(batches)
        histories = await self.loader.histories(batches)
        # Each full chunk of appends goes out while the next tables are decided (service.write.appending).
        sending = self.appender.start()
        for b in batches:
            self.planner.plan(b, histories.get(b.table))
            if b.append is not None and sending.add(b):
                await asyncio.sleep(0)  # the chunk's pipeline is written now
        planned = [b for b in batches if b.append is not None]
        try:
            results, read_back = await sending.done(self.intake.queue_read if read else None)
        except NoScriptError:
            # The server lost its scripts (restart, failover): nothing of this batch was appended.  The
            # read sent in the same round trip was answered all the same, its commands delivered here
            # and never seen: they are read again now, not at the next periodic re-read.
            await self.store.ensure_scripts()
            return [e for b in batches for e in b.entries], await self.intake.reread() if read else []
        await self.finisher.follow_up_finished(batches)
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
            self.loader.drop(b.table)
        self.retry += await self.finisher.finish(done, duplicates)
        return redo, self.intake.entries(read_back)

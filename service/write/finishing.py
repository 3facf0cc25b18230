"""The last stage of a worker, after its appends (:class:`Finisher`): the cache, the derived
indexes, the AI players' ticks, the acknowledgements, the room of a refused ``/new``, logs and
metrics — the writes queued on the held-back pipeline that the next round trip sends.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from service.domain.commands import TableCommand
from service.domain.events import MatchFinished
from service.domain.requests import Create, Press, Rematch
from service.domain.tables import rematch
from service.domain.tables.state import FINISHED, RUNNING, Table
from service.foundation.metrics import Metrics
from service.foundation.settings import Settings
from service.store import doorbell
from service.store.keys import Keys
from service.write import match_end, projection
from service.write.gateway import SEEN_TTL_S
from service.write.held import HeldBack
from service.write.intake import DeadLetters
from service.write.loading import Loader
from service.write.planning import Entry, Outcome, Planner, TableBatch
from service.write.projection import index_ops

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

FINISHED_MEMORY = 10_000


class Finisher:
    """Finishes batches after their appends (see the module docstring).  ``observers`` are told of
    every command done (command, version, outcome, time): a benchmark's latencies."""

    def __init__(self, redis: Any, settings: Settings, keys: Keys, clock: Callable[[], float],
                 planner: Planner, loader: Loader, held: HeldBack, dead: DeadLetters, metrics: Metrics,
                 log: Any) -> None:
        self.redis, self.settings, self.keys, self.clock = redis, settings, keys, clock
        self.planner, self.loader, self.held, self.dead = planner, loader, held, dead
        self.metrics, self.log = metrics, log
        self.processed = 0
        self.observers: list[Callable[[TableCommand, int, str, float], None]] = []
        self._counters: dict[tuple[str, str], Any] = {}
        self._finished: OrderedDict[str, None] = OrderedDict()  # see follow_up_finished

    async def finish(self, batches: list[TableBatch], duplicates: list[Outcome]) -> list[Entry]:
        """After the appends: cache, derived indexes, AI ticks, acknowledgements, logs and metrics;
        returns the entries to decide again (a table not created yet, a command that failed).

        The Redis writes are queued on the held-back pipeline that the next round trip sends.
        """
        pipe = self.held.pipe()
        acks: dict[str, list[str]] = {}
        retry: list[Entry] = []
        now = self.clock()
        for o in duplicates:
            acks.setdefault(o.entry.stream, []).append(o.entry.id)
            self._log(o.entry.cmd, o.version, o.outcome, now)
        for b in batches:
            t = b.after
            if t is not None and b.append is not None:
                self.loader.keep(b.table, t)
            for o in b.outcomes:
                e, cmd = o.entry, o.entry.cmd
                acks.setdefault(e.stream, []).append(e.id)
                self.dead.done(e.id)
                if cmd is not None:
                    self.planner.waits.pop(cmd.id, None)
                    if t is not None:
                        projection.queue(pipe, self.keys, [op for ev in o.events for op in index_ops(t, ev)])
                        for ev in o.events:
                            if isinstance(ev, MatchFinished):  # before the ack: see service.write.match_end
                                match_end.queue(pipe, self.keys, t, ev.result, o.at)
                                self._remember_finished(t.id)
                    if o.outcome.startswith("refused") and cmd.creates_table and not isinstance(
                            cmd.request, Rematch):
                        self._unindex_room(pipe, cmd)
                    asked = t is not None and t.rematch is not None and _asks_rematch(cmd)
                    if asked and t is not None and cmd.actor is not None and not o.outcome.startswith(
                            "refused"):
                        self._rematch(pipe, t, cmd, now)
                self._log(cmd, o.version, o.outcome, now)
            if b.append is not None and t is not None and t.status == RUNNING:
                mover = t.to_move()
                if mover is not None and not t.seats[mover].human:
                    tick = TableCommand(id=f"tick:{t.id}:{t.version}", table=t.id, name="tick",
                                        args={"version": t.version}, locale=t.locale, at=now)
                    pipe.xadd(self.keys.commands_for(t.id), {"c": tick.dumps()})
            retry += b.waiting  # not acknowledged: decided again in the next cycle
            for e, exc in b.failed:
                if not await self.dead.failed(e, exc):
                    retry.append(e)
        for stream, ids in acks.items():
            pipe.xack(stream, self.settings.group, *ids)
        # On a cluster, delivery processes wait on the doorbell rather than poll every outbox.
        doorbell.ring(pipe, self.keys, (self.keys.bucket(b.table) for b in batches
                                        if b.append is not None and b.append.outbox))
        return retry

    async def follow_up_finished(self, batches: list[TableBatch]) -> None:
        """Queue again what the end of a finished table sets off when this process did not finish it:
        the worker that appended its end may have died before queueing it (its rating, its
        tournament's report), and a redelivered command cannot tell (a stale AI tick does nothing).
        Their consumers count a match once (service.write.match_end)."""
        for b in batches:
            if b.before is not None and b.before.status == FINISHED and b.table not in self._finished:
                self._remember_finished(b.table)
                await match_end.requeue(self.redis, self.keys, b.before)

    def _remember_finished(self, table: str) -> None:
        """A finished table whose follow-ups this process queued (see :meth:`follow_up_finished`)."""
        self._finished[table] = None
        while len(self._finished) > FINISHED_MEMORY:
            self._finished.popitem(last=False)

    def _rematch(self, pipe: Any, t: Table, cmd: TableCommand, now: float) -> None:
        """Hand a finished table's rematch the ask of ``cmd``'s person: the first makes it, a later
        one seats its person (service.domain.tables.rematch).  Its id is the person's at that
        rematch, so an ask handed twice (a repeated press, a redelivery) is acted on once."""
        assert t.rematch is not None and cmd.actor is not None
        req = rematch.request(t, cmd.actor)
        ask = TableCommand(id=f"rematch:{t.rematch}:{cmd.actor.platform}:{cmd.actor.user}", table=t.rematch,
                           name="rematch", args=req.model_dump(exclude={"name"}, mode="json"),
                           actor=cmd.actor, room=cmd.room, locale=cmd.locale, at=now)
        pipe.xadd(self.keys.commands_for(t.rematch), {"c": ask.dumps()})

    def _unindex_room(self, pipe: Any, cmd: TableCommand) -> None:
        """A refused /new or /play: the room shows again the table it showed before the gateway
        pointed it at the new id (unless something else has been pointed at it since), and the
        gateway will not point it there later (see :mod:`service.write.gateway`)."""
        if cmd.room is None:
            return
        room, chat = cmd.room.platform, cmd.room.chat
        pipe.eval(_RESTORE_ROOM, 2, self.keys.room(room, chat), self.keys.room_refused(room, chat, cmd.table),
                  cmd.table, (req.room_was if isinstance(req := cmd.request, Create) else None) or "",
                  SEEN_TTL_S)

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
        for observe in self.observers:
            observe(cmd, version, outcome, now)
        self.log.info("command", table=cmd.table, command=cmd.name, id=cmd.id,
                      version=version, outcome=outcome, ms=round(took * 1000, 2))


def _asks_rematch(cmd: TableCommand) -> bool:
    """Whether ``cmd`` is a person's "Play again" on a finished table (its seat's rematch action)."""
    req = cmd.request
    return isinstance(req, Press) and req.move == rematch.REMATCH

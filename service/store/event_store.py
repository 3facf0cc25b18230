"""The event store: one Redis stream per aggregate, compare-and-append in one Lua script.

The store knows nothing about games: events and outbox messages are JSON strings here.  Folding them
into a table is :mod:`service.store.repository`'s job.  Every script call passes keys of a single
hash tag (the aggregate's bucket), so the same code runs on Redis Cluster.  Tables and tournaments
are both stored this way: ``EventStore(redis, keys)`` holds tables, ``EventStore(redis, keys,
TOURNAMENTS)`` tournaments (their own streams, the same outboxes and script).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from redis.exceptions import NoScriptError

from service.store.keys import Keys
from service.store.streams import is_cluster

OK, CONFLICT, DUPLICATE = 1, 0, 2
# A table's command-id set outlives its last append by this long (s): a command of it redelivered
# after a crash or a failover is still recognised (redeliveries come within claim_idle_ms, 30 s by
# default, and a few retries), and then the set, 72 B a command, is gone (issue 33).
DONE_AFTER_END_S = 3600


def _script(name: str) -> str:
    return resources.files("service.store.lua").joinpath(name).read_text()


# Tables whose append keys are kept named (see EventStore._append_keys): at 512 a worker serving
# 1,000 live tables (bench/pipeline.py) cleared it every 512 appends and named every key again.
KEYS_CACHE = 8192
TABLES, TOURNAMENTS = "tables", "tournaments"  # the aggregates stored


@dataclass(frozen=True)
class Append:
    """One compare-and-append: what a worker wants written for one table, atomically.

    ``deadline`` is the next due time in ms (``None`` removes the table's deadline, ``...`` keeps
    it); ``snapshot`` is ``(version, json)`` when one is due.  ``final``: the append ends the
    aggregate (a match finished, a table cancelled): its snapshot is deleted (the events suffice to
    load what never changes again) and its command-id set expires :data:`DONE_AFTER_END_S` later.
    """

    table: str
    expected: int
    command_ids: list[str]
    events: list[str] = field(default_factory=list)
    outbox: list[tuple[str, str | bytes]] = field(default_factory=list)  # (command id, message JSON)
    deadline: Any = ...
    snapshot: tuple[int, str] | None = None
    final: bool = False


@dataclass(frozen=True)
class AppendResult:
    """The answer of the script: ``status`` is OK, CONFLICT or DUPLICATE."""

    status: int
    version: int
    duplicates: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the events were appended."""
        return self.status == OK


@dataclass(frozen=True)
class Loaded:
    """A table as stored: the snapshot (if any) at ``base`` and the events after it."""

    base: int
    snapshot: str | None
    events: list[str]

    @property
    def version(self) -> int:
        """The table's version: the number of events in its stream."""
        return self.base + len(self.events)


class EventStore:
    """The Redis event store.  ``redis`` is a ``redis.asyncio`` client (real or fakeredis)."""

    def __init__(self, redis: Any, keys: Keys, aggregate: str = TABLES) -> None:
        self.redis = redis
        self.keys = keys
        # The keys of one aggregate's own stream, snapshot and done set.
        self._events: Callable[[str], str]
        self._snap: Callable[[str], str]
        self._done: Callable[[str], str]
        if aggregate == TABLES:
            self._events, self._snap, self._done = keys.events, keys.snap, keys.done
        elif aggregate == TOURNAMENTS:
            self._events, self._snap = keys.tournament_events, keys.tournament_snap
            self._done = keys.tournament_done
        else:
            raise ValueError(f"no such aggregate: {aggregate}")
        self._src = {"append": _script("append.lua"), "load": _script("load.lua")}
        self._sha: dict[str, str] = {}
        self._keys_of: dict[str, tuple[str, ...]] = {}  # table -> its append keys (see _append_keys)

    async def _ensure_scripts(self) -> None:
        for name, src in self._src.items():
            if is_cluster(self.redis):
                # Redis 7 holds a script with a shebang to its declared keys' slot: an access to any
                # other key fails instead of silently working on one node and breaking on another.
                src = "#!lua\n" + src
            self._sha[name] = await self.redis.script_load(src)

    def append_keys(self, table: str) -> list[str]:
        """The keys the append script touches for ``table`` (one hash tag)."""
        return [self._events(table), self._snap(table), self._done(table), self.keys.outbox_for(table),
                self.keys.due_for(table)]

    def _append_keys(self, table: str) -> tuple[str, ...]:
        # The worker appends to the same tables again and again: their keys are named once.  Bounded
        # by about the live tables a worker holds: every table it ever served would grow its memory.
        keys = self._keys_of.get(table)
        if keys is None:
            if len(self._keys_of) >= KEYS_CACHE:
                self._keys_of.clear()
            keys = self._keys_of[table] = tuple(self.append_keys(table))
        return keys

    def load_keys(self, table: str) -> list[str]:
        """The keys the load script touches for ``table`` (one hash tag)."""
        return [self._events(table), self._snap(table)]

    def _append_args(self, a: Append) -> list[Any]:
        if a.deadline is ...:
            due = ""
        elif a.deadline is None:
            due = "-"
        else:
            due = str(int(a.deadline))
        snap_v, snap_s = (str(a.snapshot[0]), a.snapshot[1]) if a.snapshot else ("", "")
        final = DONE_AFTER_END_S if a.final else 0
        args: list[Any] = [a.expected, a.table, due, snap_v, snap_s, final, len(a.command_ids)]
        args += a.command_ids
        args.append(len(a.events))
        args += a.events
        args.append(len(a.outbox))
        for cid, msg in a.outbox:
            args += [cid, msg]
        return args

    @staticmethod
    def _result(raw: Any) -> AppendResult:
        status, version = int(raw[0]), int(raw[1])
        dups = tuple(d.decode() if isinstance(d, bytes) else d for d in raw[2]) if status == DUPLICATE else ()
        return AppendResult(status, version, dups)

    async def ensure_scripts(self) -> None:
        """Load the scripts into the server's cache (again, after a restart or SCRIPT FLUSH)."""
        await self._ensure_scripts()

    @property
    def ready(self) -> bool:
        """Whether :meth:`ensure_scripts` has loaded the scripts (so appends may be queued)."""
        return "append" in self._sha

    def sha(self, script: str) -> str:
        """The SHA1 a loaded script (``append``, ``load``) is called by."""
        return self._sha[script]

    def queue_append(self, pipe: Any, a: Append) -> None:
        """Add one compare-and-append to a caller's pipeline (see :meth:`result`); the scripts must
        be loaded (:meth:`ensure_scripts`)."""
        keys = self._append_keys(a.table)
        pipe.execute_command("EVALSHA", self._sha["append"], len(keys), *keys, *self._append_args(a))

    def result(self, raw: Any) -> AppendResult:
        """The result of a queued append, from its raw reply."""
        return self._result(raw)

    async def _run_many(self, script: str, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        """Run ``script`` once per ``(keys, args)`` in one pipeline.  When the server lost its script
        cache (a restart, a failover) the scripts are loaded and the pipeline runs again, which is
        safe because a script that did not run changed nothing."""
        if script not in self._sha:
            await self._ensure_scripts()
        for attempt in (0, 1):
            pipe = self.redis.pipeline(transaction=False)
            for keys, args in calls:
                pipe.execute_command("EVALSHA", self._sha[script], len(keys), *keys, *args)
            try:
                return list(await pipe.execute())
            except NoScriptError:
                if attempt:
                    raise
                await self._ensure_scripts()
        raise AssertionError("unreachable")

    async def append_many(self, appends: list[Append]) -> list[AppendResult]:
        """Run several compare-and-appends in one pipeline (each atomic on its own table)."""
        if not appends:
            return []
        calls = [(self.append_keys(a.table), self._append_args(a)) for a in appends]
        raws = await self._run_many("append", calls)
        return [self._result(r) for r in raws]

    async def append(self, a: Append) -> AppendResult:
        """One compare-and-append."""
        return (await self.append_many([a]))[0]

    async def load(self, table: str, known: int | None = None) -> Loaded:
        """The latest snapshot and the events after it; with ``known``, only the events after it."""
        return (await self.load_many([(table, known)]))[0]

    async def load_many(self, tables: list[tuple[str, int | None]]) -> list[Loaded]:
        """Load several tables in one pipeline: ``(table id, known version or None)`` each."""
        if not tables:
            return []
        raws = await self._run_many("load", [(self.load_keys(table), ["" if known is None else known])
                                              for table, known in tables])
        return [Loaded(int(base), snap.decode() if isinstance(snap, bytes) else snap,
                       [_field(fields, b"e") for _, fields in entries]) for base, snap, entries in raws]

    async def events(self, table: str) -> list[str]:
        """Every event of a table, from the first (for replays and audits)."""
        entries = await self.redis.xrange(self._events(table))
        return [_decode(fields[b"e"] if b"e" in fields else fields["e"]) for _, fields in entries]

    async def version(self, table: str) -> int:
        """The table's current version (its stream is never trimmed, so its length)."""
        return int(await self.redis.xlen(self._events(table)))

    async def applied(self, table: str, command_id: str) -> bool:
        """Whether a command was applied (or refused) already: its id is in the done set."""
        return bool(await self.redis.sismember(self._done(table), command_id))


def _decode(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else v


def _field(fields: Any, name: bytes) -> str:
    # Script replies come back as a flat [name, value, ...] list.
    for i in range(0, len(fields), 2):
        if fields[i] == name or fields[i] == name.decode():
            return _decode(fields[i + 1])
    raise KeyError(name)


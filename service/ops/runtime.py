"""Wiring (the one bootstrap): a Redis client from the settings, and the roles of a process.

:func:`build` makes the key layout, the event store and the gateway once; the worker gets them, and
the tournament director, the ratings projector and the adapters run under ``cinq serve`` take the
same keys (and gateway) from the :class:`Runtime`
(leases are not shared: each is one consumer's claim, the worker's on command shards, a delivery's
on outbox partitions).  :func:`build_worker` composes a worker of its four stages (read, plan,
append, finish): the only place that does, used by :func:`build` and by the tests' harness."""

from __future__ import annotations

import secrets
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.foundation import logs
from service.foundation.metrics import Metrics
from service.foundation.settings import Settings
from service.ops.health import Ops
from service.platform.watch import Watch
from service.store.connection import cluster_client, sentinel_client, unsafe
from service.store.event_store import EventStore
from service.store.groups import Group
from service.store.keys import Keys
from service.store.leases import Leases
from service.store.packing import use_hiredis_packing
from service.store.pool import BoundedSentinelPool, bounded_client, pool_args
from service.store.replicas import Replicas
from service.tournaments.embargoes import Embargoes
from service.write import bots
from service.write.appending import Appender
from service.write.finishing import Finisher
from service.write.gateway import Gateway
from service.write.held import HeldBack
from service.write.intake import DeadLetters, Intake
from service.write.loading import Loader
from service.write.planning import Planner, new_seed
from service.write.worker import Worker

Chooser = Callable[[dict[str, Any], str, int], str]


def connect(settings: Settings) -> tuple[Any, bool]:
    """A ``redis.asyncio`` client for ``REDIS_URL`` (a cluster client with ``CINQ_REDIS_CLUSTER``; the
    primary the sentinels name with ``CINQ_REDIS_SENTINELS``) on a bounded pool
    (:mod:`service.store.pool`), or an embedded fakeredis (and True) without it.  A configuration
    that could lose an acknowledged move stops the process with one line
    (:func:`service.store.connection.unsafe`)."""
    problem = unsafe(settings)
    if problem is not None:
        raise SystemExit(f"cinq: refusing to start: {problem}")
    if settings.redis_url or settings.redis_sentinels:
        settings.require_safe()  # a shared store: secrets nobody knows (tokens, daily deals)
        if settings.redis_sentinels:
            return sentinel_client(settings, connection_pool_class=BoundedSentinelPool,
                                   **pool_args(settings)), False
        assert settings.redis_url is not None
        if settings.redis_cluster:  # per node; redis-py's cluster refuses at once past the bound
            return cluster_client(settings.redis_url, max_connections=settings.redis_max_connections), False
        return bounded_client(settings.redis_url, settings), False
    import fakeredis

    warnings.warn("REDIS_URL is not set: using an embedded in-memory store (fakeredis); nothing is kept",
                  stacklevel=2)
    return fakeredis.FakeAsyncRedis(), True


@dataclass
class Runtime:
    """One process's service: its Redis client, key layout, event store, gateway, worker and metrics."""

    settings: Settings
    redis: Any
    embedded: bool
    gateway: Gateway
    worker: Worker
    metrics: Metrics
    keys: Keys
    store: EventStore
    # The process's operations listener (/readyz, /metrics: service.ops.health): each role run on this
    # runtime adds its part, and whoever runs the process starts it on CINQ_HTTP_HOST:CINQ_HTTP_PORT.
    ops: Ops

    def another_worker(self, **args: Any) -> Worker:
        """One more worker on this runtime's client, keys and store (tests run several in a process),
        with metrics of its own; ``args`` as :func:`build_worker`'s."""
        return build_worker(self.redis, self.settings, self.keys, self.store, Metrics(), **args)

    def watch(self, **args: Any) -> Watch:
        """A watch over the outbox (the web table's, :class:`~service.platform.watch.Watch`) on this
        runtime's client, keys and store; ``args`` as its constructor's (its bounds)."""
        return Watch(self.redis, self.settings, self.keys, self.store, **args)


def build(settings: Settings | None = None, redis: Any = None, *, clock: Callable[[], float] = time.time,
          bot_username: str | None = None, **worker_args: Any) -> Runtime:
    """Wire a runtime from settings (and an existing client, if given); ``worker_args`` as
    :func:`build_worker`'s."""
    settings = settings or Settings()
    embedded = False
    if redis is None:
        redis, embedded = connect(settings)
    metrics = Metrics()
    keys = Keys.of(settings)  # one key layout, handed to every role of the process
    store = EventStore(redis, keys)
    gateway = Gateway(redis, settings, keys, clock=clock, bot_username=bot_username)
    worker = build_worker(redis, settings, keys, store, metrics, clock=clock, **worker_args)
    return Runtime(settings, redis, embedded, gateway, worker, metrics, keys, store, Ops(redis, keys.probe))


@dataclass(frozen=True)
class Stored:
    """What an operator command reads and writes with (``cinq verify``, ``replay``, ``reindex``,
    ``ratings rebuild``, ``tables``...): a client, the key layout and the event store; no gateway, no
    worker."""

    redis: Any
    keys: Keys
    store: EventStore


def stored(settings: Settings) -> Stored:
    """Connect as :func:`connect` does, with the settings' one key layout."""
    redis, _ = connect(settings)
    keys = Keys.of(settings)
    return Stored(redis, keys, EventStore(redis, keys))


def worker_for(redis: Any, settings: Settings, **args: Any) -> Worker:
    """A worker alone on ``redis`` (a benchmark's, a test's): :func:`build_worker` with the settings'
    key layout, an event store and metrics of its own."""
    keys = Keys.of(settings)
    return build_worker(redis, settings, keys, EventStore(redis, keys), Metrics(), **args)


def build_worker(redis: Any, settings: Settings, keys: Keys, store: EventStore, metrics: Metrics, *,
                 name: str | None = None, clock: Callable[[], float] = time.time,
                 seeds: Callable[[], str] = new_seed, choose_move: Chooser | None = None,
                 timers: bool = True) -> Worker:
    """A worker composed of its stages: read (:class:`Intake`), plan (:class:`Loader`,
    :class:`Planner`), append (:class:`Appender`), finish (:class:`Finisher`), with what they share
    (the held-back writes, the dead letters).  Without ``choose_move`` hard AI moves are thought in
    another process (:class:`~service.write.bots.Thinker`)."""
    use_hiredis_packing(redis)  # the pipelines of appends are packed in C (see service.store.packing)
    name = name or f"w-{secrets.token_hex(4)}"
    log = logs.get("worker").bind(worker=name)
    thinker = bots.Thinker() if choose_move is None else None
    chooser = choose_move if choose_move is not None else thinker.choose_move  # type: ignore[union-attr]
    group = Group(redis, settings.group, name)
    # Command shards are leased to one live worker each (see service.store.leases), so all the commands
    # of a table reach one worker and its cache: no conflicts, no reloads.
    leases = Leases(redis, name, settings.command_shards, keys.worker_members(), keys.shard_lease,
                    settings.lease_ms) if settings.worker_leases else None
    held = HeldBack(redis)
    dead = DeadLetters(redis, keys, group, name, metrics, log, settings.max_attempts)
    replicas = Replicas.of(redis, settings, keys)
    planner = Planner(settings, clock, seeds, chooser)
    loader = Loader(store, Embargoes(redis, keys, store=store, clock=clock))
    return Worker(name=name, redis=redis, settings=settings, keys=keys, store=store,
                  intake=Intake(settings, keys, group, leases, held, dead, metrics, log), loader=loader,
                  planner=planner, appender=Appender(store, replicas, held),
                  finisher=Finisher(redis, settings, keys, clock, planner, loader, held, dead, metrics, log),
                  held=held, dead=dead, replicas=replicas, metrics=metrics, clock=clock, thinker=thinker,
                  timers=timers, log=log)

"""Wiring (the one bootstrap): a Redis client from the settings, and the roles of a process.

:func:`build` makes the key layout, the event store and the gateway once; the worker gets them, and
the tournament director, the ratings projector and the adapters run under ``cinq serve`` take the
same keys (and gateway) from the :class:`Runtime`
(leases are not shared: each is one consumer's claim, the worker's on command shards, a delivery's
on outbox partitions)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from service.foundation.metrics import Metrics
from service.foundation.settings import Settings
from service.store.connection import sentinel_client, unsafe
from service.store.event_store import EventStore
from service.store.keys import Keys
from service.write.gateway import Gateway
from service.write.worker import Worker


def connect(settings: Settings) -> tuple[Any, bool]:
    """A ``redis.asyncio`` client for ``REDIS_URL`` (a cluster client with ``CINQ_REDIS_CLUSTER``; the
    primary the sentinels name with ``CINQ_REDIS_SENTINELS``), or an embedded fakeredis (and True)
    without it.  A configuration that could lose an acknowledged move stops the process with one line
    (:func:`service.store.connection.unsafe`)."""
    problem = unsafe(settings)
    if problem is not None:
        raise SystemExit(f"cinq: refusing to start: {problem}")
    if settings.redis_url or settings.redis_sentinels:
        import redis.asyncio as redis

        settings.require_safe()  # a shared store: tokens must be signed with a secret nobody knows
        if settings.redis_sentinels:
            return sentinel_client(settings), False
        assert settings.redis_url is not None
        if settings.redis_cluster:
            from redis.asyncio.cluster import RedisCluster

            return RedisCluster.from_url(settings.redis_url), False
        return redis.from_url(settings.redis_url), False
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


def build(settings: Settings | None = None, redis: Any = None, **worker_args: Any) -> Runtime:
    """Wire a runtime from settings (and an existing client, if given)."""
    settings = settings or Settings()
    embedded = False
    if redis is None:
        redis, embedded = connect(settings)
    metrics = Metrics()
    keys = Keys.of(settings)  # one key layout, handed to every role of the process
    store = EventStore(redis, keys)
    worker = Worker(redis, settings, metrics=metrics, keys=keys, store=store, **worker_args)
    gateway = Gateway(redis, settings, keys=keys)
    return Runtime(settings, redis, embedded, gateway, worker, metrics, keys, store)

"""The ``WAITAOF`` path of the replica wait (issue 36), on a server that has it: Valkey 8 (a fork of
Redis 7.2.4; Debian bookworm's Redis 7.0 has no ``WAITAOF``), a real primary and a real replica.

With ``WAITAOF`` an acknowledgement means the write is *fsynced* on the replica, not only received:
a replica that keeps no AOF never counts, where ``WAIT`` would count it.  The gateway and the worker
run on it as on Redis: a command is acknowledged, applied once, and on the replica's disk.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from service.domain.events import envelope
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.foundation.settings import Settings
from service.ops.runtime import worker_for
from service.store.keys import Keys
from service.store.replicas import NotReplicated, Replicas
from service.write.gateway import Gateway
from tests.faults.redis_server import waitaof_binary
from tests.faults.replicated import Replicated
from tests.service.support import seeds, settings

ANA = Player(platform="tg", user="1", name="Ana")
HOME = Room(platform="tg", chat="1", kind="private")


def _pair(base: Path, **kw: object) -> Replicated:
    binary, argv0 = waitaof_binary()
    return Replicated(base, replicas=1, sentinels=0, binary=binary, argv0=argv0, **kw).start()  # type: ignore[arg-type]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Replicated]:
    """A Valkey primary and one replica, both with AOF (``appendfsync always``)."""
    r = _pair(tmp_path)
    try:
        yield r
    finally:
        r.stop()


@pytest.fixture
async def primary(pair: Replicated) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(pair.primary.url)
    try:
        yield client
    finally:
        await client.aclose()


async def _calls(client: aioredis.Redis, command: str) -> int:
    stats = await client.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


def replicated(**kw: object) -> Settings:
    return settings(redis_min_replicas=1, **kw)


async def test_waitaof_is_what_is_sent_where_the_server_has_it(primary):
    info = await primary.info("server")
    assert tuple(int(x) for x in info["redis_version"].split(".")[:2]) >= (7, 2), info
    replicas = Replicas(primary, Keys(), needed=1, timeout_ms=5000)
    await replicas.ready()
    assert replicas.describe() == "WAITAOF for 1 replica(s), at most 5000 ms"
    await replicas.confirm()
    assert await _calls(primary, "waitaof") == 1 and await _calls(primary, "wait") == 0
    # CINQ_REDIS_WAITAOF=false: plain WAIT, even here.
    plain = Replicas(primary, Keys(), needed=1, timeout_ms=5000, aof=False)
    await plain.ready()
    await plain.confirm()
    assert plain.describe().startswith("WAIT for 1") and await _calls(primary, "wait") == 1


async def test_a_replica_that_keeps_no_aof_never_confirms_a_write(tmp_path):
    # WAIT counts a replica that received the write; WAITAOF only one that fsynced it.
    pair = _pair(tmp_path, replica_extra=("--appendonly", "no"))
    primary = aioredis.from_url(pair.primary.url)
    try:
        for aof in (True, False):
            # WAITAOF waits its whole bound in vain (300 ms); WAIT returns as soon as the replica has it.
            bound = 300 if aof else 30_000
            s = replicated(redis_replica_timeout_ms=bound, redis_waitaof=aof)
            gateway = Gateway(primary, s, Keys.of(s))
            submit = gateway.submit(Input(ANA, HOME, command_id=f"c-{aof}"), "/play cinquillo")
            if aof:
                with pytest.raises(NotReplicated):
                    await submit
            else:
                await submit  # received by the replica: enough for WAIT
    finally:
        await primary.aclose()
        pair.stop()


async def test_a_command_is_acknowledged_only_once_fsynced_on_the_replica_and_applied_once(pair, primary):
    s = replicated(redis_replica_timeout_ms=30_000)
    gateway = Gateway(primary, s, Keys.of(s))
    proc = pair.replicas[0].proc
    assert proc is not None
    proc.send_signal(signal.SIGSTOP)
    try:
        submit = asyncio.create_task(gateway.submit(Input(ANA, HOME, command_id="c1"), "/play cinquillo"))
        await asyncio.sleep(0.3)
        assert not submit.done()  # on the primary, not on the replica's disk: no acknowledgement yet
    finally:
        proc.send_signal(signal.SIGCONT)
    await submit
    table = gateway.table_for("c1")
    worker = worker_for(primary, s, name="w1", seeds=seeds(), timers=False)
    replica = aioredis.from_url(pair.replicas[0].url)
    try:
        await worker.setup()
        await worker.drain()
        stream = gateway.keys.commands_for(table)
        assert (await primary.xpending(stream, s.group))["pending"] == 0
        on_primary = await primary.xrange(gateway.keys.events(table))
        on_replica = await replica.xrange(gateway.keys.events(table))
        assert on_replica[:len(on_primary)] == on_primary
        assert sum(1 for _, f in on_primary if envelope(json.loads(f[b"e"]))["type"] == "TableCreated") == 1
        assert await _calls(primary, "waitaof") >= 2 and await _calls(primary, "wait") == 0
    finally:
        await replica.aclose()
        if worker.thinker is not None:
            worker.thinker.close()
